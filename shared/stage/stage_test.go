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
	"github.com/criticizer/criticizer/shared/store"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
)

// fakeQueues records what the runtime sends.
type fakeQueues struct {
	mu         sync.Mutex
	sent       []envelope.Envelope
	dlq        []string
	dlqAttrs   []map[string]string
	visibility []int32
}

func (q *fakeQueues) Send(_ context.Context, e envelope.Envelope) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.sent = append(q.sent, e)
	return nil
}
func (q *fakeQueues) SendRaw(_ context.Context, _ domain.Stage, dlq bool, body string, attrs map[string]string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if dlq {
		q.dlq = append(q.dlq, body)
		q.dlqAttrs = append(q.dlqAttrs, attrs)
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

func runtimeFor(jobs *jobsTable, q *fakeQueues, proc Processor) *Runtime {
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

// jobsTable is the jobs table of these tests: the store over dynamotest,
// whose condition expressions decide every write, with faults queued per
// operation and the calls the runtime makes counted.
type jobsTable struct {
	*store.Store
	mu     sync.Mutex
	calls  map[string]int
	faults map[string][]fault
}

// fault is what an injected fault does to one call: Err is returned; with
// Applied the write is made first (its answer was lost).
type fault struct {
	Err     error
	Applied bool
}

// table returns a jobs table holding j (none when j is nil).
func table(j *job.Job) *jobsTable {
	m := &jobsTable{Store: store.New(dynamotest.New(), dynamotest.Table), calls: map[string]int{}, faults: map[string][]fault{}}
	if j != nil {
		if err := m.Put(context.Background(), j); err != nil {
			panic(err)
		}
	}
	return m
}

// Inject queues faults for the next calls of op, one per call; a zero
// fault lets that call through.
func (m *jobsTable) Inject(op string, faults ...fault) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.faults[op] = append(m.faults[op], faults...)
}

// Calls reports how often the runtime called op.
func (m *jobsTable) Calls(op string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls[op]
}

// call counts op and makes write under op's next fault.
func call[T any](m *jobsTable, op string, write func() (T, error)) (T, error) {
	m.mu.Lock()
	m.calls[op]++
	var f fault
	if q := m.faults[op]; len(q) > 0 {
		f, m.faults[op] = q[0], q[1:]
	}
	m.mu.Unlock()
	var zero T
	if f.Err != nil && !f.Applied {
		return zero, f.Err
	}
	v, err := write()
	if f.Err != nil {
		return zero, f.Err
	}
	return v, err
}

func (m *jobsTable) Claim(ctx context.Context, id string, st domain.Stage, l job.Lease, maxAttempts int) (*job.Job, error) {
	return call(m, "claim", func() (*job.Job, error) { return m.Store.Claim(ctx, id, st, l, maxAttempts) })
}

func (m *jobsTable) Renew(ctx context.Context, id string, st domain.Stage, l job.Lease) error {
	_, err := call(m, "renew", func() (any, error) { return nil, m.Store.Renew(ctx, id, st, l) })
	return err
}

func (m *jobsTable) Complete(ctx context.Context, id string, st domain.Stage, l job.Lease, r job.Result, sweepAfter time.Duration) (*job.Job, error) {
	return call(m, "complete", func() (*job.Job, error) { return m.Store.Complete(ctx, id, st, l, r, sweepAfter) })
}

func (m *jobsTable) Retry(ctx context.Context, id string, st domain.Stage, l job.Lease, f job.FailureInfo, delay time.Duration) (*job.Job, error) {
	return call(m, "retry", func() (*job.Job, error) { return m.Store.Retry(ctx, id, st, l, f, delay) })
}

func (m *jobsTable) DeadLetter(ctx context.Context, id string, st domain.Stage, l job.Lease, f job.FailureInfo, dlID, body string) (*job.Job, error) {
	return call(m, "dead_letter", func() (*job.Job, error) { return m.Store.DeadLetter(ctx, id, st, l, f, dlID, body) })
}

func stageJob(state job.State, at domain.Stage, rec job.StageRecord) *job.Job {
	return &job.Job{ID: "j1", Changelist: 7, ReviewVersion: 1, State: state, Stage: at, TraceID: "t", Seq: 1,
		Stages: map[domain.Stage]*job.StageRecord{domain.StageFetch: &rec}}
}

// claimable is a job queued at fetch, never attempted.
func claimable() *job.Job {
	return stageJob(job.Queued, domain.StageFetch, job.StageRecord{Status: job.StagePending})
}

func ok(context.Context, *job.Job) (job.Result, error) { return job.Result{}, nil }

func get(t *testing.T, m *jobsTable) *job.Job {
	t.Helper()
	j, err := m.Get(context.Background(), "j1")
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// The claim's refusals come from the table's rules (job.Transitions and
// job.Refuse), as the store's conditional write decides them.
func TestClaimRefusals(t *testing.T) {
	tests := []struct {
		name        string
		job         *job.Job // nil: no such job
		fault       error    // the claim's answer
		want        outcome
		nextSent    int
		dlqSent     int
		deadLetters int
		visibility  bool
	}{
		{name: "stage done, next stage still queued: its message may be missing, resend it",
			job: stageJob(job.Queued, domain.StageLLM, job.StageRecord{Status: job.StageDone}), want: ack, nextSent: 1},
		{name: "stage done, next stage already claimed: nothing to resend",
			job: stageJob(job.Running, domain.StageLLM, job.StageRecord{Status: job.StageDone}), want: ack},
		{name: "job succeeded", job: stageJob(job.Succeeded, domain.StageNotify, job.StageRecord{Status: job.StageDone}), want: ack},
		{name: "stale stage", job: stageJob(job.Queued, domain.StageNotify, job.StageRecord{Status: job.StagePending}), want: ack},
		{name: "dead-lettered, DLQ send interrupted: finish it",
			job:  stageJob(job.Failed, domain.StageFetch, job.StageRecord{Status: job.StageFailed, DLQPending: true, DeadLetter: "{}", DeadLetterID: "dl1"}),
			want: ack, dlqSent: 1},
		{name: "dead-lettered and sent", job: stageJob(job.Failed, domain.StageFetch, job.StageRecord{Status: job.StageFailed}), want: ack},
		{name: "lease held: look again when it ends",
			job:  stageJob(job.Running, domain.StageFetch, job.StageRecord{Status: job.StageRunning, Attempts: 1, Owner: "m0#1", LeaseExpiresAt: job.FormatTime(now.Add(30 * time.Second))}),
			want: leave, visibility: true},
		{name: "budget exhausted by crashed workers: dead-letter",
			job:  stageJob(job.RetryWait, domain.StageFetch, job.StageRecord{Status: job.StageRetryWait, Attempts: 3, LastErrorClass: failure.NetworkTimeout}),
			want: ack, dlqSent: 1, deadLetters: 1},
		{name: "unexpected state: leave", job: stageJob(job.Queued, domain.StageFetch, job.StageRecord{}), want: leave},
		{name: "job missing: malformed, to the DLQ", want: ack, dlqSent: 1},
		{name: "claim failed transiently: leave", job: claimable(), fault: failure.Errorf(failure.RateLimited, "throttled"), want: leave},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jobs, q := table(tt.job), &fakeQueues{}
			if tt.fault != nil {
				jobs.Inject("claim", fault{Err: tt.fault})
			}
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
			if jobs.Calls("dead_letter") != tt.deadLetters {
				t.Errorf("%d dead-letter writes, want %d", jobs.Calls("dead_letter"), tt.deadLetters)
			}
			if tt.visibility && (len(q.visibility) != 1 || q.visibility[0] < 30) {
				t.Errorf("visibility %v: want one delay past the live lease (30s + skew)", q.visibility)
			}
			if jobs.Calls("complete") != 0 {
				t.Error("a refused claim must not complete anything")
			}
			if tt.deadLetters > 0 && get(t, jobs).State != job.Failed {
				t.Errorf("job %s after the budget dead letter, want failed", get(t, jobs).State)
			}
		})
	}
}

// Rule LS-5: another owner's lease counts as expired only once it ended the
// skew budget ago on this host's clock.
func TestClaimUsesTheSkewBudget(t *testing.T) {
	for _, tt := range []struct {
		ended     time.Duration // how long ago the other owner's lease ended
		processed bool
	}{{time.Second, false}, {3 * time.Second, true}} {
		jobs := table(stageJob(job.Running, domain.StageFetch, job.StageRecord{Status: job.StageRunning, Attempts: 1, Owner: "m0#1",
			LeaseExpiresAt: job.FormatTime(now.Add(-tt.ended))}))
		ran := false
		runtimeFor(jobs, &fakeQueues{}, ProcessorFunc(func(context.Context, *job.Job) (job.Result, error) {
			ran = true
			return job.Result{}, nil
		})).handleRecord(context.Background(), message(t))
		if ran != tt.processed {
			t.Errorf("lease ended %s ago, skew budget 2s: processed %v, want %v", tt.ended, ran, tt.processed)
		}
		if tt.processed && get(t, jobs).StageRecord(domain.StageFetch).Status != job.StageDone {
			t.Errorf("taken-over stage not completed: %+v", get(t, jobs).StageRecord(domain.StageFetch))
		}
	}
}

func TestCompletion(t *testing.T) {
	throttled := failure.Errorf(failure.RateLimited, "complete: throttled")
	tests := []struct {
		name      string
		complete  []fault
		want      outcome
		nextSent  int
		completes int
		retries   int
		state     job.State
	}{
		{name: "completed: next stage sent", want: ack, nextSent: 1, completes: 1, state: job.Queued},
		// The first answer was lost; the store recognises the applied write
		// on the retry (same token) and answers success: the next stage is
		// sent at once, not after a sweep.
		{name: "answer lost, recognised on retry", complete: []fault{{Err: throttled, Applied: true}}, want: ack, nextSent: 1, completes: 2, state: job.Queued},
		{name: "lease taken over: results discarded", complete: []fault{{Err: job.ErrLeaseLost}}, want: leave, completes: 1, state: job.Running},
		{name: "recording keeps failing: an ordinary retryable failure (the message comes back delayed)",
			complete: []fault{{Err: throttled}, {Err: throttled}, {Err: throttled}}, want: leave, completes: 3, retries: 1, state: job.RetryWait},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jobs, q := table(claimable()), &fakeQueues{}
			jobs.Inject("complete", tt.complete...)
			got := runtimeFor(jobs, q, ProcessorFunc(ok)).handleRecord(context.Background(), message(t))
			if got != tt.want || len(q.sent) != tt.nextSent || jobs.Calls("complete") != tt.completes || jobs.Calls("retry") != tt.retries {
				t.Fatalf("outcome %v, %d sent, %d completes, %d retries; want %v, %d, %d, %d",
					got, len(q.sent), jobs.Calls("complete"), jobs.Calls("retry"), tt.want, tt.nextSent, tt.completes, tt.retries)
			}
			if j := get(t, jobs); j.State != tt.state {
				t.Errorf("job %s, want %s", j.State, tt.state)
			}
		})
	}
}

