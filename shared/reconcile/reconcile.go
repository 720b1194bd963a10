// Package reconcile enforces the outbox ordering contract after the fact: a
// periodic pass (run by the sweeper function) finds delivery rows whose
// outcome is in doubt — stuck "sending" past the provider's completion
// window, or marked sent while the provider has no record of the message —
// moves them to "reconciling" (which blocks any send for the key), counts
// every such violation in the paging OutboxViolations metric (repaired or
// not), and repairs them: the provider has the message → backfill the row as
// sent; the provider has no record → clear the sent markers and make the row
// pending, once — for a job that already succeeded, together with a
// redelivery message that has the notify stage deliver that one row under
// its existing key without reopening the job. A row requeued before, or of a
// dead-lettered or missing job, stays reconciling (OutboxReconciling, paging)
// for an operator (criticizer outbox reconcile).
package reconcile

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/envelope"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/obs"
	"github.com/criticizer/criticizer/shared/outbox"
)

// Rows is the part of the outbox the reconciler uses.
type Rows interface {
	Suspects(ctx context.Context, stuckBefore, sentFrom, sentTo time.Time, verifySent bool, limit int) ([]outbox.Suspect, error)
	MarkReconciling(ctx context.Context, k delivery.Key, observed outbox.Status, reason string, now time.Time) (bool, error)
	Verified(ctx context.Context, k delivery.Key, now time.Time) error
	Backfill(ctx context.Context, k delivery.Key, evidence string, now time.Time) (bool, error)
	RequeueReconciled(ctx context.Context, k delivery.Key, now time.Time) (bool, error)
}

// Jobs reads the job a delivery row belongs to.
type Jobs interface {
	Get(ctx context.Context, id string) (*job.Job, error)
}

// Enqueuer sends a stage message (the notify redelivery of a succeeded job).
type Enqueuer interface {
	Send(ctx context.Context, e envelope.Envelope) error
}

// Evidence answers whether the provider accepted the message with this
// Message-ID (the notify stage's lookup: SES events, an SMTP relay's log).
type Evidence interface {
	Delivered(ctx context.Context, messageID string) (bool, error)
}

// Reasons a row is reconciling.
const (
	ReasonStuck    = "sending past the provider's completion window"
	ReasonUnproven = "marked sent without provider evidence"
)

// Reconciler makes reconciliation passes.
type Reconciler struct {
	Rows Rows
	// Evidence is the provider's record of accepted messages (shared/evidence);
	// nil when it has none: stuck rows
	// then wait in reconciling for an operator, and sent rows are not checked.
	Evidence Evidence
	// Jobs tells whether the row's job will run its notify stage again: a
	// requeued row is only sent by a later notify attempt, so the row of a
	// finished (or missing) job is left reconciling for an operator. Nil
	// requeues without asking.
	Jobs Jobs
	// Redeliver sends the notify stage the redelivery of a succeeded job's
	// requeued row; nil leaves such rows reconciling for an operator.
	Redeliver Enqueuer
	// FromDomain is the domain of the notify stage's From address, which the
	// deterministic Message-ID of every message carries.
	FromDomain string
	// Window is how long after a send started the provider may still
	// complete it (and publish its events).
	Window time.Duration
	// Lookback bounds how far back sent rows are verified.
	Lookback time.Duration
	Limit    int
	Log      *slog.Logger
	Metrics  *obs.Metrics
	Now      job.Clock // the system clock when nil
}

// Report says what one pass did.
type Report struct {
	Examined    int `json:"examined"`
	Verified    int `json:"verified"`
	Reconciling int `json:"reconciling"` // rows left for an operator
	Backfilled  int `json:"backfilled"`
	Requeued    int `json:"requeued"`
	Redelivered int `json:"redelivered"` // requeued rows of succeeded jobs handed to notify's redelivery
	// Violations counts the ordering-contract violations detected in this
	// pass (rows moved to reconciling), whether repaired or not.
	Violations int `json:"violations"`
	Errors     int `json:"errors"`
}

