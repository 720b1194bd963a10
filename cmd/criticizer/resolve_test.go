package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/store"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
)

// The post-replay annotation is recorded only for a replay that is
// verified: the job was replayed or restarted and has succeeded since.
func TestVerifyReplay(t *testing.T) {
	replayed := []job.Event{{Type: job.EventCreated}, {Type: job.EventDeadLettered}, {At: "2026-11-22T12:00:00.000Z", Type: job.EventReplayed}}
	for _, tt := range []struct {
		name  string
		j     *job.Job
		want  string // in the outcome, or in the error
		valid bool
	}{
		{"replayed and succeeded", &job.Job{ID: "j", State: job.Succeeded, History: replayed}, "succeeded after 1 replay(s), the last at 2026-11-22T12:00:00.000Z", true},
		{"restarted and succeeded", &job.Job{ID: "j", State: job.Succeeded, History: []job.Event{{Type: job.EventRestarted}}}, "after 1 replay(s)", true},
		{"replayed, failed again", &job.Job{ID: "j", State: job.Failed, History: replayed}, "not verified", false},
		{"replayed, still running", &job.Job{ID: "j", State: job.Running, History: replayed}, "not verified", false},
		{"never replayed", &job.Job{ID: "j", State: job.Succeeded, History: []job.Event{{Type: job.EventCreated}}}, "never replayed", false},
	} {
		got, err := verifyReplay(tt.j)
		if tt.valid != (err == nil) {
			t.Errorf("%s: %q, %v", tt.name, got, err)
			continue
		}
		text := got
		if err != nil {
			text = err.Error()
		}
		if !strings.Contains(text, tt.want) {
			t.Errorf("%s: %q, want it to say %q", tt.name, text, tt.want)
		}
	}
}

// `criticizer resolve` records in the job's history the resolution it
// reports: the verified outcome and the operator's note, as one operator
// event; a replay that is not verified records nothing.
func TestResolveRecordsWhatItReports(t *testing.T) {
	ctx := context.Background()
	jobs := store.New(dynamotest.New(), dynamotest.Table)
	now := job.Now()
	j := job.New("j-resolve", "k-resolve", 7, 1, now, time.Minute)
	if err := jobs.Create(ctx, j, &store.Idempotency{Key: j.IdempotencyKey, JobID: j.ID, CreatedAt: j.CreatedAt}); err != nil {
		t.Fatal(err)
	}
	l := func(owner string) job.Lease { return job.Lease{Owner: owner, Now: now, TTL: time.Minute} }
	if _, err := jobs.Claim(ctx, j.ID, domain.StageFetch, l("o1"), 3); err != nil {
		t.Fatal(err)
	}
	if _, err := jobs.DeadLetter(ctx, j.ID, domain.StageFetch, l("o1"), job.FailureInfo{Class: failure.AuthDenied}, "dl1", "{}"); err != nil {
		t.Fatal(err)
	}
	if _, err := jobs.Replay(ctx, j.ID, domain.StageFetch, "dl1", failure.AuthDenied, now, time.Minute); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	a := &app{out: &out, jobs: jobs}
	if err := a.resolve(ctx, []string{j.ID, "--note", "p4 password rotated; OPS-12"}); err == nil {
		t.Fatal("a replay that has not succeeded yet was resolved")
	}
	for _, st := range domain.Stages {
		if _, err := jobs.Claim(ctx, j.ID, st, l("w-"+string(st)), 3); err != nil {
			t.Fatal(err)
		}
		if _, err := jobs.Complete(ctx, j.ID, st, l("w-"+string(st)), job.Result{}, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.resolve(ctx, []string{j.ID, "--note", "p4 password rotated; OPS-12"}); err != nil {
		t.Fatal(err)
	}
	got, err := jobs.Get(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	var recorded []job.Event
	for _, e := range got.History {
		if e.Type == "operator_replay_resolved" {
			recorded = append(recorded, e)
		}
	}
	if len(recorded) != 1 {
		t.Fatalf("%d resolutions recorded, want 1 (history %+v)", len(recorded), got.History)
	}
	reported := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(out.String()), "job j-resolve: "), "; resolution recorded")
	if d := recorded[0].Detail; !strings.Contains(d, reported) || !strings.Contains(d, "p4 password rotated; OPS-12") || !strings.Contains(reported, "succeeded after 1 replay(s)") {
		t.Errorf("recorded %q, reported %q: want the reported outcome and the note recorded", d, reported)
	}
	if recorded[0].Actor == "" {
		t.Error("the resolution names no operator")
	}
}