func TestFailureClassification(t *testing.T) {
	tests := []struct {
		name                 string
		err                  error
		want                 outcome
		retries, deadLetters int
		state                job.State
	}{
		{"retryable: retry scheduled, the message comes back delayed", failure.Errorf(failure.Upstream5xx, "boom"), leave, 1, 0, job.RetryWait},
		{"permanent: dead-lettered", failure.Errorf(failure.PolicyRejected, "denied"), ack, 0, 1, job.Failed},
		{"panic: INTERNAL_BUG, dead-lettered", nil, ack, 0, 1, job.Failed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jobs, q := table(claimable()), &fakeQueues{}
			proc := ProcessorFunc(func(context.Context, *job.Job) (job.Result, error) {
				if tt.err == nil {
					panic("nil map")
				}
				return job.Result{}, tt.err
			})
			if got := runtimeFor(jobs, q, proc).handleRecord(context.Background(), message(t)); got != tt.want {
				t.Fatalf("outcome %v, want %v", got, tt.want)
			}
			if jobs.Calls("retry") != tt.retries || jobs.Calls("dead_letter") != tt.deadLetters || len(q.sent) != 0 {
				t.Fatalf("%d retries, %d dead letters, %d sent; want %d, %d, 0", jobs.Calls("retry"), jobs.Calls("dead_letter"), len(q.sent), tt.retries, tt.deadLetters)
			}
			j := get(t, jobs)
			if j.State != tt.state {
				t.Errorf("job %s, want %s", j.State, tt.state)
			}
			if rec := j.StageRecord(domain.StageFetch); tt.deadLetters > 0 && (rec.DLQPending || rec.DeadLetter != "") {
				t.Error("the dead letter was sent but not marked sent")
			}
		})
	}
}

