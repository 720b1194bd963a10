package stage

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/criticizer/criticizer/shared/backoff"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/envelope"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
)

// fakeJobs is an in-memory stage.Jobs whose answers each test scripts.
type fakeJobs struct {
	mu       sync.Mutex
	claim    func(l job.Lease) (*job.Job, error)
	complete []error // per call; nil (or exhausted) is success
	calls    map[string]int
	deadLet  string
	marked   string
}

func (f *fakeJobs) count(op string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[op]++
}

func (f *fakeJobs) Claim(_ context.Context, id string, s domain.Stage, l job.Lease, _ int) (*job.Job, error) {
	f.count("claim")
	return f.claim(l)
}
func (f *fakeJobs) Renew(context.Context, string, domain.Stage, job.Lease) error {
	f.count("renew")
	return nil
}
func (f *fakeJobs) Complete(_ context.Context, id string, s domain.Stage, l job.Lease, r job.Result, _ time.Duration) (*job.Job, error) {
	f.count("complete")
	n := f.calls["complete"] - 1
	if n < len(f.complete) && f.complete[n] != nil {
		return nil, f.complete[n]
	}
	next, _ := s.Next()
	return &job.Job{ID: id, Changelist: 7, ReviewVersion: 1, State: job.Queued, Stage: next, TraceID: "t"}, nil
}
func (f *fakeJobs) Retry(_ context.Context, id string, _ domain.Stage, _ job.Lease, _ job.FailureInfo, _ time.Duration) (*job.Job, error) {
	f.count("retry")
	return &job.Job{ID: id}, nil
}
func (f *fakeJobs) DeadLetter(_ context.Context, id string, _ domain.Stage, _ job.Lease, fi job.FailureInfo, dlID, _ string) (*job.Job, error) {
	f.count("dead_letter")
	f.deadLet = string(fi.Class)
	return &job.Job{ID: id, State: job.Failed}, nil
}
func (f *fakeJobs) MarkDeadLetterSent(_ context.Context, _ string, _ domain.Stage, dlID string, _ time.Time) error {
	f.count("mark_dead_letter_sent")
	f.marked = dlID
	return nil
}
func (f *fakeJobs) Replay(context.Context, string, domain.Stage, string, failure.Class, time.Time, time.Duration) (*job.Job, error) {
	f.count("replay")
	return nil, job.ErrNotReplayable
}
func (f *fakeJobs) Restart(context.Context, string, string, string, time.Time, time.Duration) (*job.Job, error) {
	f.count("restart")
	return nil, job.ErrNotReplayable
}

// fakeQueues records what the runtime sends.
type fakeQueues struct {
	mu         sync.Mutex
	sent       []envelope.Envelope
	dlq        []string
	visibility []int32
}

func (q *fakeQueues) Send(_ context.Context, e envelope.Envelope) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.sent = append(q.sent, e)
	return nil
}
func (q *fakeQueues) SendRaw(_ context.Context, _ domain.Stage, dlq bool, body string, _ map[string]string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if dlq {
		q.dlq = append(q.dlq, body)
	}
	return nil
}
func (q *fakeQueues) SetVisibility(_ context.Context, _ domain.Stage, _ string, s int32) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.visibility = append(q.visibility, s)
	return nil
}

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func runtimeFor(jobs *fakeJobs, q *fakeQueues, proc Processor) *Runtime {
	return &Runtime{Stage: domain.StageFetch, Jobs: jobs, Queues: q, Processor: proc, Lease: time.Minute, MaxAttempts: 3,
		Backoff: backoff.Default, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Skew: 2 * time.Second,
		Now: func() time.Time { return now }}
}

func message(t *testing.T) events.SQSMessage {
	t.Helper()
	body, err := envelope.Envelope{V: envelope.Version, JobID: "j1", Changelist: 7, ReviewVersion: 1, Stage: domain.StageFetch, TraceID: "t"}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return events.SQSMessage{MessageId: "m1", ReceiptHandle: "r1", Body: body, Attributes: map[string]string{"ApproximateReceiveCount": "2"}}
}

func refusedWith(reason job.Refusal, j *job.Job) func(job.Lease) (*job.Job, error) {
	return func(job.Lease) (*job.Job, error) { return nil, &job.ClaimRefused{Reason: reason, Job: j} }
}

