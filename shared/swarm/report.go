package swarm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
)

// Recorder records a callback in the job, once (store.Store).
type Recorder interface {
	RecordCallback(ctx context.Context, id string, c job.Callback, now time.Time) error
}

// Caller makes one callback (Client).
type Caller interface {
	Call(ctx context.Context, callbackURL string, report Report) error
}

// Reporter reports a job's progress to its Swarm test run, each callback at
// most once per job: it is skipped when the job record already has it, made,
// then recorded with a conditional write. Only a crash between the call and
// the record repeats a call (Swarm takes a repeated status as the same
// status); a redelivered or replayed message finds the record and does not.
type Reporter struct {
	Swarm Caller
	Jobs  Recorder
	Log   *slog.Logger
	Now   func() time.Time
}

const updateTimeout = 5 * time.Second

// Update tells Swarm the review is running and links the run to the job.
// statusRunning is Swarm's test-run status word for "in progress" (its
// API's vocabulary, not a job state).
const statusRunning = "running"

func (r *Reporter) Update(ctx context.Context, j *job.Job) error {
	if j.Swarm == nil {
		return nil
	}
	// Short: it runs before the fetch, which must not wait on a slow Swarm.
	ctx, cancel := context.WithTimeout(ctx, updateTimeout)
	defer cancel()
	return r.call(ctx, j, job.CallbackUpdate, Report{Status: statusRunning,
		Messages: []string{fmt.Sprintf("Criticizer is reviewing change %d (version %d)", j.Changelist, j.ReviewVersion)}, URL: j.Swarm.JobURL})
}

// Pass reports a finished review with its finding count.
func (r *Reporter) Pass(ctx context.Context, j *job.Job, findings int) error {
	if j.Swarm == nil {
		return nil
	}
	return r.call(ctx, j, job.CallbackPass, Report{Messages: []string{findingsMessage(findings)}, URL: j.Swarm.JobURL})
}

// Fail reports a review that was dead-lettered, with the error class only
// (never the error text: it may quote upstream replies).
func (r *Reporter) Fail(ctx context.Context, j *job.Job, class failure.Class) error {
	if j.Swarm == nil {
		return nil
	}
	return r.call(ctx, j, job.CallbackFail, Report{Messages: []string{fmt.Sprintf("Criticizer could not review change %d (%s); an operator can replay it", j.Changelist, class)}, URL: j.Swarm.JobURL})
}

func findingsMessage(n int) string {
	switch n {
	case 0:
		return "Criticizer review done: no findings"
	case 1:
		return "Criticizer review done: 1 finding, e-mailed to the author"
	}
	return fmt.Sprintf("Criticizer review done: %d findings, e-mailed to the author", n)
}

func (r *Reporter) call(ctx context.Context, j *job.Job, c job.Callback, report Report) error {
	u := j.Swarm.URL(c)
	if u == "" || j.Swarm.Called(c) != "" {
		return nil
	}
	if err := r.Swarm.Call(ctx, u, report); err != nil {
		return fmt.Errorf("swarm %s callback: %w", c, err)
	}
	now := job.Now()
	if r.Now != nil {
		now = r.Now().UTC()
	}
	// The call happened: record it with a context that outlives a lost lease.
	err := r.Jobs.RecordCallback(context.WithoutCancel(ctx), j.ID, c, now)
	switch {
	case errors.Is(err, job.ErrConflict):
		r.Log.WarnContext(ctx, "swarm callback was already recorded by another attempt", "callback", c)
	case err != nil:
		// Not an error of the stage: the callback was made. A later replay may repeat it.
		r.Log.WarnContext(ctx, "recording the swarm callback failed", "callback", c, "err", err, "error_class", failure.Classify(err))
	default:
		r.Log.InfoContext(ctx, "swarm callback made", "callback", c, "review", j.Swarm.Review)
	}
	return nil
}

// NewReporter returns a Reporter that calls back through the URLs kept with
// each job (they carry Swarm's own per-run token: no Swarm login is needed).
func NewReporter(jobs Recorder, log *slog.Logger) *Reporter {
	return &Reporter{Swarm: &Client{}, Jobs: jobs, Log: log}
}

// DeadLettered is the stage runtime's after-dead-letter hook: it reports
// {fail} to the job's Swarm run. A failed callback is logged; the dead
// letter stands either way.
func (r *Reporter) DeadLettered(ctx context.Context, j *job.Job, class failure.Class) {
	if err := r.Fail(ctx, j, class); err != nil {
		r.Log.WarnContext(ctx, "swarm fail callback failed", "err", err, "error_class", failure.Classify(err))
	}
}