// TestVisibilitySetToTheLeaseAtClaim: on a queue whose visibility timeout is
// longer than the lease (the review queue, sized to its function's
// timeout), a claimed message's visibility is set to the lease before any
// work, so a crashed worker's message returns within the lease; a queue
// whose timeout is the lease costs no extra request.
func TestVisibilitySetToTheLeaseAtClaim(t *testing.T) {
	for _, tt := range []struct {
		name  string
		queue time.Duration
		want  []int32
	}{
		{"queue timeout above the lease", 15 * time.Minute, []int32{60}},
		{"queue timeout is the lease", 0, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			jobs := table(claimable())
			q := &fakeQueues{}
			rt := runtimeFor(jobs, q, ProcessorFunc(func(context.Context, *job.Job) (job.Result, error) {
				q.mu.Lock()
				defer q.mu.Unlock()
				if len(q.visibility) != len(tt.want) {
					t.Errorf("visibility when the work starts = %v, want %v", q.visibility, tt.want)
				}
				return job.Result{}, nil
			}))
			rt.QueueVisibility = tt.queue
			if got := rt.handleRecord(context.Background(), message(t)); got != ack {
				t.Fatalf("outcome %v", got)
			}
			if len(q.visibility) != len(tt.want) || (len(tt.want) > 0 && q.visibility[0] != tt.want[0]) {
				t.Errorf("visibility changes %v, want %v", q.visibility, tt.want)
			}
		})
	}
}