func stageJob(state job.State, at domain.Stage, rec job.StageRecord) *job.Job {
	return &job.Job{ID: "j1", Changelist: 7, ReviewVersion: 1, State: state, Stage: at, TraceID: "t",
		Stages: map[domain.Stage]*job.StageRecord{domain.StageFetch: &rec}}
}

func ok(context.Context, *job.Job) (job.Result, error) { return job.Result{}, nil }

func TestClaimRefusals(t *testing.T) {
	tests := []struct {
		name        string
		claim       func(job.Lease) (*job.Job, error)
		want        outcome
		nextSent    int
		dlqSent     int
		deadLetters int
		visibility  bool
	}{
		{name: "stage done, next stage still queued: its message may be missing, resend it",
			claim: refusedWith(job.RefusedStageDone, stageJob(job.Queued, domain.StageLLM, job.StageRecord{Status: job.StageDone})), want: ack, nextSent: 1},
		{name: "stage done, next stage already claimed: nothing to resend",
			claim: refusedWith(job.RefusedStageDone, stageJob(job.Running, domain.StageLLM, job.StageRecord{Status: job.StageDone})), want: ack},
		{name: "job succeeded", claim: refusedWith(job.RefusedSucceeded, stageJob(job.Succeeded, domain.StageNotify, job.StageRecord{Status: job.StageDone})), want: ack},
		{name: "stale stage", claim: refusedWith(job.RefusedStaleStage, stageJob(job.Queued, domain.StageNotify, job.StageRecord{Status: job.StageDone})), want: ack},
		{name: "dead-lettered, DLQ send interrupted: finish it",
			claim: refusedWith(job.RefusedDeadLettered, stageJob(job.Failed, domain.StageFetch, job.StageRecord{Status: job.StageFailed, DLQPending: true, DeadLetter: "{}", DeadLetterID: "dl1"})),
			want:  ack, dlqSent: 1},
		{name: "dead-lettered and sent", claim: refusedWith(job.RefusedDeadLettered, stageJob(job.Failed, domain.StageFetch, job.StageRecord{Status: job.StageFailed})), want: ack},
		{name: "lease held: look again when it ends",
			claim: refusedWith(job.RefusedLeaseHeld, stageJob(job.Running, domain.StageFetch, job.StageRecord{Status: job.StageRunning, LeaseExpiresAt: job.FormatTime(now.Add(30 * time.Second))})),
			want:  redeliver, visibility: true},
		{name: "budget exhausted by crashed workers: dead-letter",
			claim: refusedWith(job.RefusedBudget, stageJob(job.RetryWait, domain.StageFetch, job.StageRecord{Status: job.StageRetryWait, Attempts: 3, LastErrorClass: failure.NetworkTimeout})),
			want:  ack, dlqSent: 1, deadLetters: 1},
		{name: "unexpected state: redeliver", claim: refusedWith(job.RefusedUnexpected, stageJob(job.Queued, domain.StageFetch, job.StageRecord{})), want: redeliver},
		{name: "job missing: malformed, to the DLQ", claim: func(job.Lease) (*job.Job, error) { return nil, job.ErrNotFound }, want: ack, dlqSent: 1},
		{name: "claim failed transiently: redeliver", claim: func(job.Lease) (*job.Job, error) { return nil, failure.Errorf(failure.RateLimited, "throttled") }, want: redeliver},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jobs, q := &fakeJobs{claim: tt.claim}, &fakeQueues{}
			got := runtimeFor(jobs, q, ProcessorFunc(ok)).handleRecord(context.Background(), message(t))
			if got != tt.want {
				t.Errorf("outcome %v, want %v", got, tt.want)
			}
			if len(q.sent) != tt.nextSent {
				t.Errorf("%d next-stage messages, want %d", len(q.sent), tt.nextSent)
			}
			if tt.nextSent > 0 && (q.sent[0].Stage != domain.StageLLM || q.sent[0].JobID != "j1") {
				t.Errorf("next-stage message %+v: want job j1 at llm", q.sent[0])
			}
			if len(q.dlq) != tt.dlqSent {
				t.Errorf("%d dead letters sent, want %d", len(q.dlq), tt.dlqSent)
			}
			if jobs.calls["dead_letter"] != tt.deadLetters {
				t.Errorf("%d dead-letter writes, want %d", jobs.calls["dead_letter"], tt.deadLetters)
			}
			if tt.visibility && (len(q.visibility) != 1 || q.visibility[0] < 30) {
				t.Errorf("visibility %v: want one delay past the live lease (30s + skew)", q.visibility)
			}
			if jobs.calls["complete"] != 0 {
				t.Error("a refused claim must not complete anything")
			}
		})
	}
}

