package stage

import (
	"context"
	"errors"
	"strings"

	"github.com/aws/aws-lambda-go/events"
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
	if got := runtimeFor(jobs, q, failing(err)).handleRecord(context.Background(), message(t)); got != leave {
		t.Fatalf("outcome %v, want leave", got)
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
	if got := rt.handleRecord(context.Background(), msg); got != leave {
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

// Rule OB-5: a redelivery asked for a succeeded job (by the reconciler or an
// operator) runs the stage's Redeliver without reopening the job, and its
// outcome, actor and note go into the job's history; a plain duplicate of a
// succeeded job runs nothing.
func TestRedeliveryOfASucceededJob(t *testing.T) {
	succeeded := func() *job.Job {
		return &job.Job{ID: "j1", Changelist: 7, ReviewVersion: 1, State: job.Succeeded, Stage: domain.StageNotify, TraceID: "t", Seq: 9,
			Stages: map[domain.Stage]*job.StageRecord{domain.StageNotify: {Status: job.StageDone, Attempts: 1}}}
	}
	tests := []struct {
		name    string
		replay  *envelope.Request
		err     error
		want    outcome
		runs    int
		history string // the last history entry's type, "" for none added
	}{
		{name: "redelivery: delivered, recorded", replay: &envelope.Request{Mode: envelope.ModeRedeliver, RequestedBy: "reconciler", Note: "marked sent without provider evidence"},
			want: ack, runs: 1, history: "operator_redelivered"},
		{name: "plain duplicate of a succeeded job: nothing runs", want: ack},
		{name: "redelivery failing retryably comes back", replay: &envelope.Request{Mode: envelope.ModeRedeliver, RequestedBy: "ops", Note: "INC-1"},
			err: failure.Errorf(failure.NetworkTimeout, "relay down"), want: leave, runs: 1},
		{name: "redelivery failing for good is recorded", replay: &envelope.Request{Mode: envelope.ModeRedeliver, RequestedBy: "ops", Note: "INC-1"},
			err: failure.Errorf(failure.NotFound, "no such mailbox"), want: ack, runs: 1, history: "operator_redelivery_failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jobs, q := table(succeeded()), &fakeQueues{}
			rt := runtimeFor(jobs, q, ProcessorFunc(ok))
			rt.Stage = domain.StageNotify
			runs := 0
			rt.Redeliver = ProcessorFunc(func(_ context.Context, j *job.Job) (job.Result, error) {
				runs++
				if j.State != job.Succeeded {
					t.Errorf("redelivery saw the job %s: it must not be reopened", j.State)
				}
				return job.Result{Detail: "1 of 1 recipients e-mailed now"}, tt.err
			})
			e := envelope.Envelope{V: envelope.Version, JobID: "j1", Changelist: 7, ReviewVersion: 1, Stage: domain.StageNotify, TraceID: "t", Replay: tt.replay}
			body, err := e.Encode()
			if err != nil {
				t.Fatal(err)
			}
			msg := message(t)
			msg.Body = body
			if got := rt.handleRecord(context.Background(), msg); got != tt.want || runs != tt.runs {
				t.Fatalf("outcome %v after %d runs, want %v after %d", got, runs, tt.want, tt.runs)
			}
			after := get(t, jobs)
			if after.State != job.Succeeded || after.Seq != 9 && tt.history == "" {
				t.Errorf("job %s seq %d: a redelivery never reopens the job", after.State, after.Seq)
			}
			added := len(after.History) > 0
			if (tt.history != "") != added {
				t.Fatalf("history %+v, want entry %q", after.History, tt.history)
			}
			if added {
				ev := after.History[len(after.History)-1]
				if string(ev.Type) != tt.history || ev.Actor != tt.replay.RequestedBy || !strings.Contains(ev.Detail, tt.replay.Note) {
					t.Errorf("history entry %+v: want %s by %s with the note", ev, tt.history, tt.replay.RequestedBy)
				}
			}
		})
	}
}

// A malformed message's dead-letter reason passes the sanitizer like every
// other field: here the job id it names is a credential.
func TestMalformedReasonIsSanitized(t *testing.T) {
	const secret = "AKIAQX2ZKM3H7PWNB4TE"
	body, err := envelope.Envelope{V: envelope.Version, JobID: secret, Changelist: 7, ReviewVersion: 1, Stage: domain.StageFetch, TraceID: "t"}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	q := &fakeQueues{}
	msg := events.SQSMessage{MessageId: "m1", ReceiptHandle: "r1", Body: body, Attributes: map[string]string{"ApproximateReceiveCount": "1"}}
	if got := runtimeFor(table(nil), q, ProcessorFunc(ok)).handleRecord(context.Background(), msg); got != ack {
		t.Fatalf("outcome %v, want ack", got)
	}
	if len(q.dlqAttrs) != 1 {
		t.Fatalf("%d dead letters, want 1", len(q.dlqAttrs))
	}
	reason := q.dlqAttrs[0]["reason"]
	if reason == "" || strings.Contains(reason, secret) {
		t.Errorf("malformed message's reason %q: want it present and sanitized", reason)
	}
}

// The dead letter's first_failure_at is the stage's first failure, not the
// last, and its sanitized context names no recipient.
func TestDeadLetterKeepsTheFirstFailure(t *testing.T) {
	first := now.Add(-10 * time.Minute)
	j := stageJob(job.Running, domain.StageFetch, job.StageRecord{Status: job.StageRetryWait, Attempts: 2, FirstFailureAt: job.FormatTime(first),
		LastFailureAt: job.FormatTime(now.Add(-time.Minute))})
	j.State, j.Recipients, j.RequestedRecipients = job.RetryWait, []string{"dev@example.com"}, []string{"lead@example.com"}
	jobs, q := table(j), &fakeQueues{}
	if got := runtimeFor(jobs, q, failing(failure.Errorf(failure.AuthDenied, "denied"))).handleRecord(context.Background(), message(t)); got != ack {
		t.Fatalf("outcome %v, want ack", got)
	}
	if len(q.dlq) != 1 {
		t.Fatalf("%d dead letters, want 1", len(q.dlq))
	}
	env, err := envelope.Decode(q.dlq[0])
	if err != nil || env.DeadLetter == nil {
		t.Fatalf("dead letter %q: %v", q.dlq[0], err)
	}
	if env.DeadLetter.FirstFailureAt != job.FormatTime(first) || env.DeadLetter.LastFailureAt != job.FormatTime(now) {
		t.Errorf("first/last failure %s/%s, want %s/%s", env.DeadLetter.FirstFailureAt, env.DeadLetter.LastFailureAt, job.FormatTime(first), job.FormatTime(now))
	}
	if rec := get(t, jobs).StageRecord(domain.StageFetch); rec.FirstFailureAt != job.FormatTime(first) {
		t.Errorf("the job's first failure became %s", rec.FirstFailureAt)
	}
	for _, addr := range []string{"dev@example.com", "lead@example.com"} {
		if strings.Contains(q.dlq[0], addr) {
			t.Errorf("the dead letter names recipient %s", addr)
		}
	}
}
