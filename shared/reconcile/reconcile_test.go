package reconcile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/envelope"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/obs"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/store"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
	"github.com/criticizer/criticizer/shared/swarm"
)

type fakeRows struct {
	suspects  []outbox.Suspect
	verifyArg bool
	noMove    bool // MarkReconciling finds the row moved on
	calls     []string
}

func (f *fakeRows) Suspects(_ context.Context, _, _, _ time.Time, verifySent bool, _ int) ([]outbox.Suspect, error) {
	f.verifyArg = verifySent
	return f.suspects, nil
}

// label names a row in the recorded calls: an e-mail by its recipient, a
// comment by its item.
func label(k outbox.Ref) string {
	if it, ok := k.(outbox.Item); ok {
		return it.ID
	}
	return k.String()[strings.LastIndex(k.String(), "/")+1:]
}

func (f *fakeRows) MarkReconciling(_ context.Context, k outbox.Ref, observed outbox.Status, reason string, _ time.Time) (bool, error) {
	f.calls = append(f.calls, "mark:"+label(k)+":"+string(observed)+":"+reason)
	return !f.noMove, nil
}
func (f *fakeRows) Verified(_ context.Context, k outbox.Ref, _ time.Time) error {
	f.calls = append(f.calls, "verified:"+label(k))
	return nil
}
func (f *fakeRows) Backfill(_ context.Context, k outbox.Ref, evidence string, _ time.Time) (bool, error) {
	f.calls = append(f.calls, "backfill:"+label(k)+":"+evidence)
	return true, nil
}
func (f *fakeRows) RequeueReconciled(_ context.Context, k outbox.Ref, _ time.Time) (bool, error) {
	f.calls = append(f.calls, "requeue:"+label(k))
	return true, nil
}

// jobsIn is the jobs table holding one job per id → state.
type jobsIn map[string]job.State

func (f jobsIn) table() *store.Store {
	st := store.New(dynamotest.New(), dynamotest.Table)
	for id, state := range f {
		if err := st.Put(context.Background(), &job.Job{ID: id, Changelist: 7, ReviewVersion: 1, State: state, Stage: domain.StageNotify, TraceID: "t"}); err != nil {
			panic(err)
		}
	}
	return st
}

// fakeQueue records the redeliveries sent; fail makes the send fail.
type fakeQueue struct {
	sent []envelope.Envelope
	fail bool
}

func (q *fakeQueue) Send(_ context.Context, e envelope.Envelope) error {
	if q.fail {
		return errors.New("queue down")
	}
	q.sent = append(q.sent, e)
	return nil
}

type fakeEvidence map[string]bool // Message-ID → delivered; missing: no record

func (l fakeEvidence) Delivered(_ context.Context, id string) (bool, error) {
	if id == "error" {
		return false, errors.New("lookup down")
	}
	return l[id], nil
}

func suspect(rcpt string, st outbox.Status) outbox.Suspect {
	return outbox.Suspect{Row: outbox.Row{Changelist: 7, ReviewVersion: 1, Recipient: rcpt, Status: st, JobID: "job-running"}}
}

