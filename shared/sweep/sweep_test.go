package sweep

import (
	"bytes"
	"fmt"
	"strings"

	"context"
	"github.com/criticizer/criticizer/shared/obs"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/envelope"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/store"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
)

type fakeQueue struct{ sent []envelope.Envelope }

func (q *fakeQueue) Send(_ context.Context, e envelope.Envelope) error {
	q.sent = append(q.sent, e)
	return nil
}

// racing is the jobs table in which job "moved" changes between the
// sweeper's read and its write, so its seq-guarded reschedule is refused.
type racing struct{ *store.Store }

func (r racing) Due(ctx context.Context, now time.Time, limit int32) ([]*job.Job, error) {
	due, err := r.Store.Due(ctx, now, limit)
	for _, j := range due {
		if j.ID == "moved" {
			changed := *j
			changed.Seq++
			if err := r.Put(ctx, &changed); err != nil {
				return nil, err
			}
		}
	}
	return due, err
}

// table returns the store over an in-process table holding jobs.
func table(t *testing.T, jobs ...*job.Job) *store.Store {
	t.Helper()
	st := store.New(dynamotest.New(), dynamotest.Table)
	for _, j := range jobs {
		if err := st.Put(context.Background(), j); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

func TestSweep(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	// The jobs table, every job due (on the sweep index, deadline passed).
	due := now.Add(-time.Second)
	onIndex := func(j *job.Job) *job.Job {
		j.Seq, j.SweepShard, j.SweepAt = 1, job.SweepShard, job.FormatTime(due)
		return j
	}
	running := func(id string, expires time.Duration) *job.Job {
		return onIndex(&job.Job{ID: id, State: job.Running, Stage: domain.StageLLM, Stages: map[domain.Stage]*job.StageRecord{
			domain.StageLLM: {Status: job.StageRunning, Attempts: 1, LeaseExpiresAt: job.FormatTime(now.Add(expires))}}})
	}
	jobs := racing{table(t,
		// next-stage message lost: re-enqueue
		onIndex(&job.Job{ID: "queued", State: job.Queued, Stage: domain.StageLLM, Stages: map[domain.Stage]*job.StageRecord{domain.StageLLM: {Status: job.StagePending}}}),
		running("live", 30*time.Second), // live lease: postpone
		// Ended a second ago on our clock: within the 2 s skew budget the
		// owner's clock may still say it holds it.
		running("skew", -time.Second),
		running("expired", -10*time.Second),                 // expired: re-enqueue
		onIndex(&job.Job{ID: "done", State: job.Succeeded}), // terminal: stale index entry
		onIndex(&job.Job{ID: "moved", State: job.Queued, Stage: domain.StageNotify}),
	)}
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

// ticking is a clock that moves on by step every time it is read.
type ticking struct {
	now  time.Time
	step time.Duration
}

func (c *ticking) read() time.Time { c.now = c.now.Add(c.step); return c.now }

// A pass stops at its limit or its time budget, counts the due jobs it did
// not reach as its backlog (paged by SweepBacklog), and the next pass
// starts with them: they are still due, oldest first.
func TestSweepBoundedPassResumes(t *testing.T) {
	start := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name        string
		limit       int32
		budget      time.Duration
		wantPass1   int
		wantBacklog int
	}{
		{"limit", 3, 0, 3, 1},                 // 5 due, 3 taken; the one more read says more are due
		{"time", 100, 25 * time.Second, 2, 3}, // the clock moves 10 s a read: 2 jobs before 25 s
	} {
		t.Run(tt.name, func(t *testing.T) {
			var due []*job.Job
			for i := range 5 {
				due = append(due, &job.Job{ID: fmt.Sprintf("j%d", i), State: job.Queued, Stage: domain.StageFetch, Seq: 1, SweepShard: job.SweepShard,
					SweepAt: job.FormatTime(start.Add(-time.Hour + time.Duration(i)*time.Second)),
					Stages:  map[domain.Stage]*job.StageRecord{domain.StageFetch: {Status: job.StagePending}}})
			}
			jobs := table(t, due...)
			clock := &ticking{now: start, step: 10 * time.Second}
			if tt.budget == 0 {
				clock.step = 0
			}
			var metrics bytes.Buffer
			q := &fakeQueue{}
			s := &Sweeper{Jobs: jobs, Queue: q, Lease: time.Hour, Limit: tt.limit, Budget: tt.budget, Now: clock.read,
				Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: obs.NewMetrics(&metrics, "test")}
			rep, err := s.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if rep.Enqueued != tt.wantPass1 || rep.Backlog != tt.wantBacklog {
				t.Errorf("pass 1: %+v, want %d enqueued, backlog %d", rep, tt.wantPass1, tt.wantBacklog)
			}
			if !strings.Contains(metrics.String(), fmt.Sprintf(`"SweepBacklog":%d`, tt.wantBacklog)) {
				t.Errorf("metrics %s, want SweepBacklog %d", metrics.String(), tt.wantBacklog)
			}
			first := len(q.sent)
			s.Budget = 0 // the next pass, with time enough
			if _, err := s.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			seen := map[string]int{}
			for _, e := range q.sent {
				seen[e.JobID]++
			}
			if len(q.sent) != 5 || len(seen) != 5 {
				t.Errorf("two passes enqueued %d messages for %v (%d in the first), want each of the 5 jobs once", len(q.sent), seen, first)
			}
		})
	}
}
