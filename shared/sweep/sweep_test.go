package sweep

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/envelope"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/store/memstore"
)

type fakeQueue struct{ sent []envelope.Envelope }

func (q *fakeQueue) Send(_ context.Context, e envelope.Envelope) error {
	q.sent = append(q.sent, e)
	return nil
}

func TestSweep(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	// The in-memory jobs table, every job due (on the sweep index, deadline passed).
	due := now.Add(-time.Second)
	onIndex := func(j *job.Job) *job.Job {
		j.Seq, j.SweepShard, j.SweepAt = 1, job.SweepShard, job.FormatTime(due)
		return j
	}
	running := func(id string, expires time.Duration) *job.Job {
		return onIndex(&job.Job{ID: id, State: job.Running, Stage: domain.StageLLM, Stages: map[domain.Stage]*job.StageRecord{
			domain.StageLLM: {Status: job.StageRunning, Attempts: 1, LeaseExpiresAt: job.FormatTime(now.Add(expires))}}})
	}
	jobs := memstore.New()
	for _, j := range []*job.Job{
		// next-stage message lost: re-enqueue
		onIndex(&job.Job{ID: "queued", State: job.Queued, Stage: domain.StageLLM, Stages: map[domain.Stage]*job.StageRecord{domain.StageLLM: {Status: job.StagePending}}}),
		running("live", 30*time.Second), // live lease: postpone
		// Ended a second ago on our clock: within the 2 s skew budget the
		// owner's clock may still say it holds it.
		running("skew", -time.Second),
		running("expired", -10*time.Second),                 // expired: re-enqueue
		onIndex(&job.Job{ID: "done", State: job.Succeeded}), // terminal: stale index entry
		onIndex(&job.Job{ID: "moved", State: job.Queued, Stage: domain.StageNotify}),
	} {
		jobs.Put(j)
	}
	// "moved" changes between the sweeper's read and its reschedule: the
	// seq-guarded write is refused.
	jobs.InjectFor("reschedule", "moved", memstore.Fault{Err: job.ErrConflict})
	notAt := map[string]string{}
	for _, id := range []string{"queued", "live", "skew", "expired"} {
		j, _ := jobs.Get(context.Background(), id)
		notAt[id] = j.SweepAt
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
	slices.Sort(ids)
	if len(ids) != 2 || ids[0] != "expired" || ids[1] != "queued" {
		t.Errorf("re-enqueued %v, want queued and expired", ids)
	}
	live, _ := jobs.Get(context.Background(), "live")
	if got, _ := job.ParseTime(live.SweepAt); !got.After(now.Add(90 * time.Second)) {
		t.Errorf("live lease postponed to %s, want past its end plus a lease", live.SweepAt)
	}
	for id, was := range notAt {
		if j, _ := jobs.Get(context.Background(), id); j.SweepAt == was || j.History[len(j.History)-1].Type != job.EventSwept {
			t.Errorf("%s: sweep deadline %s (was %s), history %+v: want it moved and recorded", id, j.SweepAt, was, j.History)
		}
	}
}
