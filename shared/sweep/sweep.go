// Package sweep owns the safety net that makes "no job is lost" hold: a
// scheduled pass over jobs whose sweep deadline has passed. A job is due when
// it was stored but its first message never got sent (a crash between the
// write and the enqueue), when a stage completed but the next stage's message
// was lost, or when a stage lease expired with no message in flight. The
// sweeper re-enqueues the job's current stage; the stage runtime's claim makes
// a duplicate message harmless.
package sweep

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/envelope"
	"github.com/criticizer/criticizer/shared/obs"
	"github.com/criticizer/criticizer/shared/store"
)

// Jobs is the part of the store the sweeper uses.
type Jobs interface {
	Due(ctx context.Context, now time.Time, limit int32) ([]*store.Job, error)
	Reschedule(ctx context.Context, j *store.Job, now, next time.Time, note string) error
}

// Enqueuer sends stage messages.
type Enqueuer interface {
	Send(ctx context.Context, e envelope.Envelope) error
}

// DefaultLimit is how many due jobs one pass takes. A pass runs every few
// minutes and handles each job with two requests, so 200 finishes well
// inside the function's timeout while draining a backlog after an outage.
const DefaultLimit = 200

// Sweeper re-enqueues due jobs.
type Sweeper struct {
	Jobs    Jobs
	Queue   Enqueuer
	Lease   time.Duration
	Limit   int32 // due jobs per pass; DefaultLimit when zero
	Log     *slog.Logger
	Metrics *obs.Metrics
	Now     func() time.Time
}

// Report says what one pass did.
type Report struct {
	Due        int `json:"due"`
	Enqueued   int `json:"enqueued"`
	Postponed  int `json:"postponed"`
	Conflicted int `json:"conflicted"`
}

// Run makes one pass. Errors on single jobs are logged and counted, not
// returned: one bad job must not stop the others from being swept.
func (s *Sweeper) Run(ctx context.Context) (Report, error) {
	now := domain.Now()
	if s.Now != nil {
		now = s.Now().UTC()
	}
	limit := s.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	jobs, err := s.Jobs.Due(ctx, now, limit)
	if err != nil {
		return Report{}, err
	}
	rep := Report{Due: len(jobs)}
	for _, j := range jobs {
		jctx := obs.WithAttrs(ctx, slog.String("job_id", j.ID), slog.String("stage", string(j.Stage)))
		if j.Terminal() {
			continue // not indexed once terminal; a stale index entry is harmless
		}
		rec := j.StageRecord(j.Stage)
		if rec.Status == store.StageRunning && rec.LeaseExpiresAt > domain.FormatTime(now) {
			// A live lease: look again after it would have expired.
			exp, _ := time.Parse(domain.TimeFormat, rec.LeaseExpiresAt)
			if err := s.Jobs.Reschedule(ctx, j, now, exp.Add(s.Lease), "lease live; postponed"); err != nil && !errors.Is(err, store.ErrConflict) {
				s.Log.WarnContext(jctx, "postponing sweep failed", "err", err)
			}
			rep.Postponed++
			continue
		}
		// Reschedule first (guarded by seq): if the job moved meanwhile, it is
		// not ours to enqueue and the conditional write says so.
		if err := s.Jobs.Reschedule(ctx, j, now, now.Add(2*s.Lease), "re-enqueued "+string(j.Stage)); err != nil {
			if errors.Is(err, store.ErrConflict) {
				rep.Conflicted++
				continue
			}
			s.Log.WarnContext(jctx, "rescheduling failed", "err", err)
			continue
		}
		env := envelope.Envelope{V: envelope.Version, JobID: j.ID, Changelist: j.Changelist, ReviewVersion: j.ReviewVersion,
			Stage: j.Stage, Attempt: rec.Attempts, TraceID: j.TraceID, SentAt: domain.FormatTime(now)}
		if err := s.Queue.Send(ctx, env); err != nil {
			s.Log.ErrorContext(jctx, "re-enqueue failed; next pass retries", "err", err)
			continue
		}
		s.Log.InfoContext(jctx, "job re-enqueued by the sweeper", "state", j.State, "stage_status", rec.Status)
		rep.Enqueued++
	}
	s.Metrics.Put("SweptJobs", float64(rep.Enqueued), obs.Count, nil)
	return rep, nil
}