// Run makes one pass. Errors on single rows are logged and counted; a row
// left reconciling is retried by the next pass.
func (r *Reconciler) Run(ctx context.Context) (Report, error) {
	now := r.Now.Now()
	limit := r.Limit
	if limit <= 0 {
		limit = 200
	}
	settled := now.Add(-r.Window)
	suspects, err := r.Rows.Suspects(ctx, settled, settled.Add(-r.Lookback), settled, r.Evidence != nil, limit)
	if err != nil {
		return Report{}, err
	}
	rep := Report{Examined: len(suspects)}
	for _, s := range suspects {
		if s.Channel != "" {
			// Another channel's row (a Swarm comment) has no e-mail evidence:
			// asking the mail provider would requeue it, and post it twice. The
			// notify stage settles it by the channel's own lookup.
			rep.Examined--
			continue
		}
		k := s.Key()
		log := r.Log.With("changelist", k.Changelist, "review_version", k.ReviewVersion, "job_id", s.JobID)
		messageID := k.MessageID(r.FromDomain)
		status := s.Status
		if status == outbox.Sent {
			ok, err := r.Evidence.Delivered(ctx, messageID)
			if err != nil {
				log.WarnContext(ctx, "reconcile: delivery lookup failed", "err", err)
				rep.Errors++
				continue
			}
			if ok {
				if err := r.Rows.Verified(ctx, k, now); err != nil {
					log.WarnContext(ctx, "reconcile: recording verification failed", "err", err)
					rep.Errors++
				}
				rep.Verified++
				continue
			}
		}
		reason := s.Reason
		if status != outbox.Reconciling {
			reason = ReasonStuck
			if status == outbox.Sent {
				reason = ReasonUnproven
			}
			moved, err := r.Rows.MarkReconciling(ctx, k, status, reason, now)
			if err != nil || !moved {
				if err != nil {
					log.WarnContext(ctx, "reconcile: marking reconciling failed", "err", err)
					rep.Errors++
				}
				continue // moved on meanwhile (a send completed): not ours
			}
			rep.Violations++
			log.ErrorContext(ctx, "ordering contract violated: outbox row reconciling, no e-mail for this key until it is settled", "reason", reason, "was", status)
		}
		if !r.repair(ctx, log, s, reason, messageID, now, &rep) {
			rep.Reconciling++
		}
	}
	// Emitted every pass, zero included, so the alarm sees the row count
	// fall back when rows are settled.
	r.Metrics.Put("OutboxReconciling", float64(rep.Reconciling), obs.Count, nil)
	// Every detected violation pages, also the ones repaired here: the
	// ordering contract should never be broken, so each one is looked at.
	r.Metrics.Put("OutboxViolations", float64(rep.Violations), obs.Count, nil)
	return rep, nil
}

// repair settles a reconciling row per the failure matrix and reports
// whether it did.
func (r *Reconciler) repair(ctx context.Context, log *slog.Logger, s outbox.Suspect, reason, messageID string, now time.Time, rep *Report) bool {
	k := s.Key()
	if r.Evidence == nil {
		return false // nothing to ask: an operator checks the provider
	}
	delivered, err := r.Evidence.Delivered(ctx, messageID)
	if err != nil {
		log.WarnContext(ctx, "reconcile: delivery lookup failed", "err", err)
		rep.Errors++
		return false
	}
	if delivered {
		ok, err := r.Rows.Backfill(ctx, k, messageID, now)
		if err != nil {
			log.WarnContext(ctx, "reconcile: backfill failed", "err", err)
			rep.Errors++
			return false
		}
		if ok {
			log.WarnContext(ctx, "reconciled: the provider has the message; row backfilled as sent")
			rep.Backfilled++
		}
		return ok
	}
	var succeeded *job.Job
	if r.Jobs != nil {
		j, err := r.Jobs.Get(ctx, s.JobID)
		switch {
		case err == nil && j.State == job.Succeeded && r.Redeliver != nil:
			succeeded = j // notify will not run again by itself: redeliver this row
		case errors.Is(err, job.ErrNotFound) || (err == nil && j.Terminal()):
			log.WarnContext(ctx, "reconcile: the provider has no record, and the job will not notify again; an operator settles it")
			return false
		case err != nil:
			log.WarnContext(ctx, "reconcile: reading the job failed", "err", err)
			rep.Errors++
			return false
		}
	}
	ok, err := r.Rows.RequeueReconciled(ctx, k, now)
	if err != nil {
		log.WarnContext(ctx, "reconcile: requeue failed", "err", err)
		rep.Errors++
		return false
	}
	if !ok {
		return false
	}
	if succeeded != nil {
		// The row is pending again; the redelivery message makes the notify
		// stage attempt that one delivery under the row's key. If it cannot
		// be sent, the row goes back to reconciling (it was requeued once,
		// so an operator settles it) rather than waiting for a run that
		// never comes.
		msg := envelope.Redeliver(succeeded, "reconciler", reason+"; the provider has no record of the message", now)
		if err := r.Redeliver.Send(ctx, msg); err != nil {
			log.ErrorContext(ctx, "reconcile: sending the redelivery failed; the row goes back to reconciling", "err", err)
			rep.Errors++
			if _, merr := r.Rows.MarkReconciling(ctx, k, outbox.Pending, "redelivery could not be enqueued", now); merr != nil {
				log.ErrorContext(ctx, "reconcile: the requeued row of a succeeded job could not be parked again; requeue it: criticizer outbox reconcile", "err", merr)
			}
			return false
		}
		log.WarnContext(ctx, "reconciled: the provider has no record; row pending again, redelivery sent to notify for the succeeded job")
		rep.Requeued++
		rep.Redelivered++
		return true
	}
	log.WarnContext(ctx, "reconciled: the provider has no record; markers cleared, row pending again (once)")
	rep.Requeued++
	return true
}