// The heartbeat renews the lease (and the message's visibility) at a third
// to a half of the lease, not once per lease: a lease renewed only as it
// ends is lost to the first late renewal. The test drives the ticker.
func TestHeartbeatRenewsWithinTheLease(t *testing.T) {
	jobs := table(claimable())
	q := &fakeQueues{}
	ticks := make(chan time.Time)
	var every time.Duration
	var renewedAfterTwoTicks int
	rt := runtimeFor(jobs, q, ProcessorFunc(func(context.Context, *job.Job) (job.Result, error) {
		// The heartbeat takes a tick only once its previous renewal is
		// written, so after the third send two renewals are done.
		for range 3 {
			ticks <- now
		}
		renewedAfterTwoTicks = jobs.Calls("renew")
		return job.Result{}, nil
	}))
	rt.tick = func(d time.Duration) (<-chan time.Time, func()) { every = d; return ticks, func() {} }
	if got := rt.handleRecord(context.Background(), message(t)); got != ack {
		t.Fatalf("outcome %v", got)
	}
	if every < rt.Lease/3 || every > rt.Lease/2 {
		t.Errorf("heartbeat every %v for a %v lease, want between a third and a half of it", every, rt.Lease)
	}
	if renewedAfterTwoTicks < 2 {
		t.Errorf("%d lease renewals after two heartbeats, want one each", renewedAfterTwoTicks)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.visibility) < 2 {
		t.Errorf("message visibility extended %d times after two heartbeats", len(q.visibility))
	}
}
