// Package notifystage is the notify stage's stage.Processor: ReviewResult →
// one e-mail per recipient through the outbox, send first then mark, with a
// provider lookup before any resend of a send that may have happened.
package notifystage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"

	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/notify"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/store"
)

// Sender delivers one composed e-mail and returns the provider's id for it.
type Sender interface {
	Send(ctx context.Context, k notify.Key, m *notify.Message) (string, error)
}

// DeliveryLog answers "did the provider accept the message with this
// Message-ID?" — the lookup that reconciles a send that may have happened.
type DeliveryLog interface {
	Delivered(ctx context.Context, messageID string) (bool, error)
}

// Notify is the notify stage.
type Notify struct {
	Outbox    *outbox.Outbox
	Artifacts *artifacts.Store // the redacted bucket
	Sender    Sender
	// Log of accepted messages to reconcile uncertain sends; nil when the
	// provider has none, in which case an uncertain send is never retried
	// blindly but dead-lettered as DELIVERY_UNCONFIRMED for an operator.
	DeliveryLog DeliveryLog
	From        string
	HTML        bool
	// SwarmURL is the Swarm server's base URL; a job from a Swarm review
	// links it in the e-mail (SWARM_URL/reviews/{id}).
	SwarmURL string
	Log      *slog.Logger
	// Swarm reports the outcome to a Helix Swarm test run once every
	// recipient is e-mailed (swarm.Reporter); nil for none.
	Swarm SwarmPasser
}

// SwarmPasser reports a finished review to its Swarm test run.
type SwarmPasser interface {
	Pass(ctx context.Context, job *store.Job, findings int) error
}

// reviewURL is the Swarm review's page, when the job came from one.
func (n *Notify) reviewURL(job *store.Job) string {
	if n.SwarmURL == "" || job.Swarm == nil || job.Swarm.Review <= 0 {
		return ""
	}
	return strings.TrimRight(n.SwarmURL, "/") + "/reviews/" + strconv.FormatInt(job.Swarm.Review, 10)
}

// Process sends the review to every recipient that has not been notified.
func (n *Notify) Process(ctx context.Context, job *store.Job) (store.Result, error) {
	if job.Artifacts.Result == "" || job.Artifacts.Redacted == "" {
		return store.Result{}, failure.Errorf(failure.InternalBug, "job reached notify without review artifacts")
	}
	var review domain.ReviewResult
	if err := n.Artifacts.GetJSON(ctx, job.Artifacts.Result, &review); err != nil {
		return store.Result{}, err
	}
	var cs domain.Changeset
	if err := n.Artifacts.GetJSON(ctx, job.Artifacts.Redacted, &cs); err != nil {
		return store.Result{}, err
	}
	recipients := slices.Clone(job.Recipients)
	slices.Sort(recipients)
	var permanent []error
	sent := 0
	for _, rcpt := range recipients {
		k := notify.Key{Changelist: job.Changelist, Recipient: rcpt, ReviewVersion: job.ReviewVersion}
		msg, err := notify.Compose(k, notify.Content{Author: cs.User, Description: cs.Description, JobID: job.ID, Review: review, From: n.From, HTML: n.HTML, Changeset: &cs, ReviewURL: n.reviewURL(job)})
		if err != nil {
			return store.Result{}, failure.Wrap(failure.InternalBug, err)
		}
		did, err := n.deliver(ctx, job.ID, k, msg)
		switch {
		case err == nil:
			if did {
				sent++
			}
		case recipientLevel(failure.Classify(err)):
			// This recipient cannot be e-mailed; the others still get theirs.
			permanent = append(permanent, fmt.Errorf("%s: %w", rcpt, err))
		default:
			return store.Result{}, err
		}
	}
	if len(permanent) > 0 {
		return store.Result{}, errors.Join(permanent...)
	}
	if n.Swarm != nil && job.Swarm != nil {
		// After the e-mails, never before: a failing callback retries this
		// stage, whose outbox skips the recipients already e-mailed.
		if err := n.Swarm.Pass(ctx, job, job.FindingCount); err != nil {
			if failure.Classify(err).Retryable() {
				return store.Result{}, err
			}
			// Swarm refused it for good (the run was deleted, …): the review
			// was delivered, which is what the job is for.
			n.Log.WarnContext(ctx, "swarm pass callback refused; not retried", "err", err, "error_class", failure.Classify(err))
		}
	}
	return store.Result{Detail: fmt.Sprintf("%d of %d recipients e-mailed now, the rest earlier", sent, len(recipients))}, nil
}

