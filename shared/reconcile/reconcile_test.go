package reconcile

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/obs"
	"github.com/criticizer/criticizer/shared/outbox"
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
func (f *fakeRows) MarkReconciling(_ context.Context, k delivery.Key, observed outbox.Status, reason string, _ time.Time) (bool, error) {
	f.calls = append(f.calls, "mark:"+k.Recipient+":"+string(observed)+":"+reason)
	return !f.noMove, nil
}
func (f *fakeRows) Verified(_ context.Context, k delivery.Key, _ time.Time) error {
	f.calls = append(f.calls, "verified:"+k.Recipient)
	return nil
}
func (f *fakeRows) Backfill(_ context.Context, k delivery.Key, evidence string, _ time.Time) (bool, error) {
	f.calls = append(f.calls, "backfill:"+k.Recipient)
	return true, nil
}
func (f *fakeRows) RequeueReconciled(_ context.Context, k delivery.Key, _ time.Time) (bool, error) {
	f.calls = append(f.calls, "requeue:"+k.Recipient)
	return true, nil
}

type fakeJobs map[string]job.State // job id → state; missing: not found

func (f fakeJobs) Get(_ context.Context, id string) (*job.Job, error) {
	st, ok := f[id]
	if !ok {
		return nil, job.ErrNotFound
	}
	return &job.Job{ID: id, State: st}, nil
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
		jobs       fakeJobs
		want       []string
		wantRep    Report
		wantPage   string
	}{
		{"stuck send the provider has: backfilled", []outbox.Suspect{suspect("a@x.org", outbox.Sending)}, fakeEvidence{id("a@x.org"): true}, false, false, nil,
			[]string{"mark:a@x.org:sending:" + ReasonStuck, "backfill:a@x.org"}, Report{Examined: 1, Backfilled: 1}, `"OutboxReconciling":0`},
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
		{"no record, job still running: requeued", []outbox.Suspect{suspect("a@x.org", outbox.Sent)}, fakeEvidence{}, false, false, fakeJobs{"job-running": job.RetryWait},
			[]string{"mark:a@x.org:sent:" + ReasonUnproven, "requeue:a@x.org"}, Report{Examined: 1, Requeued: 1}, `"OutboxReconciling":0`},
		{"no record, job finished: left for an operator", []outbox.Suspect{suspect("a@x.org", outbox.Sent)}, fakeEvidence{}, false, false, fakeJobs{"job-running": job.Succeeded},
			[]string{"mark:a@x.org:sent:" + ReasonUnproven}, Report{Examined: 1, Reconciling: 1}, `"OutboxReconciling":1`},
		{"no record, job gone: left for an operator", []outbox.Suspect{suspect("a@x.org", outbox.Sending)}, fakeEvidence{}, false, false, fakeJobs{},
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
				r.Jobs = tt.jobs
			}
			rep, err := r.Run(context.Background())
			if err != nil {
				t.Fatal(err)
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
