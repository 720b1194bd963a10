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
	Now     job.Clock
	Skew    time.Duration // the clock-skew budget between hosts (CLOCK_SKEW_SECONDS)
	// Budget bounds how long a pass handles jobs (0: unbounded): the
	// sweeper sets it well inside its function's timeout. The jobs it does
	// not reach stay due, oldest first on the sweep index, so the next pass
	// starts with them.
	Budget time.Duration
}

// Report says what one pass did.
type Report struct {
	Due        int `json:"due"`
	Enqueued   int `json:"enqueued"`
	Postponed  int `json:"postponed"`
	Conflicted int `json:"conflicted"`
	// Backlog counts the due jobs this pass did not reach (its limit or
	// Budget ran out; at the limit, at least one more is due).
	Backlog int `json:"backlog,omitempty"`
}

// Run makes one pass. Errors on single jobs are logged and counted, not
// returned: one bad job must not stop the others from being swept.
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
		// Reschedule first (guarded by seq): if the job moved meanwhile, it is
		// not ours to enqueue and the conditional write says so.
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
