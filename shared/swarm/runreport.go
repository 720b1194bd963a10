package swarm

import (
	"context"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
)

// RunReport is the Swarm test-run report channel: a finished review's outcome
// reported to its run, a delivery.Channel of Finished. Its record is the
// job, not an outbox row (the run's callbacks are kept in the job,
// job.SwarmRun): Send makes the run's final callbacks unless the job
// records them, and records them after (Reporter.finish); Lookup reads that
// record; Classify keeps the error's class. No callback "may have
// happened" in a way a repeat could harm: Swarm takes a repeated status as
// the same status.
type RunReport struct{ Reporter *Reporter }

// Finished is a review's outcome for its job's test run.
type Finished struct {
	Job     *job.Job
	Outcome Outcome
}

// Send ends the run with f's outcome ({update}, then {pass} or {fail}) and
// returns the callback made.
func (t RunReport) Send(ctx context.Context, f Finished) (string, error) {
	c, rep := final(f.Job, f.Outcome)
	return string(c), t.Reporter.finish(ctx, f.Job, c, rep)
}

// Lookup reports whether the job records f's final callback as made.
func (t RunReport) Lookup(_ context.Context, f Finished, _ int64) (string, bool, error) {
	if f.Job.Swarm == nil {
		return "", false, nil
	}
	c, _ := final(f.Job, f.Outcome)
	return string(c), f.Job.Swarm.Called(c) != "", nil
}

// Classify keeps the class: a failed callback is retried when it is retryable; a
// refusal for good (the run was deleted, …) is not.
func (RunReport) Classify(err error) delivery.Verdict {
	return delivery.Verdict{Class: failure.Classify(err)}
}
