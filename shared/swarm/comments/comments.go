// Package comments is the Swarm review comments channel and its task
// changes (docs/swarm-comments.md): Channel posts a comment (send), finds a
// create whose answer was lost by the marker the comment carries (lookup:
// one listing of the review's comments per attempt), and tells a create
// that may have landed from one that certainly did not (classify); Tasks
// sets a resolved finding's task to addressed. Both are delivery.Channels
// the notify stage runs through the outbox; the client underneath is
// package swarm's.
package comments

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/swarm"
)

// ErrRefused marks a comment or task change Swarm refused for good (now,
// or earlier: its row failed): recorded on its row and in the job's
// history, it never fails the job.
var ErrRefused = errors.New("refused for good")

// Refused wraps err in ErrRefused.
func Refused(err error) error { return fmt.Errorf("%w: %w", ErrRefused, err) }

// API is what the channel uses of the Swarm client: send (Create, whose
// errors carry the failure class and swarm.MaybeCreated) and lookup
// (MarkedAfter: the service's marked comments on a review stored after a
// known comment id, 0 for all, every page read).
type API interface {
	Create(ctx context.Context, n swarm.NewComment) (swarm.Comment, error)
	MarkedAfter(ctx context.Context, review, after int64) (map[swarm.Marker]swarm.Comment, error)
}

// Channel is the comments channel for one attempt on one review. It knows
// the highest comment id known to exist (created or found this attempt, or
// named by an earlier version's rows), which bounds the lookup of any
// create sent after it, and keeps the attempt's listing with the id it
// started after: one listing per attempt settles every in-flight row.
type Channel struct {
	api    API
	known  int64
	from   int64
	marked map[swarm.Marker]swarm.Comment // nil: not listed yet
	// unanchored are the comments meant inline that went on the review as
	// a whole this attempt, with why.
	unanchored map[swarm.Marker]string
}

// Unanchored says whether the comment with marker m was meant inline but
// was posted (or found) on the review as a whole this attempt, and why.
func (c *Channel) Unanchored(m swarm.Marker) (string, bool) {
	r, ok := c.unanchored[m]
	return r, ok
}

func (c *Channel) unanchor(m swarm.Marker, reason string) {
	if c.unanchored == nil {
		c.unanchored = map[swarm.Marker]string{}
	}
	c.unanchored[m] = reason
}

// contextReason is the fixed reason a context refusal carries.
func contextReason(err error) string {
	if errors.Is(err, swarm.ErrVersionNotFound) {
		return "the review has no such version"
	}
	return "the file or line is not in the version's change"
}

// New returns the channel for one attempt.
func New(api API) *Channel { return &Channel{api: api} }

// Saw records that comment id exists: later creates have higher ids.
func (c *Channel) Saw(id int64) { c.known = max(c.known, id) }

// Known is the highest comment id known to exist; a row begun now records
// it as the id its lookup may start after.
func (c *Channel) Known() int64 { return c.known }

// MarkedSince returns the service's marked comments on review stored after
// comment id from (0: every comment), reusing the attempt's listing when it
// started no later.
func (c *Channel) MarkedSince(ctx context.Context, review, from int64) (map[swarm.Marker]swarm.Comment, error) {
	if c.marked != nil && c.from <= from {
		return c.marked, nil
	}
	from = max(from, 0)
	m, err := c.api.MarkedAfter(ctx, review, from)
	if err != nil {
		return nil, err
	}
	c.from, c.marked = from, m
	return m, nil
}

// Send posts n and returns its comment id. When Swarm refuses n's context
// (swarm.ErrContextRefused: nothing was stored) and n has an Unanchored
// body, that is posted on the review as a whole under the same marker, so
// a lookup finds whichever landed. A refusal that is not a create that
// may have landed and is not retryable (401/403) is wrapped in ErrRefused:
// its row is failed, never retried.
func (c *Channel) Send(ctx context.Context, n swarm.NewComment) (string, error) {
	cm, err := c.api.Create(ctx, n)
	if errors.Is(err, swarm.ErrContextRefused) && n.Context != nil && n.Unanchored != "" {
		c.unanchor(n.Marker, contextReason(err))
		u := n
		u.Context, u.Body, u.Unanchored = nil, n.Unanchored, ""
		cm, err = c.api.Create(ctx, u)
	}
	if err == nil {
		c.Saw(cm.ID)
	}
	if err != nil && !swarm.MaybeCreated(err) && !failure.Classify(err).Retryable() {
		err = Refused(err)
	}
	return strconv.FormatInt(cm.ID, 10), err
}

// Lookup finds an earlier create of n by its marker among the review's
// comments stored after comment id after (the row's lookup_after). A
// review that is gone (NOT_FOUND) has nothing to settle: ErrRefused.
func (c *Channel) Lookup(ctx context.Context, n swarm.NewComment, after int64) (string, bool, error) {
	m, err := c.MarkedSince(ctx, n.Review, after)
	if failure.Classify(err) == failure.NotFound {
		err = Refused(err)
	}
	if err != nil {
		return "", false, err
	}
	cm, ok := m[n.Marker]
	if ok {
		c.Saw(cm.ID)
	}
	if ok && n.Context != nil && cm.Context == nil {
		c.unanchor(n.Marker, "found on the review as a whole: its context was refused in an earlier attempt")
	}
	return strconv.FormatInt(cm.ID, 10), ok, nil
}

// Classify says a create may have landed when swarm.MaybeCreated says so.
func (c *Channel) Classify(err error) delivery.Verdict {
	return delivery.Verdict{Class: failure.Classify(err), MaybeSent: swarm.MaybeCreated(err)}
}
