// Package sweep owns the safety net behind "no job is lost": a scheduled pass
// over jobs past their sweep deadline — stored but never enqueued, a next-stage
// message lost, a lease expired with nothing in flight — re-enqueuing the
// current stage; the stage's claim makes a duplicate harmless.
package sweep

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/criticizer/criticizer/shared/envelope"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/obs"
)

// Jobs is the part of the store the sweeper uses.
type Jobs interface {
	Due(ctx context.Context, now time.Time, limit int32) ([]*job.Job, error)
	Reschedule(ctx context.Context, j *job.Job, now, next time.Time, note string) error
}

// Enqueuer sends stage messages.
type Enqueuer interface {
	Send(ctx context.Context, e envelope.Envelope) error
}

// DefaultLimit is how many due jobs a pass takes: two requests a job, so 200 finish well inside the timeout while
// draining a backlog.
const DefaultLimit = 200

// Sweeper re-enqueues due jobs.
type Sweeper struct {
	Jobs    Jobs
	Queue   Enqueuer
	Lease   time.Duration
	Limit   int32 // due jobs per pass; DefaultLimit when zero
	Log     *slog.Logger
	Metrics *obs.Metrics
	Now     job.Clock
	Skew    time.Duration // the clock-skew budget between hosts (CLOCK_SKEW_SECONDS)
	// Budget bounds a pass (0: unbounded); jobs not reached stay due, oldest
	// first, for the next.
	Budget time.Duration
}

// Report says what one pass did.
type Report struct {
	Due        int `json:"due"`
	Enqueued   int `json:"enqueued"`
	Postponed  int `json:"postponed"`
	Conflicted int `json:"conflicted"`
	// Backlog counts due jobs not reached.
	Backlog int `json:"backlog,omitempty"`
}

// Run makes one pass; a job's error is logged and counted, never stopping the
// others.
func (s *Sweeper) Run(ctx context.Context) (Report, error) {
	now := s.Now.Now()
	limit := s.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	// One more than the limit: whether more are due than a pass takes.
	jobs, err := s.Jobs.Due(ctx, now, limit+1)
	if err != nil {
		return Report{}, err
	}
	rep := Report{Due: len(jobs)}
	for i, j := range jobs {
		if i == int(limit) || (s.Budget > 0 && !s.Now.Now().Before(now.Add(s.Budget))) {
			rep.Backlog = len(jobs) - i
			break
		}
		jctx := obs.WithAttrs(ctx, slog.String("job_id", j.ID), slog.String("stage", string(j.Stage)))
		if j.Terminal() {
			continue // not indexed once terminal; a stale index entry is harmless
		}
		rec := j.StageRecord(j.Stage)
		if job.Live(rec, now, s.Skew) {
			// A live lease (within the skew budget): look again after it would have expired.
			exp, _ := job.ParseTime(rec.LeaseExpiresAt)
			if err := s.Jobs.Reschedule(ctx, j, now, exp.Add(s.Lease+s.Skew), "lease live; postponed"); err != nil && !errors.Is(err, job.ErrConflict) {
				s.Log.WarnContext(jctx, "postponing sweep failed", "err", err)
			}
			rep.Postponed++
			continue
		}
		// Reschedule first (seq-guarded): a job that moved is not ours to
		// enqueue.
		if err := s.Jobs.Reschedule(ctx, j, now, now.Add(2*s.Lease), "re-enqueued "+string(j.Stage)); err != nil {
			if errors.Is(err, job.ErrConflict) {
				rep.Conflicted++
				continue
			}
			s.Log.WarnContext(jctx, "rescheduling failed", "err", err)
			continue
		}
		env := envelope.ForJob(j, j.Stage, now)
		if err := s.Queue.Send(ctx, env); err != nil {
			s.Log.ErrorContext(jctx, "re-enqueue failed; next pass retries", "err", err)
			continue
		}
		s.Log.InfoContext(jctx, "job re-enqueued by the sweeper", "state", j.State, "stage_status", rec.Status)
		rep.Enqueued++
	}
	s.Metrics.Put("SweptJobs", float64(rep.Enqueued), obs.Count, nil)
	// A backlog the passes cannot drain pages (SweepBacklogAlarm).
	s.Metrics.Put("SweepBacklog", float64(rep.Backlog), obs.Count, nil)
	return rep, nil
}