func TestRun(t *testing.T) {
	id := func(r string) string {
		return delivery.Key{Changelist: 7, Recipient: r, ReviewVersion: 1}.MessageID("example.com")
	}
	tests := []struct {
		name       string
		rows       []outbox.Suspect
		log        fakeEvidence
		noEvidence bool
		noMove     bool
		jobs       jobsIn
		want       []string
		wantRep    Report
		wantPage   string
	}{
		{"stuck send the provider has: backfilled", []outbox.Suspect{suspect("a@x.org", outbox.Sending)}, fakeEvidence{id("a@x.org"): true}, false, false, nil,
			[]string{"mark:a@x.org:sending:" + ReasonStuck, "backfill:a@x.org:" + id("a@x.org")}, Report{Examined: 1, Backfilled: 1}, `"OutboxReconciling":0`},
		{"stuck send with no record: requeued", []outbox.Suspect{suspect("a@x.org", outbox.Sending)}, fakeEvidence{}, false, false, nil,
			[]string{"mark:a@x.org:sending:" + ReasonStuck, "requeue:a@x.org"}, Report{Examined: 1, Requeued: 1}, `"OutboxReconciling":0`},
		{"sent with evidence: verified only", []outbox.Suspect{suspect("a@x.org", outbox.Sent)}, fakeEvidence{id("a@x.org"): true}, false, false, nil,
			[]string{"verified:a@x.org"}, Report{Examined: 1, Verified: 1}, `"OutboxReconciling":0`},
		{"sent without evidence: reconciling, requeued", []outbox.Suspect{suspect("a@x.org", outbox.Sent)}, fakeEvidence{}, false, false, nil,
			[]string{"mark:a@x.org:sent:" + ReasonUnproven, "requeue:a@x.org"}, Report{Examined: 1, Requeued: 1}, `"OutboxReconciling":0`},
		{"no provider evidence: stuck row waits for an operator and pages", []outbox.Suspect{suspect("a@x.org", outbox.Sending)}, nil, true, false, nil,
			[]string{"mark:a@x.org:sending:" + ReasonStuck}, Report{Examined: 1, Reconciling: 1}, `"OutboxReconciling":1`},
		{"row moved on meanwhile: left alone", []outbox.Suspect{suspect("a@x.org", outbox.Sending)}, fakeEvidence{}, false, true, nil,
			[]string{"mark:a@x.org:sending:" + ReasonStuck}, Report{Examined: 1}, `"OutboxReconciling":0`},
		{"no record, job still running: requeued", []outbox.Suspect{suspect("a@x.org", outbox.Sent)}, fakeEvidence{}, false, false, jobsIn{"job-running": job.RetryWait},
			[]string{"mark:a@x.org:sent:" + ReasonUnproven, "requeue:a@x.org"}, Report{Examined: 1, Requeued: 1}, `"OutboxReconciling":0`},
		{"no record, job dead-lettered: left for an operator", []outbox.Suspect{suspect("a@x.org", outbox.Sent)}, fakeEvidence{}, false, false, jobsIn{"job-running": job.Failed},
			[]string{"mark:a@x.org:sent:" + ReasonUnproven}, Report{Examined: 1, Reconciling: 1}, `"OutboxReconciling":1`},
		{"no record, job gone: left for an operator", []outbox.Suspect{suspect("a@x.org", outbox.Sending)}, fakeEvidence{}, false, false, jobsIn{},
			[]string{"mark:a@x.org:sending:" + ReasonStuck}, Report{Examined: 1, Reconciling: 1}, `"OutboxReconciling":1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows := &fakeRows{suspects: tt.rows, noMove: tt.noMove}
			var metrics bytes.Buffer
			r := &Reconciler{Rows: rows, FromDomain: "example.com", Window: time.Minute, Lookback: time.Hour,
				Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: obs.NewMetrics(&metrics, "test")}
			if !tt.noEvidence {
				r.Evidence = tt.log
			}
			if tt.jobs != nil {
				r.Jobs = tt.jobs.table()
			}
			rep, err := r.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			// Every row moved to reconciling is a detected violation, and
			// every pass reports the count (the OutboxViolations alarm).
			tt.wantRep.Violations = strings.Count(strings.Join(tt.want, "|"), "mark:")
			if tt.noMove {
				tt.wantRep.Violations = 0
			}
			if !strings.Contains(metrics.String(), fmt.Sprintf(`"OutboxViolations":%d`, tt.wantRep.Violations)) {
				t.Errorf("metrics %s, want OutboxViolations %d", metrics.String(), tt.wantRep.Violations)
			}
			if rep != tt.wantRep {
				t.Errorf("report %+v, want %+v", rep, tt.wantRep)
			}
			if strings.Join(rows.calls, "|") != strings.Join(tt.want, "|") {
				t.Errorf("calls %q, want %q", rows.calls, tt.want)
			}
			if rows.verifyArg == tt.noEvidence {
				t.Errorf("verifySent = %v with evidence %v", rows.verifyArg, !tt.noEvidence)
			}
			if !strings.Contains(metrics.String(), tt.wantPage) {
				t.Errorf("metrics %s, want %s", metrics.String(), tt.wantPage)
			}
		})
	}
}

// Rule OB-5, end to end for a succeeded job: a row marked sent without
// provider evidence is detected (and pages), requeued once and handed to
// the notify stage as a redelivery that names who asked and why; the job is
// not reopened. If the redelivery cannot be sent, the row goes back to
// reconciling for an operator instead of waiting for a run that never comes.
func TestSucceededJobsRowIsRedelivered(t *testing.T) {
	for _, fail := range []bool{false, true} {
		rows := &fakeRows{suspects: []outbox.Suspect{suspect("a@x.org", outbox.Sent)}}
		jobs := jobsIn{"job-running": job.Succeeded}.table()
		q := &fakeQueue{fail: fail}
		var metrics bytes.Buffer
		r := &Reconciler{Rows: rows, Evidence: fakeEvidence{}, Jobs: jobs, Redeliver: q, FromDomain: "example.com", Window: time.Minute, Lookback: time.Hour,
			Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: obs.NewMetrics(&metrics, "test")}
		rep, err := r.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"mark:a@x.org:sent:" + ReasonUnproven, "requeue:a@x.org"}
		wantRep := Report{Examined: 1, Requeued: 1, Redelivered: 1, Violations: 1}
		if fail {
			want = append(want, "mark:a@x.org:pending:redelivery could not be enqueued")
			wantRep = Report{Examined: 1, Reconciling: 1, Violations: 1, Errors: 1}
		}
		if strings.Join(rows.calls, "|") != strings.Join(want, "|") || rep != wantRep {
			t.Errorf("send fails %v: calls %q, report %+v; want %q, %+v", fail, rows.calls, rep, want, wantRep)
		}
		if !strings.Contains(metrics.String(), `"OutboxViolations":1`) {
			t.Errorf("send fails %v: the detected violation does not page: %s", fail, metrics.String())
		}
		if fail {
			continue
		}
		if len(q.sent) != 1 {
			t.Fatalf("%d redeliveries sent, want 1", len(q.sent))
		}
		e := q.sent[0]
		if e.Stage != domain.StageNotify || e.JobID != "job-running" || e.Replay == nil || e.Replay.Mode != envelope.ModeRedeliver ||
			e.Replay.RequestedBy != "reconciler" || !strings.Contains(e.Replay.Note, ReasonUnproven) || e.Validate() != nil {
			t.Errorf("redelivery %+v (replay %+v)", e, e.Replay)
		}
		if j, _ := jobs.Get(context.Background(), "job-running"); j.State != job.Succeeded {
			t.Errorf("job %s: the reconciler must not reopen a succeeded job", j.State)
		}
	}
}

// fakeComments is the review's marked comments as Swarm lists them.
type fakeComments struct {
	by       map[int64]map[swarm.Marker]swarm.Comment
	down     bool
	listings int
	afters   []int64
}

func (f *fakeComments) Marked(_ context.Context, review int64) (map[swarm.Marker]swarm.Comment, error) {
	f.listings++
	if f.down {
		return nil, errors.New("swarm down")
	}
	return f.by[review], nil
}

// afters records the comment ids listings started after (0: a whole listing).
func (f *fakeComments) MarkedAfter(ctx context.Context, review, after int64) (map[swarm.Marker]swarm.Comment, error) {
	all, err := f.Marked(ctx, review)
	f.afters = append(f.afters, after)
	out := map[swarm.Marker]swarm.Comment{}
	for m, c := range all {
		if c.ID > after {
			out[m] = c
		}
	}
	return out, err
}

// A comment row's lookup reads the review's comments after the id its row
// recorded before the send (LookupAfter), not the review's history; a
// second row of the review reuses that listing unless it needs an earlier
// start; a task change's bound is just before its finding's comment, and a
// row without a bound is looked up over the whole review.
func TestCommentLookupStartsAfterTheRowsBound(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	stuck := func(item string, after int64) outbox.Suspect {
		return outbox.Suspect{Row: outbox.Row{Channel: outbox.ChannelSwarmComments, Thread: 885, Item: item, Status: outbox.Sending,
			JobID: "job-running", SendStartedAt: job.FormatTime(now.Add(-5 * time.Minute)), LookupAfter: after}}
	}
	marker := func(kind, id string) swarm.Marker { return swarm.CommentKey{Review: 885, Kind: kind, ID: id}.Marker() }
	has := map[swarm.Marker]swarm.Comment{
		marker("finding", "open"): {ID: 40, TaskState: swarm.TaskOpen},
		marker("finding", "fp1"):  {ID: 501},
		marker("summary", "v2"):   {ID: 502},
	}
	tests := []struct {
		name       string
		rows       []outbox.Suspect
		wantAfters []int64
		want       []string
	}{
		{"one row: listed after its bound", []outbox.Suspect{stuck("finding/fp1", 500)}, []int64{500},
			[]string{"mark:finding/fp1:sending:" + ReasonStuck, "backfill:finding/fp1:501"}},
		{"a later bound reuses the listing", []outbox.Suspect{stuck("finding/fp1", 500), stuck("summary/v2", 501)}, []int64{500},
			[]string{"mark:finding/fp1:sending:" + ReasonStuck, "backfill:finding/fp1:501", "mark:summary/v2:sending:" + ReasonStuck, "backfill:summary/v2:502"}},
		{"an earlier bound lists again from it", []outbox.Suspect{stuck("summary/v2", 501), stuck("finding/fp1", 500)}, []int64{501, 500},
			[]string{"mark:summary/v2:sending:" + ReasonStuck, "backfill:summary/v2:502", "mark:finding/fp1:sending:" + ReasonStuck, "backfill:finding/fp1:501"}},
		{"a task change: from just before its finding's comment", []outbox.Suspect{stuck("addressed/open", 39)}, []int64{39},
			[]string{"mark:addressed/open:sending:" + ReasonStuck, "requeue:addressed/open"}},
		{"a row without a bound: the whole review", []outbox.Suspect{stuck("addressed/open", 0)}, nil,
			[]string{"mark:addressed/open:sending:" + ReasonStuck, "requeue:addressed/open"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows := &fakeRows{suspects: tt.rows}
			sw := &fakeComments{by: map[int64]map[swarm.Marker]swarm.Comment{885: has}}
			r := &Reconciler{Rows: rows, Window: 30 * time.Second, CommentWindow: 2 * time.Minute, Lookback: 24 * time.Hour,
				Jobs: jobsIn{"job-running": job.Running}.table(), Now: job.Clock(func() time.Time { return now }),
				Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: obs.NewMetrics(io.Discard, "test"), Comments: sw}
			if _, err := r.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(sw.afters) != fmt.Sprint(tt.wantAfters) || strings.Join(rows.calls, "|") != strings.Join(tt.want, "|") {
				t.Errorf("listings after %v, calls %q; want %v, %q", sw.afters, rows.calls, tt.wantAfters, tt.want)
			}
			if len(tt.wantAfters) == 0 && sw.listings != 1 {
				t.Errorf("%d whole listings, want 1", sw.listings)
			}
		})
	}
}

// Swarm comment rows are reconciled like e-mail rows, their evidence the
// review's comments matched by marker (one listing per review per pass) and
// their window the comment window; a task change's evidence is its
// finding's comment no longer open.
func TestCommentRows(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) string { return job.FormatTime(now.Add(-d)) }
	row := func(item string, st outbox.Status, at string) outbox.Suspect {
		r := outbox.Row{Channel: outbox.ChannelSwarmComments, Thread: 885, Item: item, Status: st, JobID: "job-running"}
		if st == outbox.Sent {
			r.NotifiedAt = at
		} else {
			r.SendStartedAt = at
		}
		return outbox.Suspect{Row: r}
	}
	marker := func(kind, id string) swarm.Marker { return swarm.CommentKey{Review: 885, Kind: kind, ID: id}.Marker() }
	has := map[swarm.Marker]swarm.Comment{
		marker("finding", "fp1"):  {ID: 101, TaskState: swarm.TaskComment},
		marker("summary", "v2"):   {ID: 102},
		marker("finding", "open"): {ID: 103, TaskState: swarm.TaskOpen},
		marker("finding", "done"): {ID: 104, TaskState: swarm.TaskAddressed},
	}
	tests := []struct {
		name     string
		rows     []outbox.Suspect
		off      bool // no Comments: the environment posts none
		down     bool
		want     []string
		wantRep  Report
		listings int
	}{
		{"stuck create Swarm stored: backfilled with the comment id", []outbox.Suspect{row("finding/fp1", outbox.Sending, ago(5*time.Minute))}, false, false,
			[]string{"mark:finding/fp1:sending:" + ReasonStuck, "backfill:finding/fp1:101"}, Report{Examined: 1, Comments: 1, Backfilled: 1, Violations: 1}, 1},
		{"stuck create Swarm never stored: pending again, once", []outbox.Suspect{row("summary/v3", outbox.Sending, ago(5*time.Minute))}, false, false,
			[]string{"mark:summary/v3:sending:" + ReasonStuck, "requeue:summary/v3"}, Report{Examined: 1, Comments: 1, Requeued: 1, Violations: 1}, 1},
		{"sent, comment found: verified", []outbox.Suspect{row("summary/v2", outbox.Sent, ago(time.Hour))}, false, false,
			[]string{"verified:summary/v2"}, Report{Examined: 1, Comments: 1, Verified: 1}, 1},
		{"sent, no comment: a violation, requeued", []outbox.Suspect{row("finding/gone", outbox.Sent, ago(time.Hour))}, false, false,
			[]string{"mark:finding/gone:sent:" + ReasonUnproven, "requeue:finding/gone"}, Report{Examined: 1, Comments: 1, Requeued: 1, Violations: 1}, 1},
		{"inside the comment window (past the e-mail's): not judged yet", []outbox.Suspect{row("finding/fp1", outbox.Sending, ago(90*time.Second))}, false, false,
			nil, Report{}, 0},
		{"task change stuck, task still open: pending again", []outbox.Suspect{row("addressed/open", outbox.Sending, ago(5*time.Minute))}, false, false,
			[]string{"mark:addressed/open:sending:" + ReasonStuck, "requeue:addressed/open"}, Report{Examined: 1, Comments: 1, Requeued: 1, Violations: 1}, 1},
		{"task change stuck, task addressed: backfilled", []outbox.Suspect{row("addressed/done", outbox.Sending, ago(5*time.Minute))}, false, false,
			[]string{"mark:addressed/done:sending:" + ReasonStuck, "backfill:addressed/done:104"}, Report{Examined: 1, Comments: 1, Backfilled: 1, Violations: 1}, 1},
		{"task change sent, reviewer reopened it: verified, not overruled", []outbox.Suspect{row("addressed/open", outbox.Sent, ago(time.Hour))}, false, false,
			[]string{"verified:addressed/open"}, Report{Examined: 1, Comments: 1, Verified: 1}, 1},
		{"two rows of one review: one listing", []outbox.Suspect{row("finding/fp1", outbox.Sent, ago(time.Hour)), row("summary/v2", outbox.Sent, ago(time.Hour))}, false, false,
			[]string{"verified:finding/fp1", "verified:summary/v2"}, Report{Examined: 2, Comments: 2, Verified: 2}, 1},
		{"Swarm down: nothing written, counted", []outbox.Suspect{row("finding/fp1", outbox.Sending, ago(5*time.Minute))}, false, true,
			[]string{"mark:finding/fp1:sending:" + ReasonStuck}, Report{Examined: 1, Comments: 1, Reconciling: 1, Violations: 1, Errors: 1}, 1},
		{"no comments channel: left to the notify stage", []outbox.Suspect{row("finding/fp1", outbox.Sending, ago(5*time.Minute))}, true, false,
			nil, Report{}, 0},
		{"an e-mail row with no provider evidence is not verified", []outbox.Suspect{suspect("a@x.org", outbox.Sent)}, false, false,
			nil, Report{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows := &fakeRows{suspects: tt.rows}
			sw := &fakeComments{by: map[int64]map[swarm.Marker]swarm.Comment{885: has}, down: tt.down}
			var metrics bytes.Buffer
			r := &Reconciler{Rows: rows, Window: 30 * time.Second, CommentWindow: 2 * time.Minute, Lookback: 24 * time.Hour,
				Jobs: jobsIn{"job-running": job.Running}.table(), Now: job.Clock(func() time.Time { return now }),
				Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: obs.NewMetrics(&metrics, "test")}
			if !tt.off {
				r.Comments = sw
			}
			rep, err := r.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(rows.calls, "|") != strings.Join(tt.want, "|") || rep != tt.wantRep {
				t.Errorf("calls %q, report %+v; want %q, %+v", rows.calls, rep, tt.want, tt.wantRep)
			}
			if sw.listings != tt.listings {
				t.Errorf("%d listings of the review, want %d", sw.listings, tt.listings)
			}
			if rows.verifyArg != !tt.off {
				t.Errorf("verifySent = %v, want %v: sent comment rows are verified against Swarm", rows.verifyArg, !tt.off)
			}
			if !strings.Contains(metrics.String(), fmt.Sprintf(`"OutboxViolations":%d`, tt.wantRep.Violations)) {
				t.Errorf("metrics %s, want OutboxViolations %d", metrics.String(), tt.wantRep.Violations)
			}
		})
	}
}

// The pass's limit counts the rows it judges: rows it skips (comment rows
// in an environment that posts none, rows inside their window), however
// many and however highly ranked, never take the place of one it judges.
func TestLimitCountsJudgedRows(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	stuck := func(r outbox.Row) outbox.Suspect {
		r.Status, r.SendStartedAt, r.JobID = outbox.Sending, job.FormatTime(now.Add(-time.Hour)), "job-running"
		return outbox.Suspect{Row: r}
	}
	var rows []outbox.Suspect
	for i := range 5 {
		rows = append(rows, stuck(outbox.Row{Channel: outbox.ChannelSwarmComments, Thread: 885, Item: fmt.Sprint("finding/fp", i)}))
	}
	fresh := suspect("fresh@x.org", outbox.Sending)
	fresh.SendStartedAt = job.FormatTime(now.Add(-time.Second))
	rows = append(rows, fresh, stuck(outbox.Row{Changelist: 7, ReviewVersion: 1, Recipient: "a@x.org"}), stuck(outbox.Row{Changelist: 7, ReviewVersion: 1, Recipient: "b@x.org"}))
	f := &fakeRows{suspects: rows}
	r := &Reconciler{Rows: f, Evidence: fakeEvidence{}, Window: time.Minute, Lookback: time.Hour, Limit: 1,
		Jobs: jobsIn{"job-running": job.Running}.table(), Now: job.Clock(func() time.Time { return now }),
		Log: slog.New(slog.DiscardHandler), Metrics: obs.NewMetrics(io.Discard, "test")}
	rep, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Examined != 1 || len(f.calls) == 0 || !strings.HasPrefix(f.calls[0], "mark:a@x.org:") {
		t.Errorf("report %+v, calls %q: want a@x.org judged, the skipped rows taking no place", rep, f.calls)
	}
	for _, c := range f.calls {
		if strings.Contains(c, "b@x.org") {
			t.Errorf("judged past the limit: %q", f.calls)
		}
	}
}

// savedProgress is the pass row of shared/outbox, in memory.
type savedProgress struct{ cursor string }

func (s *savedProgress) Load(context.Context) (string, error) { return s.cursor, nil }
func (s *savedProgress) Save(_ context.Context, cursor string) error {
	s.cursor = cursor
	return nil
}

// slowEvidence is a provider lookup that takes ten seconds of the pass's
// clock and has no record; it records the Message-IDs asked about.
type slowEvidence struct {
	now   *time.Time
	asked []string
}

func (e *slowEvidence) Delivered(_ context.Context, id string) (bool, error) {
	*e.now = e.now.Add(10 * time.Second)
	e.asked = append(e.asked, id)
	return false, nil
}

// A pass stops at its time budget, counts the rows it did not reach as its
// backlog (paged by ReconcileBacklog), and the next pass resumes after the
// last row judged instead of judging the same oldest rows again: five rows
// left reconciling for an operator are each looked at within two passes.
func TestPassResumesAfterItsTimeBudget(t *testing.T) {
	var rows []outbox.Suspect
	name := map[string]string{} // Message-ID → recipient's letter
	for i, r := range []string{"a", "b", "c", "d", "e"} {
		s := suspect(r+"@x.org", outbox.Reconciling)
		s.Since = fmt.Sprintf("2026-11-0%dT00:00:00.000Z", i+1)
		rows = append(rows, s)
		name[s.Key().MessageID("example.com")] = r
	}
	now := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	ev := &slowEvidence{now: &now}
	var metrics bytes.Buffer
	r := &Reconciler{Rows: &fakeRows{suspects: rows}, Evidence: ev, Jobs: jobsIn{"job-running": job.Failed}.table(),
		FromDomain: "example.com", Window: time.Minute, Budget: 25 * time.Second, Progress: &savedProgress{},
		Now: func() time.Time { return now }, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: obs.NewMetrics(&metrics, "test")}
	// A lookup takes 10 s: rows start at 0, 10 and 20 s; the fourth would start at 30 s, past 25.
	for pass, want := range []string{"abc", "dea"} {
		ev.asked = nil
		metrics.Reset()
		rep, err := r.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, id := range ev.asked {
			got += name[id]
		}
		if got != want {
			t.Errorf("pass %d judged %q, want %q", pass, got, want)
		}
		if rep.Stopped != "time" || rep.Backlog != 2 {
			t.Errorf("pass %d: stopped %q with backlog %d, want time with 2", pass, rep.Stopped, rep.Backlog)
		}
		if !strings.Contains(metrics.String(), `"ReconcileBacklog":2`) {
			t.Errorf("pass %d: metrics %s, want ReconcileBacklog 2", pass, metrics.String())
		}
	}
}

// A weekly digest's row left sending is the digest's own runs' to settle by
// their lookup (rule DG-1): the reconciler, whose e-mail evidence is keyed by
// review Message-IDs, neither marks nor requeues it, which would e-mail the
// owner twice.
func TestDigestRowsAreLeftToTheDigest(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	old := job.FormatTime(now.Add(-time.Hour))
	rows := &fakeRows{suspects: []outbox.Suspect{
		{Row: outbox.Row{Channel: outbox.ChannelDigest, Item: "2026-W47/0a1b", Status: outbox.Sending, SendStartedAt: old}},
		{Row: outbox.Row{Channel: outbox.ChannelDigest, Item: "2026-W47/0a1c", Status: outbox.Sent, SendStartedAt: old, NotifiedAt: old}},
	}}
	r := &Reconciler{Rows: rows, Window: 30 * time.Second, Lookback: 24 * time.Hour, Evidence: fakeEvidence{},
		Comments: &fakeComments{}, Jobs: jobsIn{}.table(), Now: job.Clock(func() time.Time { return now }),
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: obs.NewMetrics(io.Discard, "test")}
	if _, err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(rows.calls) != 0 {
		t.Errorf("the reconciler wrote digest rows: %q", rows.calls)
	}
}