func TestClaimUsesTheSkewBudget(t *testing.T) {
	var got job.Lease
	jobs := &fakeJobs{claim: func(l job.Lease) (*job.Job, error) {
		got = l
		return nil, &job.ClaimRefused{Reason: job.RefusedSucceeded, Job: &job.Job{State: job.Succeeded}}
	}}
	runtimeFor(jobs, &fakeQueues{}, ProcessorFunc(ok)).handleRecord(context.Background(), message(t))
	if got.Skew != 2*time.Second || got.Owner != "m1#2" || !got.Now.Equal(now) {
		t.Fatalf("lease %+v: want owner m1#2, the runtime's clock and its skew budget", got)
	}
}

func TestCompletion(t *testing.T) {
	claimed := func(job.Lease) (*job.Job, error) {
		return stageJob(job.Running, domain.StageFetch, job.StageRecord{Status: job.StageRunning, Attempts: 1, Owner: "m1#2"}), nil
	}
	throttled := failure.Errorf(failure.RateLimited, "complete: throttled")
	tests := []struct {
		name      string
		complete  []error
		want      outcome
		nextSent  int
		completes int
		retries   int
	}{
		{name: "completed: next stage sent", want: ack, nextSent: 1, completes: 1},
		// The first answer was lost; the store recognises the applied write
		// on the retry (same token) and answers success: the next stage is
		// sent at once, not after a sweep.
		{name: "answer lost, recognised on retry", complete: []error{throttled}, want: ack, nextSent: 1, completes: 2},
		{name: "lease taken over: results discarded", complete: []error{job.ErrLeaseLost}, want: redeliver, completes: 1},
		{name: "recording keeps failing: an ordinary retryable failure (the message comes back delayed)", complete: []error{throttled, throttled, throttled}, want: redeliver, completes: 3, retries: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jobs, q := &fakeJobs{claim: claimed, complete: tt.complete}, &fakeQueues{}
			got := runtimeFor(jobs, q, ProcessorFunc(ok)).handleRecord(context.Background(), message(t))
			if got != tt.want || len(q.sent) != tt.nextSent || jobs.calls["complete"] != tt.completes || jobs.calls["retry"] != tt.retries {
				t.Fatalf("outcome %v, %d sent, %d completes, %d retries; want %v, %d, %d, %d",
					got, len(q.sent), jobs.calls["complete"], jobs.calls["retry"], tt.want, tt.nextSent, tt.completes, tt.retries)
			}
		})
	}
}

func TestFailureClassification(t *testing.T) {
	claimed := func(job.Lease) (*job.Job, error) {
		return stageJob(job.Running, domain.StageFetch, job.StageRecord{Status: job.StageRunning, Attempts: 1, Owner: "m1#2"}), nil
	}
	tests := []struct {
		name                 string
		err                  error
		want                 outcome
		retries, deadLetters int
	}{
		{"retryable: retry scheduled, the message comes back delayed", failure.Errorf(failure.Upstream5xx, "boom"), redeliver, 1, 0},
		{"permanent: dead-lettered", failure.Errorf(failure.PolicyRejected, "denied"), ack, 0, 1},
		{"panic: INTERNAL_BUG, dead-lettered", nil, ack, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jobs, q := &fakeJobs{claim: claimed}, &fakeQueues{}
			proc := ProcessorFunc(func(context.Context, *job.Job) (job.Result, error) {
				if tt.err == nil {
					panic("nil map")
				}
				return job.Result{}, tt.err
			})
			if got := runtimeFor(jobs, q, proc).handleRecord(context.Background(), message(t)); got != tt.want {
				t.Fatalf("outcome %v, want %v", got, tt.want)
			}
			if jobs.calls["retry"] != tt.retries || jobs.calls["dead_letter"] != tt.deadLetters || len(q.sent) != 0 {
				t.Fatalf("%d retries, %d dead letters, %d sent; want %d, %d, 0", jobs.calls["retry"], jobs.calls["dead_letter"], len(q.sent), tt.retries, tt.deadLetters)
			}
			if tt.deadLetters > 0 && jobs.marked == "" {
				t.Error("the dead letter was sent but not marked sent")
			}
		})
	}
}