// recipientLevel reports whether a failure concerns one recipient only (the
// mailbox does not exist, policy refuses it) rather than the whole send
// (credentials, connectivity, a bug), which stops the stage at once.
func recipientLevel(c failure.Class) bool {
	return c == failure.NotFound || c == failure.PolicyRejected
}

// deliver runs the outbox protocol for one recipient: ensure the row, skip
// it when notified, reconcile an in-flight send, record the intent, send,
// then mark sent in one write. It reports whether it sent now.
func (n *Notify) deliver(ctx context.Context, jobID string, k notify.Key, msg *notify.Message) (bool, error) {
	row, err := n.Outbox.Ensure(ctx, k, jobID, domain.Now())
	if err != nil {
		return false, err
	}
	if row.NotifiedAt != "" {
		return false, nil
	}
	err = n.Outbox.BeginSend(ctx, k, domain.Now())
	if errors.Is(err, outbox.ErrInFlight) {
		err = n.reconcile(ctx, k, msg)
		if errors.Is(err, outbox.ErrAlreadySent) {
			return false, nil
		}
		if err == nil {
			err = n.Outbox.BeginSend(ctx, k, domain.Now())
		}
	}
	if errors.Is(err, outbox.ErrAlreadySent) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if ctx.Err() != nil { // lease lost between the re-read and the send: no side effect
		_ = n.Outbox.Reset(context.WithoutCancel(ctx), k, domain.Now())
		return false, failure.Wrap(failure.LeaseLost, context.Cause(ctx))
	}
	nid, err := n.Sender.Send(ctx, k, msg)
	if err != nil {
		if errors.Is(err, notify.ErrOutcomeUnknown) {
			// The row stays "sending": the next attempt reconciles before any resend.
			return false, err
		}
		class := failure.Classify(err)
		_ = n.Outbox.Release(context.WithoutCancel(ctx), k, class, err.Error(), !class.Retryable(), domain.Now())
		return false, err
	}
	// Marked with a context that survives a lost lease: the send happened.
	if err := n.Outbox.MarkSent(context.WithoutCancel(ctx), k, nid, domain.Now()); err != nil {
		return true, err // row stays "sending"; the retry reconciles and backfills
	}
	n.Log.InfoContext(ctx, "review e-mailed", "recipient", k.Recipient, "notification_id", nid)
	return true, nil
}

// reconcile settles a row whose send may have happened: backfill it when the
// provider has the message, reset it for a resend when it provably does not.
func (n *Notify) reconcile(ctx context.Context, k notify.Key, msg *notify.Message) error {
	id := msg.MessageID
	if n.DeliveryLog == nil {
		return failure.Errorf(failure.DeliveryUnconfirmed, "a send to %s may have happened and no delivery log is configured to check; confirm by hand, then replay", k.Recipient)
	}
	ok, err := n.DeliveryLog.Delivered(ctx, id)
	if err != nil {
		return err
	}
	if ok {
		n.Log.WarnContext(ctx, "reconciled: the provider had accepted the earlier send", "recipient", k.Recipient)
		if err := n.Outbox.MarkSent(ctx, k, id, domain.Now()); err != nil {
			return err
		}
		return outbox.ErrAlreadySent
	}
	n.Log.WarnContext(ctx, "reconciled: the earlier send did not reach the provider; resending", "recipient", k.Recipient)
	return n.Outbox.Reset(ctx, k, domain.Now())
}

// SenderFunc adapts a function to Sender.
type SenderFunc func(ctx context.Context, k notify.Key, m *notify.Message) (string, error)

// Send calls f.
func (f SenderFunc) Send(ctx context.Context, k notify.Key, m *notify.Message) (string, error) {
	return f(ctx, k, m)
}
