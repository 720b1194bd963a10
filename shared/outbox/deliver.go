package outbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
)

// The one delivery protocol, run for every channel (docs/swarm-comments.md,
// "Comments are a channel of the one outbox"): begin the row (skipping a
// sent one, settling one in flight by the channel's Lookup), send through
// the channel, then mark the row sent. The channel (a delivery.Channel)
// supplies send, lookup and classification; the row operations are this
// package's, bound to the delivery's identity (a Record). A delivery goes
// caller → Deliver → channel, row, and back to the caller, never up.

// Record is one delivery's row operations, bound to its identity: an
// e-mail's delivery.Key (ForKey) or a channel item (ForItem).
type Record interface {
	Begin(ctx context.Context, now time.Time) (*Send, error)
	MarkSent(ctx context.Context, evidence string, now time.Time) error
	Release(ctx context.Context, sendToken string, class failure.Class, msg string, permanent bool, now time.Time) error
	Reset(ctx context.Context, sendToken string, now time.Time) error
}

// Protocol is how one delivery runs: its name in errors, its log, its
// channel's completion window and log lines, and the clock.
type Protocol struct {
	Name string // the delivery in errors: an idempotency token, a comment's identity
	Log  *slog.Logger
	// Window is how long after a send started the provider may still
	// complete it: before it, "not found" proves nothing.
	Window time.Duration
	Words  Words
	Now    func() time.Time
}

// Words are a channel's log lines.
type Words struct {
	ReleaseLeaseFailed, MaybeSent, ReleaseFailed, MarkFailed, Done, DoneKey string
	Found, MayComplete, NotFound                                            string
}

// Deliver runs the protocol for m through ch, recorded by r, and reports
// whether it sent now.
func Deliver[M any](ctx context.Context, p Protocol, r Record, ch delivery.Channel[M], m M) (bool, error) {
	send, err := r.Begin(ctx, p.Now())
	var inflight *InFlightError
	if errors.As(err, &inflight) {
		err = settle(ctx, p, r, ch, m, inflight.Row)
		if err == nil {
			send, err = r.Begin(ctx, p.Now())
		}
	}
	if errors.Is(err, ErrAlreadySent) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if ctx.Err() != nil { // lease lost between the re-read and the send: no side effect
		if rerr := r.Release(context.WithoutCancel(ctx), send.Token, failure.LeaseLost, "lease lost before the send", false, p.Now()); rerr != nil {
			p.Log.WarnContext(ctx, p.Words.ReleaseLeaseFailed, "err", rerr)
		}
		return false, failure.Wrap(failure.LeaseLost, context.Cause(ctx))
	}
	evidence, err := ch.Send(ctx, m)
	if err != nil {
		return false, refused(ctx, p, r, send, ch.Classify(err), err)
	}
	// Marked with a context that survives a lost lease: the send happened.
	if err := r.MarkSent(context.WithoutCancel(ctx), evidence, p.Now()); err != nil {
		p.Log.WarnContext(ctx, p.Words.MarkFailed, "err", err)
		return true, err // row stays "sending": the retry settles and backfills
	}
	p.Log.InfoContext(ctx, p.Words.Done, p.Words.DoneKey, evidence)
	return true, nil
}

// refused records a failed send on its row and returns err: a send that may
// have happened leaves the row sending for the next attempt to settle; one
// that certainly did not releases it (failed for good when its class is not
// retryable).
func refused(ctx context.Context, p Protocol, r Record, send *Send, v delivery.Verdict, err error) error {
	if v.MaybeSent {
		p.Log.WarnContext(ctx, p.Words.MaybeSent, "error_class", v.Class)
		return err
	}
	if rerr := r.Release(context.WithoutCancel(ctx), send.Token, v.Class, rowError(v.Class, err), !v.Class.Retryable(), p.Now()); rerr != nil {
		// The row stays "sending": the next attempt settles it (the
		// provider has no record, so after the window it is resent).
		p.Log.WarnContext(ctx, p.Words.ReleaseFailed, "err", rerr)
	}
	return err
}

