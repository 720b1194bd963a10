package stage

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/envelope"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
)

func failing(err error) Processor {
	return ProcessorFunc(func(context.Context, *job.Job) (job.Result, error) { return job.Result{}, err })
}

// Rule BO-2: a provider's Retry-After raises the retry delay (the message's
// visibility) to at least its value.
func TestRetryAfterSetsTheRetryDelay(t *testing.T) {
	jobs, q := table(claimable()), &fakeQueues{}
	err := failure.Upstream(429, 90*time.Second, errors.New("rate limited"))
	if got := runtimeFor(jobs, q, failing(err)).handleRecord(context.Background(), message(t)); got != redeliver {
		t.Fatalf("outcome %v, want redeliver", got)
	}
	if len(q.visibility) != 1 || q.visibility[0] < 90 {
		t.Fatalf("retry visibility %v s, want ≥ 90 (Retry-After)", q.visibility)
	}
	if j := get(t, jobs); j.State != job.RetryWait || j.StageRecord(domain.StageFetch).LastErrorClass != failure.RateLimited {
		t.Errorf("job %s %+v, want retry_wait after RATE_LIMITED", j.State, j.StageRecord(domain.StageFetch))
	}
}

// Rule DL-1/DL-2: the dead letter carries the diagnostics, and nothing
// secret: the reason and stack pass the sanitizer, the context holds the
// body's hash, not the body.
func TestDeadLetterContextIsSanitized(t *testing.T) {
	const secret = "AKIAQX2ZKM3H7PWNB4TE"
	jobs, q := table(claimable()), &fakeQueues{}
	msg := message(t)
	perr := failure.Errorf(failure.AuthDenied, "p4 login failed: password=%s token %s", "hunter2-Sup3rSecret!", secret)
	if got := runtimeFor(jobs, q, failing(perr)).handleRecord(context.Background(), msg); got != ack {
		t.Fatalf("outcome %v, want ack", got)
	}
	if len(q.dlq) != 1 {
		t.Fatalf("%d dead letters, want 1", len(q.dlq))
	}
	body := q.dlq[0]
	for _, leak := range []string{secret, "hunter2-Sup3rSecret!"} {
		if strings.Contains(body, leak) {
			t.Errorf("dead letter leaks %q: %s", leak, body)
		}
		if strings.Contains(get(t, jobs).StageRecord(domain.StageFetch).LastError, leak) {
			t.Errorf("job record leaks %q", leak)
		}
	}
	env, err := envelope.Decode(body)
	if err != nil || env.DeadLetter == nil {
		t.Fatalf("dead letter %q: %v", body, err)
	}
	dl := env.DeadLetter
	if dl.ErrorClass != failure.AuthDenied || dl.Stage != domain.StageFetch || dl.Attempts != 1 || dl.FirstFailureAt == "" || dl.LastStack == "" {
		t.Errorf("dead letter diagnostics %+v", dl)
	}
	ctx := dl.SanitizedContext
	if ctx["body_sha256"] != envelope.Hash(msg.Body) || ctx["job_id"] != "j1" || ctx["message_id"] != "m1" {
		t.Errorf("sanitized_context %v: want the body's hash, the job and the message", ctx)
	}
	for k, v := range ctx {
		if s, ok := v.(string); ok && strings.Contains(s, `"job_id"`) {
			t.Errorf("sanitized_context[%s] holds the message body", k)
		}
	}
}

// Rule BU-1: each stage has its own budget. A job whose fetch used its whole
// budget still gets the llm stage's full budget, and a failure in llm is
// counted in llm only.
func TestOneStageNeverSpendsAnothersBudget(t *testing.T) {
	j := &job.Job{ID: "j1", Changelist: 7, ReviewVersion: 1, State: job.Queued, Stage: domain.StageLLM, TraceID: "t", Seq: 3,
		Stages: map[domain.Stage]*job.StageRecord{
			domain.StageFetch:  {Status: job.StageDone, Attempts: 3},
			domain.StageLLM:    {Status: job.StagePending},
			domain.StageNotify: {Status: job.StagePending},
		}}
	jobs, q := table(j), &fakeQueues{}
	rt := runtimeFor(jobs, q, failing(failure.Errorf(failure.Upstream5xx, "model overloaded")))
	rt.Stage = domain.StageLLM
	body, _ := envelope.Envelope{V: envelope.Version, JobID: "j1", Changelist: 7, ReviewVersion: 1, Stage: domain.StageLLM, TraceID: "t"}.Encode()
	msg := message(t)
	msg.Body = body
	if got := rt.handleRecord(context.Background(), msg); got != redeliver {
		t.Fatalf("outcome %v: a first llm failure must be retried, not dead-lettered", got)
	}
	after := get(t, jobs)
	if after.State != job.RetryWait || after.StageRecord(domain.StageLLM).Attempts != 1 || after.StageRecord(domain.StageFetch).Attempts != 3 {
		t.Errorf("job %s, llm %+v, fetch %+v: want retry_wait, llm 1 attempt, fetch untouched", after.State, after.StageRecord(domain.StageLLM), after.StageRecord(domain.StageFetch))
	}
	if len(q.dlq) != 0 {
		t.Error("dead-lettered on another stage's budget")
	}
}
