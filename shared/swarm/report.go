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

// Caller makes a run's callbacks (Client).
type Caller interface {
	Update(ctx context.Context, callbackURL string, report Report) error
	Finish(ctx context.Context, callbackURL, link string) error
}

// Reporter reports a job's progress to its Swarm test run, each callback at
// most once per job: it is skipped when the job record already has it, made,
// then recorded with a conditional write. Only a crash between the call and
// the record repeats a call (Swarm takes a repeated status as the same
// status); a returned or replayed message finds the record and does not.
type Reporter struct {
	Swarm Caller
	Jobs  Recorder
	Log   *slog.Logger
	Now   func() time.Time
}

const updateTimeout = 5 * time.Second

// Swarm's test-run status words ({update}'s status; its API's vocabulary,
// not job states).
const (
	statusRunning = "running"
	statusPass    = "pass"
	statusFail    = "fail"
)

// Update tells Swarm the review is running and links the run to the job.
func (r *Reporter) Update(ctx context.Context, j *job.Job) error {
	if j.Swarm == nil || j.Swarm.UpdateURL == "" || j.Swarm.Called(job.CallbackUpdate) != "" {
		return nil
	}
	// Short: it runs before the fetch, which must not wait on a slow Swarm.
	ctx, cancel := context.WithTimeout(ctx, updateTimeout)
	defer cancel()
	rep := Report{Status: statusRunning, URL: j.Swarm.JobURL,
		Messages: []string{fmt.Sprintf("Criticizer is reviewing change %d (version %d)", j.Changelist, j.ReviewVersion)}}
	if err := r.Swarm.Update(ctx, j.Swarm.UpdateURL, rep); err != nil {
		return fmt.Errorf("swarm update callback: %w", err)
	}
	r.record(ctx, j, job.CallbackUpdate)
	return nil
}

// Outcome is a finished review as its test run shows it.
type Outcome struct {
	Findings int
	// Gate is the severity at or above which findings fail the run ("":
	// gating off); Blocking counts those findings and Worst names the
	// worst of them in one line of our own words (never model text).
	Gate     string
	Blocking int
	Worst    string
	// Where says where the findings went ("on the review", "by e-mail").
	Where string
}

// Blocks reports whether the outcome fails the run.
func (o Outcome) Blocks() bool { return o.Gate != "" && o.Blocking > 0 }

// Messages are the run's final messages (each fits Swarm's 80 characters).
func (o Outcome) Messages() []string {
	if o.Blocks() {
		return []string{fmt.Sprintf("Criticizer: %d finding(s) at or above %s block this review", o.Blocking, o.Gate),
			"Worst: " + o.Worst, fmt.Sprintf("%d finding(s) in all, %s; details on the job page", o.Findings, o.Where)}
	}
	switch o.Findings {
	case 0:
		return []string{"Criticizer review done: no findings"}
	case 1:
		return []string{"Criticizer review done: 1 finding, " + o.Where}
	}
	return []string{fmt.Sprintf("Criticizer review done: %d findings, %s", o.Findings, o.Where)}
}

// final is the callback and report that end j's run with outcome o:
// passed, or failed when the outcome blocks (the opt-in gate).
func final(j *job.Job, o Outcome) (job.Callback, Report) {
	status, c := statusPass, job.CallbackPass
	if o.Blocks() {
		status, c = statusFail, job.CallbackFail
	}
	return c, Report{Status: status, Messages: o.Messages(), URL: linkOf(j)}
}

// Fail reports a review that was dead-lettered: the review could not run,
// which says nothing of the change. The error class only, never the error
// text (it may quote upstream replies).
func (r *Reporter) Fail(ctx context.Context, j *job.Job, class failure.Class) error {
	return r.finish(ctx, j, job.CallbackFail, Report{Status: statusFail, URL: linkOf(j), Messages: []string{
		fmt.Sprintf("Criticizer could not run the review of change %d (%s)", j.Changelist, class),
		"Not a finding: the review did not run; an operator can replay it"}})
}

func linkOf(j *job.Job) string {
	if j.Swarm == nil {
		return ""
	}
	return j.Swarm.JobURL
}

// finish ends the run: {update} with the final status, messages and link
// (the only callback Swarm reads messages from), then {pass} or {fail}
// with the link as a form parameter (they set the completion time). The
// record of c covers both: a retry repeats at most the same {update}.
func (r *Reporter) finish(ctx context.Context, j *job.Job, c job.Callback, rep Report) error {
	if j.Swarm == nil || j.Swarm.Called(c) != "" {
		return nil
	}
	if u := j.Swarm.UpdateURL; u != "" {
		if err := r.Swarm.Update(ctx, u, rep); err != nil {
			return fmt.Errorf("swarm update callback (%s): %w", c, err)
		}
	}
	if u := j.Swarm.URL(c); u != "" {
		if err := r.Swarm.Finish(ctx, u, rep.URL); err != nil {
			return fmt.Errorf("swarm %s callback: %w", c, err)
		}
	}
	r.record(ctx, j, c)
	return nil
}

func (r *Reporter) record(ctx context.Context, j *job.Job, c job.Callback) {
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