// settle decides a row whose send may have happened, before any resend
// (lookup before resend, rule OB-4; the sweeper's reconciler audits rows
// after the fact, shared/reconcile):
//
//	no lookup                → the channel's error (DELIVERY_UNCONFIRMED: an operator decides)
//	the provider has it      → backfill the row as sent (ErrAlreadySent)
//	no record, within window → retry later (the provider may still complete the send)
//	no record, window over   → reset the row so the caller sends again
//
// The window starts at the row's send_started_at: only after it can the
// provider no longer complete that send, so "not found" is proof.
func settle[M any](ctx context.Context, p Protocol, r Record, ch delivery.Channel[M], m M, row *Row) error {
	evidence, ok, err := ch.Lookup(ctx, m, row.LookupAfter)
	if err != nil {
		return err
	}
	if ok {
		p.Log.WarnContext(ctx, p.Words.Found)
		if err := r.MarkSent(ctx, evidence, p.Now()); err != nil {
			return err
		}
		return ErrAlreadySent
	}
	now := p.Now()
	started, perr := job.ParseTime(row.SendStartedAt)
	if perr != nil {
		started = now // unknown start: wait a whole window
	}
	if left := started.Add(p.Window).Sub(now); left > 0 {
		p.Log.WarnContext(ctx, p.Words.MayComplete, "wait_ms", left.Milliseconds())
		return &failure.Error{Class: failure.Conflict, RetryAfter: left,
			Err: fmt.Errorf("a send of %s started at %s may still complete: %w", p.Name, row.SendStartedAt, ErrInFlight)}
	}
	p.Log.WarnContext(ctx, p.Words.NotFound)
	return r.Reset(ctx, row.SendToken, now)
}

// rowError is what a row keeps of a refused send: the class and the
// provider's reply codes ("reply 550 5.7.1"). The reply text is untrusted (a
// relay may quote the message, an address or a credential back), so it is
// never stored.
func rowError(class failure.Class, err error) string {
	if code := failure.UpstreamCode(err); code != 0 {
		if st := failure.UpstreamStatus(err); st != "" {
			return fmt.Sprintf("%s (reply %d %s)", class, code, st)
		}
		return fmt.Sprintf("%s (reply %d)", class, code)
	}
	return string(class)
}

// KeyRows are the row operations of e-mail rows, by delivery.Key (*Outbox).
type KeyRows interface {
	Begin(ctx context.Context, k delivery.Key, jobID string, now time.Time) (*Send, error)
	MarkSent(ctx context.Context, k delivery.Key, notificationID string, now time.Time) error
	Release(ctx context.Context, k delivery.Key, sendToken string, class failure.Class, msg string, permanent bool, now time.Time) error
	Reset(ctx context.Context, k delivery.Key, sendToken string, now time.Time) error
}

// ForKey is the Record of the e-mail row k, begun for job jobID.
func ForKey(rows KeyRows, k delivery.Key, jobID string) Record { return keyRecord{rows, k, jobID} }

type keyRecord struct {
	rows  KeyRows
	k     delivery.Key
	jobID string
}

func (r keyRecord) Begin(ctx context.Context, now time.Time) (*Send, error) {
	return r.rows.Begin(ctx, r.k, r.jobID, now)
}
func (r keyRecord) MarkSent(ctx context.Context, id string, now time.Time) error {
	return r.rows.MarkSent(ctx, r.k, id, now)
}
func (r keyRecord) Release(ctx context.Context, tok string, c failure.Class, msg string, permanent bool, now time.Time) error {
	return r.rows.Release(ctx, r.k, tok, c, msg, permanent, now)
}
func (r keyRecord) Reset(ctx context.Context, tok string, now time.Time) error {
	return r.rows.Reset(ctx, r.k, tok, now)
}

// ItemRows are the row operations of channel items (*Outbox), whose Begin
// records the id the row's lookup may start after (BeginItemAfter).
type ItemRows interface {
	BeginItemAfter(ctx context.Context, it Item, after int64, jobID string, now time.Time) (*Send, error)
	MarkItemSent(ctx context.Context, it Item, evidence string, now time.Time) error
	ReleaseItem(ctx context.Context, it Item, sendToken string, class failure.Class, msg string, permanent bool, now time.Time) error
	ResetItem(ctx context.Context, it Item, sendToken string, now time.Time) error
}

// Bound is the id a row's lookup may start after, read at each Begin: a
// channel that learns of later ids during an attempt (comments.Channel)
// raises it; After is a fixed one.
type Bound interface{ Known() int64 }

// After is a fixed Bound.
type After int64

// Known returns a.
func (a After) Known() int64 { return int64(a) }

// ForItem is the Record of the row of it, begun for job jobID after the id
// after knows at each Begin.
func ForItem(rows ItemRows, it Item, after Bound, jobID string) Record {
	return itemRecord{rows, it, after, jobID}
}

type itemRecord struct {
	rows  ItemRows
	it    Item
	after Bound
	jobID string
}

func (r itemRecord) Begin(ctx context.Context, now time.Time) (*Send, error) {
	return r.rows.BeginItemAfter(ctx, r.it, r.after.Known(), r.jobID, now)
}
func (r itemRecord) MarkSent(ctx context.Context, id string, now time.Time) error {
	return r.rows.MarkItemSent(ctx, r.it, id, now)
}
func (r itemRecord) Release(ctx context.Context, tok string, c failure.Class, msg string, permanent bool, now time.Time) error {
	return r.rows.ReleaseItem(ctx, r.it, tok, c, msg, permanent, now)
}
func (r itemRecord) Reset(ctx context.Context, tok string, now time.Time) error {
	return r.rows.ResetItem(ctx, r.it, tok, now)
}
