package notifystage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/outbox"
)

// The outbox protocol, run once for every channel (docs/swarm-comments.md,
// "Comments are a channel of the one outbox"): begin the row (skipping a
// sent one, settling one in flight by the channel's lookup), send, then mark
// sent. A channel supplies send, lookup and classification, nothing else;
// the row operations are the outbox's, bound to the delivery's identity.
type channelDelivery struct {
	name string // the delivery in errors: an idempotency token, a comment's identity
	log  *slog.Logger

	begin    func(ctx context.Context, now time.Time) (*outbox.Send, error)
	markSent func(ctx context.Context, evidence string, now time.Time) error
	release  func(ctx context.Context, tok string, class failure.Class, msg string, permanent bool, now time.Time) error
	reset    func(ctx context.Context, tok string, now time.Time) error

	// send delivers and returns the provider's evidence (an id).
	send func(ctx context.Context) (string, error)
	// maybeSent tells a failed send that may have happened (the row stays
	// sending) from one that certainly did not (the row is released).
	maybeSent func(err error) bool
	// lookup finds the evidence of an earlier send of row; nil when the
	// channel has none (a send that may have happened is then
	// DELIVERY_UNCONFIRMED).
	lookup func(ctx context.Context, row *outbox.Row) (evidence string, found bool, err error)
	// window is how long after a send started the provider may still
	// complete it: before it, "not found" proves nothing.
	window time.Duration
	words  protocolWords
}

// protocolWords are a channel's log lines.
type protocolWords struct {
	releaseLeaseFailed, maybeSent, releaseFailed, markFailed, done, doneKey string
	found, mayComplete, notFound, unconfirmed                               string
}

// run runs the protocol for d and reports whether it sent now.
func (n *Notify) run(ctx context.Context, d channelDelivery) (bool, error) {
	send, err := d.begin(ctx, n.Now.Now())
	var inflight *outbox.InFlightError
	if errors.As(err, &inflight) {
		err = n.settleDelivery(ctx, d, inflight.Row)
		if err == nil {
			send, err = d.begin(ctx, n.Now.Now())
		}
	}
	if errors.Is(err, outbox.ErrAlreadySent) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if ctx.Err() != nil { // lease lost between the re-read and the send: no side effect
		if rerr := d.release(context.WithoutCancel(ctx), send.Token, failure.LeaseLost, "lease lost before the send", false, n.Now.Now()); rerr != nil {
			d.log.WarnContext(ctx, d.words.releaseLeaseFailed, "err", rerr)
		}
		return false, failure.Wrap(failure.LeaseLost, context.Cause(ctx))
	}
	evidence, err := d.send(ctx)
	if err != nil {
		if d.maybeSent(err) {
			// The row stays "sending": the next attempt settles it before any resend.
			d.log.WarnContext(ctx, d.words.maybeSent, "error_class", failure.Classify(err))
			return false, err
		}
		class := failure.Classify(err)
		if rerr := d.release(context.WithoutCancel(ctx), send.Token, class, rowError(err), !class.Retryable(), n.Now.Now()); rerr != nil {
			// The row stays "sending": the next attempt settles it (the
			// provider has no record, so after the window it is resent).
			d.log.WarnContext(ctx, d.words.releaseFailed, "err", rerr)
		}
		return false, err
	}
	// Marked with a context that survives a lost lease: the send happened.
	if err := d.markSent(context.WithoutCancel(ctx), evidence, n.Now.Now()); err != nil {
		d.log.WarnContext(ctx, d.words.markFailed, "err", err)
		return true, err // row stays "sending": the retry settles and backfills
	}
	d.log.InfoContext(ctx, d.words.done, d.words.doneKey, evidence)
	return true, nil
}

// settleDelivery decides a row whose send may have happened, before any
// resend (lookup before resend, rule OB-4; the sweeper's reconciler audits
// e-mail rows after the fact, shared/reconcile):
//
//	no lookup                → DELIVERY_UNCONFIRMED (an operator decides; never a blind resend)
//	the provider has it      → backfill the row as sent (ErrAlreadySent)
//	no record, within window → retry later (the provider may still complete the send)
//	no record, window over   → reset the row so the caller sends again
//
// The window starts at the row's send_started_at: only after it can the
// provider no longer complete that send, so "not found" is proof.
func (n *Notify) settleDelivery(ctx context.Context, d channelDelivery, row *outbox.Row) error {
	if d.lookup == nil {
		return failure.Errorf(failure.DeliveryUnconfirmed, d.words.unconfirmed, d.name)
	}
	evidence, ok, err := d.lookup(ctx, row)
	if err != nil {
		return err
	}
	if ok {
		d.log.WarnContext(ctx, d.words.found)
		if err := d.markSent(ctx, evidence, n.Now.Now()); err != nil {
			return err
		}
		return outbox.ErrAlreadySent
	}
	now := n.Now.Now()
	started, perr := job.ParseTime(row.SendStartedAt)
	if perr != nil {
		started = now // unknown start: wait a whole window
	}
	if left := started.Add(d.window).Sub(now); left > 0 {
		d.log.WarnContext(ctx, d.words.mayComplete, "wait_ms", left.Milliseconds())
		return &failure.Error{Class: failure.Conflict, RetryAfter: left,
			Err: fmt.Errorf("a send of %s started at %s may still complete: %w", d.name, row.SendStartedAt, outbox.ErrInFlight)}
	}
	d.log.WarnContext(ctx, d.words.notFound)
	return d.reset(ctx, row.SendToken, now)
}
