package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/criticizer/criticizer/shared/job"
)

// resolve is the spec's post-replay annotation: once a replayed (or
// restarted) job is verified to have succeeded, the operator records the
// resolution — what was wrong, what fixed it, the ticket — in the job's
// history, next to the note the replay itself recorded.
//
//	criticizer resolve JOB_ID --note TEXT
func (a *app) resolve(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("resolve", flag.ContinueOnError)
	note := fs.String("note", "", "the resolution: cause, fix, ticket (kept in the job history)")
	if err := fs.Parse(reorder(args)); err != nil {
		return err
	}
	if fs.NArg() != 1 || *note == "" {
		return errors.New("usage: criticizer resolve JOB_ID --note TEXT")
	}
	j, err := a.jobs.Get(ctx, fs.Arg(0))
	if err != nil {
		return err
	}
	outcome, err := verifyReplay(j)
	if err != nil {
		return err
	}
	if err := a.record(ctx, j.ID, "replay_resolved", outcome+"; "+*note); err != nil {
		return err
	}
	fmt.Fprintf(a.out, "job %s: %s; resolution recorded\n", j.ID, outcome)
	return nil
}

// verifyReplay checks that j was replayed or restarted and has succeeded
// since, and says so; anything else is not a verified replay.
func verifyReplay(j *job.Job) (string, error) {
	replays, last := 0, ""
	for _, e := range j.History {
		if e.Type == job.EventReplayed || e.Type == job.EventRestarted {
			replays++
			last = e.At
		}
	}
	if replays == 0 {
		return "", fmt.Errorf("job %s was never replayed or restarted: nothing to resolve", j.ID)
	}
	if j.State != job.Succeeded {
		return "", fmt.Errorf("job %s is %s at %s: the replay is not verified until the job succeeds (see `criticizer job %s`)", j.ID, j.State, j.Stage, j.ID)
	}
	return fmt.Sprintf("verified: succeeded after %d replay(s), the last at %s", replays, last), nil
}
