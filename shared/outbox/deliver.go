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

// The one delivery protocol, for every channel (docs/swarm-comments.md,
// "Comments are a channel of the one outbox"): begin the row (skip a sent one,
// settle one in flight by the channel's Lookup), send through the channel, mark
// it sent. Every channel passes one conformance suite
// (outboxtest.RunChannelSuite).

// Rows are the row operations the protocol runs on (*Outbox; a test's fake).
type Rows interface {
	Begin(ctx context.Context, k Ref, jobID string, now time.Time) (*Send, error)
	MarkSent(ctx context.Context, k Ref, evidence string, now time.Time) error
	Release(ctx context.Context, k Ref, sendToken string, class failure.Class, msg string, permanent bool, now time.Time) error
	Reset(ctx context.Context, k Ref, sendToken string, now time.Time) error
}

// Bound is the id a row's lookup may start after, read at each Begin: a channel
// that learns later ids (comments.Channel) raises it.
type Bound interface{ Known() int64 }

// After is a fixed Bound.
type After int64

// Known returns a.
func (a After) Known() int64 { return int64(a) }

// Protocol is one delivery: its row, name in errors, log, channel window and log
// lines, and the clock.
type Protocol struct {
	Ref   Ref    // the delivery's row: Email(key) or an Item
	JobID string // the job a created row names
	After Bound  // the id the row's lookup starts after; nil: none
	// KeepPending releases a refused send pending, never failed: a digest has no
	// job to requeue, so a refusal of our own (a rotated SMTP login) is fixed
	// and the week run again.
	KeepPending bool
	Name        string // the delivery in errors: an idempotency token, a comment's identity
	Log         *slog.Logger
	// Window: before it ends, "not found" proves nothing.
	Window time.Duration
	Words  Words
	Now    func() time.Time
}

func (p Protocol) begin(ctx context.Context, rows Rows) (*Send, error) {
	ref := p.Ref
	if p.After != nil {
		ref = Bounded(ref, p.After.Known())
	}
	return rows.Begin(ctx, ref, p.JobID, p.Now())
}

// Words are a channel's log lines.
type Words struct {
	ReleaseLeaseFailed, MaybeSent, ReleaseFailed, MarkFailed, Done, DoneKey string
	Found, MayComplete, NotFound                                            string
}

// Deliver runs the protocol for m through ch on rows and says whether it sent
// now.
func Deliver[M any](ctx context.Context, p Protocol, rows Rows, ch delivery.Channel[M], m M) (bool, error) {
	send, err := p.begin(ctx, rows)
	var inflight *InFlightError
	if errors.As(err, &inflight) {
		err = settle(ctx, p, rows, ch, m, inflight.Row)
		if err == nil {
			send, err = p.begin(ctx, rows)
		}
	}
	if errors.Is(err, ErrAlreadySent) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if ctx.Err() != nil { // lease lost between the re-read and the send: no side effect
		if rerr := rows.Release(context.WithoutCancel(ctx), p.Ref, send.Token, failure.LeaseLost, "lease lost before the send", false, p.Now()); rerr != nil {
			p.Log.WarnContext(ctx, p.Words.ReleaseLeaseFailed, "err", rerr)
		}
		return false, failure.Wrap(failure.LeaseLost, context.Cause(ctx))
	}
	evidence, err := ch.Send(ctx, m)
	if err != nil {
		return false, refused(ctx, p, rows, send, ch.Classify(err), err)
	}
	// Marked with a context that survives a lost lease: the send happened.
	if err := rows.MarkSent(context.WithoutCancel(ctx), p.Ref, evidence, p.Now()); err != nil {
		p.Log.WarnContext(ctx, p.Words.MarkFailed, "err", err)
		return true, err // row stays "sending": the retry settles and backfills
	}
	p.Log.InfoContext(ctx, p.Words.Done, p.Words.DoneKey, evidence)
	return true, nil
}

// refused records a failed send: one that may have happened leaves the row
// sending for the next attempt to settle; one that did not releases it (failed
// for good unless retryable).
func refused(ctx context.Context, p Protocol, rows Rows, send *Send, v delivery.Verdict, err error) error {
	if v.MaybeSent {
		p.Log.WarnContext(ctx, p.Words.MaybeSent, "error_class", v.Class)
		return err
	}
	permanent := !v.Class.Retryable() && !p.KeepPending
	if rerr := rows.Release(context.WithoutCancel(ctx), p.Ref, send.Token, v.Class, rowError(v.Class, err), permanent, p.Now()); rerr != nil {
		// The row stays sending: the next attempt settles it and, past the
		// window, resends.
		p.Log.WarnContext(ctx, p.Words.ReleaseFailed, "err", rerr)
	}
	return err
}

// settle decides a row whose send may have happened, before any resend (rule
// OB-4; the reconciler audits after the fact, shared/reconcile):
//
//	no lookup                → the channel's error (DELIVERY_UNCONFIRMED: an operator decides)
//	the provider has it      → backfill the row as sent (ErrAlreadySent)
//	no record, within window → retry later (the provider may still complete the send)
//	no record, window over   → reset the row so the caller sends again
//
// The window starts at send_started_at.
func settle[M any](ctx context.Context, p Protocol, rows Rows, ch delivery.Channel[M], m M, row *Row) error {
	evidence, ok, err := ch.Lookup(ctx, m, row.LookupAfter)
	if err != nil {
		return err
	}
	if ok {
		p.Log.WarnContext(ctx, p.Words.Found)
		if err := rows.MarkSent(ctx, p.Ref, evidence, p.Now()); err != nil {
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
	return rows.Reset(ctx, p.Ref, row.SendToken, now)
}

// rowError is what a row keeps of a refusal: the class and reply codes ("reply
// 550 5.7.1"), never the untrusted reply text (a relay may quote addresses or
// credentials).
func rowError(class failure.Class, err error) string {
	if code := failure.UpstreamCode(err); code != 0 {
		if st := failure.UpstreamStatus(err); st != "" {
			return fmt.Sprintf("%s (reply %d %s)", class, code, st)
		}
		return fmt.Sprintf("%s (reply %d)", class, code)
	}
	return string(class)
}
