package sweep

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/envelope"
	"github.com/criticizer/criticizer/shared/job"
)

type fakeJobs struct {
	due         []*job.Job
	conflict    map[string]bool
	rescheduled map[string]time.Time
}

func (f *fakeJobs) Due(context.Context, time.Time, int32) ([]*job.Job, error) { return f.due, nil }
func (f *fakeJobs) Reschedule(_ context.Context, j *job.Job, _, next time.Time, _ string) error {
	if f.conflict[j.ID] {
		return job.ErrConflict
	}
	f.rescheduled[j.ID] = next
	return nil
}

type fakeQueue struct{ sent []envelope.Envelope }

func (q *fakeQueue) Send(_ context.Context, e envelope.Envelope) error {
	q.sent = append(q.sent, e)
	return nil
}

func TestSweep(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	running := func(id string, expires time.Duration) *job.Job {
		return &job.Job{ID: id, State: job.Running, Stage: domain.StageLLM, Stages: map[domain.Stage]*job.StageRecord{
			domain.StageLLM: {Status: job.StageRunning, Attempts: 1, LeaseExpiresAt: job.FormatTime(now.Add(expires))}}}
	}
	queued := &job.Job{ID: "queued", State: job.Queued, Stage: domain.StageLLM, Stages: map[domain.Stage]*job.StageRecord{domain.StageLLM: {Status: job.StagePending}}}
	jobs := &fakeJobs{
		due: []*job.Job{
			queued,                          // next-stage message lost: re-enqueue
			running("live", 30*time.Second), // live lease: postpone
			// Ended a second ago on our clock: within the 2 s skew budget the
			// owner's clock may still say it holds it.
			running("skew", -time.Second),
			running("expired", -10*time.Second), // expired: re-enqueue
			{ID: "done", State: job.Succeeded},  // terminal: stale index entry
			{ID: "moved", State: job.Queued, Stage: domain.StageNotify},
		},
		conflict:    map[string]bool{"moved": true},
		rescheduled: map[string]time.Time{},
	}
	q := &fakeQueue{}
	s := &Sweeper{Jobs: jobs, Queue: q, Lease: time.Minute, Skew: 2 * time.Second, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Now: func() time.Time { return now }}
	rep, err := s.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep != (Report{Due: 6, Enqueued: 2, Postponed: 2, Conflicted: 1}) {
		t.Errorf("report %+v", rep)
	}
	var ids []string
	for _, e := range q.sent {
		ids = append(ids, e.JobID)
		if e.Stage != domain.StageLLM {
			t.Errorf("%s re-enqueued at %s, want its current stage", e.JobID, e.Stage)
		}
	}
	if len(ids) != 2 || ids[0] != "queued" || ids[1] != "expired" {
		t.Errorf("re-enqueued %v, want queued and expired", ids)
	}
	if got := jobs.rescheduled["live"]; !got.After(now.Add(90 * time.Second)) {
		t.Errorf("live lease postponed to %s, want past its end plus a lease", got)
	}
}
