//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/google/uuid"

	llmstandin "github.com/criticizer/criticizer/internal/standin/llm"
	"github.com/criticizer/criticizer/shared/backoff"
	"github.com/criticizer/criticizer/shared/dlq"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/envelope"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/obs"
	"github.com/criticizer/criticizer/shared/queue"
	"github.com/criticizer/criticizer/shared/stage"
	"github.com/criticizer/criticizer/shared/store"
)

// fault queues LLM stand-in faults for this test only: whatever a failing
// test leaves unconsumed must not leak into the next one.
func fault(t *testing.T, f llmstandin.Fault) {
	t.Helper()
	env.llm.QueueFault(f)
	t.Cleanup(env.llm.Reset)
}

// submit posts a webhook for a fresh copy of template and returns the job id.
func submit(t *testing.T, template int64) (int64, string) {
	t.Helper()
	cl := newChange(t, template)
	r := postWebhook(t, map[string]any{"changelist_id": cl, "review_version": 1, "idempotency_key": uniqueKey(t)})
	if r.Status != 202 {
		t.Fatalf("webhook: %d %s", r.Status, r.Body)
	}
	return cl, r.Decoded["job_id"].(string)
}

var retryDelay = regexp.MustCompile(`retry in ([0-9.]+m?s|[0-9]+m[0-9.]+s)`)

// retries returns the delays the runtime scheduled for a stage, in order.
func retries(t *testing.T, j *job.Job, s domain.Stage) []time.Duration {
	t.Helper()
	var out []time.Duration
	for _, e := range j.History {
		if e.Type == "stage_retry_scheduled" && e.Stage == string(s) {
			m := retryDelay.FindStringSubmatch(e.Detail)
			if m == nil {
				t.Fatalf("retry event without a delay: %q", e.Detail)
			}
			d, err := time.ParseDuration(m[1])
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, d)
		}
	}
	return out
}

// An upstream 5xx twice, then success: retried with full-jitter delays
// inside each attempt's growing ceiling, and only the llm budget is spent.
func TestRetryableFailureRetriedThenSucceeds(t *testing.T) {
	fault(t, llmstandin.Fault{Status: 500, Count: 2, Body: json.RawMessage(`{"error":{"type":"server_error","code":"internal_error","message":"boom"}}`)})
	cl, id := submit(t, 12345)
	j := waitJob(t, id, untilSettled(), "succeeded", succeeded)
	if a := j.StageRecord(domain.StageLLM).Attempts; a != 3 {
		t.Fatalf("llm attempts %d, want 3", a)
	}
	if a := j.StageRecord(domain.StageFetch).Attempts; a != 1 {
		t.Fatalf("fetch attempts %d, want 1: another stage's failures must not spend its budget", a)
	}
	delays := retries(t, j, domain.StageLLM)
	if len(delays) != 2 {
		t.Fatalf("%d retries recorded, want 2", len(delays))
	}
	for i, d := range delays {
		if ceiling := backoff.Default.Cap(i + 1); d < 0 || d > ceiling {
			t.Errorf("retry %d delay %s outside [0, %s]", i+1, d, ceiling)
		}
	}
	if r := j.StageRecord(domain.StageLLM); r.LastErrorClass != failure.Upstream5xx || r.FirstFailureAt == "" {
		t.Errorf("llm stage record lost the failure history: %+v", r)
	}
	if n := len(mailsFor(cl, 1)); n != 1 {
		t.Fatalf("%d e-mails, want 1", n)
	}
}

// A provider's Retry-After is honoured inside the attempt (rules BO-2,
// BO-4): the deployed llm function waits it out instead of failing the
// attempt, so the job succeeds on its first llm attempt and the repeated call
// reaches the provider no sooner than the Retry-After asked. (A wait the
// invocation cannot fit ends the attempt RATE_LIMITED and the stage retries
// after it: llmstage.TestRateLimitWaitBeyondTheInvocationEndsTheAttempt,
// TestRetryAfterIsCappedAtFiveMinutes.)
func TestRetryAfterHonoured(t *testing.T) {
	start := time.Now()
	fault(t, llmstandin.Fault{Status: 429, RetryAfter: "3", Count: 1})
	_, id := submit(t, 12345)
	j := waitJob(t, id, untilSettled(), "succeeded", succeeded)
	if delays := retries(t, j, domain.StageLLM); len(delays) != 0 {
		t.Fatalf("retry delays %v: a Retry-After the invocation can wait out must not spend an attempt", delays)
	}
	if a := j.StageRecord(domain.StageLLM).Attempts; a != 1 {
		t.Errorf("llm attempts = %d, want 1", a)
	}
	var limited, answered time.Time
	for _, r := range env.llm.Requests() {
		switch {
		case r.Time.Before(start):
		case r.Status == 429 && limited.IsZero():
			limited = r.Time
		case r.Status == 200 && !limited.IsZero() && answered.IsZero():
			answered = r.Time
		}
	}
	if limited.IsZero() || answered.IsZero() {
		t.Fatalf("provider saw no 429 followed by an answer")
	}
	if gap := answered.Sub(limited); gap < 3*time.Second {
		t.Fatalf("the call was repeated %s after a Retry-After of 3s", gap)
	}
}

// Five upstream failures exhaust the llm budget: the DLQ gets every required
// field and no secret; a replay resumes at llm with a fresh budget and does
// not redo fetch.
func TestBudgetExhaustionDeadLettersThenReplayResumes(t *testing.T) {
	// The upstream's error body echoes secrets: none may reach the DLQ.
	leak := fmt.Sprintf(`{"error":{"code":"internal_error","message":"upstream failed for key %s while reading %s"}}`, env.secrets["LLM API key"], plantedSecrets[0])
	fault(t, llmstandin.Fault{Status: 500, Count: 5, Body: json.RawMessage(leak)})
	cl, id := submit(t, 12345)
	waitJob(t, id, untilSettled(), "failed", failed)
	item := awaitDLQ(t, domain.StageLLM, forJob(id), untilDeadLettered())

	dl := item.Env.DeadLetter
	if dl == nil {
		t.Fatalf("DLQ message has no dead_letter block: %s", item.Body)
	}
	if dl.ErrorClass != failure.Upstream5xx || dl.Stage != domain.StageLLM || dl.Attempts != 5 || dl.FirstFailureAt == "" || dl.LastFailureAt == "" || dl.LastFailureAt < dl.FirstFailureAt || dl.LastStack == "" || dl.ID == "" {
		t.Fatalf("dead_letter block incomplete: %+v", dl)
	}
	for _, k := range []string{"message_id", "request_id", "stage", "attempts", "max_attempts", "upstream_code", "body_sha256", "job_id"} {
		if _, ok := dl.SanitizedContext[k]; !ok {
			t.Errorf("sanitized_context lacks %s: %v", k, dl.SanitizedContext)
		}
	}
	if code, _ := dl.SanitizedContext["upstream_code"].(float64); code != 500 {
		t.Errorf("upstream_code %v, want 500", dl.SanitizedContext["upstream_code"])
	}
	assertNoSecrets(t, "DLQ payload", item.Body)
	j, _ := env.jobs.Get(context.Background(), id)
	assertNoSecrets(t, "job record", fmt.Sprintf("%+v", j))
	if j.StageRecord(domain.StageFetch).Attempts != 1 || j.StageRecord(domain.StageFetch).Status != job.StageDone {
		t.Fatalf("fetch stage touched by llm failures: %+v", j.StageRecord(domain.StageFetch))
	}

	// Replay: the DLQ message back on its queue, unchanged.
	body := item.Body
	url := stageURLs("QueueUrl")[domain.StageLLM]
	if _, err := env.sqs.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: &url, MessageBody: &body}); err != nil {
		t.Fatal(err)
	}
	j = waitJob(t, id, untilSettled(), "succeeded after replay", succeeded)
	llm, fetch := j.StageRecord(domain.StageLLM), j.StageRecord(domain.StageFetch)
	if llm.Replays != 1 || llm.Attempts != 1 || fetch.Attempts != 1 {
		t.Fatalf("after replay: llm %+v fetch %+v; want one replay, a fresh llm budget and fetch not redone", llm, fetch)
	}
	if n := len(mailsFor(cl, 1)); n != 1 {
		t.Fatalf("%d e-mails, want 1", n)
	}
}

// A non-retryable failure dead-letters on the first attempt; failing again
// the same way after a replay escalates.
func TestNonRetryableDeadLettersAtOnceAndRepeatEscalates(t *testing.T) {
	fault(t, llmstandin.Fault{Status: 401, Count: 1, Body: json.RawMessage(`{"error":{"code":"invalid_api_key","message":"bad key"}}`)})
	_, id := submit(t, 12345)
	waitJob(t, id, untilSettled(), "failed", failed)
	first := awaitDLQ(t, domain.StageLLM, forJob(id), untilDeadLettered())
	if dl := first.Env.DeadLetter; dl.ErrorClass != failure.AuthDenied || dl.Attempts != 1 || dl.Escalated || dl.Retryable {
		t.Fatalf("first dead letter: %+v", dl)
	}

	// Replay through the operator tool; the credential is still wrong.
	fault(t, llmstandin.Fault{Status: 401, Count: 1, Body: json.RawMessage(`{"error":{"code":"invalid_api_key","message":"bad key"}}`)})
	url := stageURLs("DlqUrl")[domain.StageLLM]
	body := first.Body
	if _, err := env.sqs.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: &url, MessageBody: &body}); err != nil {
		t.Fatal(err) // put it back: the operator tool replays from the DLQ
	}
	moved, err := operator().Replay(context.Background(), domain.StageLLM, dlq.Filter{JobID: id}, 50)
	if err != nil || len(moved) != 1 {
		t.Fatalf("replay moved %d items: %v", len(moved), err)
	}
	second := awaitDLQ(t, domain.StageLLM, func(it dlqItem) bool {
		return forJob(id)(it) && it.Env.DeadLetter != nil && it.Env.DeadLetter.ID != first.Env.DeadLetter.ID
	}, untilDeadLettered())
	if dl := second.Env.DeadLetter; dl.ErrorClass != failure.AuthDenied || !dl.Escalated || dl.ReplayCount != 1 {
		t.Fatalf("second dead letter not escalated: %+v", dl)
	}
	if !emulatorLogHas(t, `"Escalations":1`) {
		t.Error("no Escalations metric (EMF) was emitted")
	}
}

func operator() *dlq.Client {
	qs := map[domain.Stage]dlq.Queues{}
	for s, u := range stageURLs("QueueUrl") {
		qs[s] = dlq.Queues{Source: u, DLQ: stageURLs("DlqUrl")[s]}
	}
	return &dlq.Client{API: env.sqs, Queues: qs, Hold: 5 * time.Second}
}

// emulatorLogHas waits for s to appear in the functions' log (written by
// the invocation that dead-lettered, flushed within its lease).
func emulatorLogHas(t *testing.T, s string) bool {
	t.Helper()
	deadline := time.Now().Add(env.lease)
	for {
		b, err := os.ReadFile(env.local.Emulator.LogFile)
		if err == nil && bytes.Contains(b, []byte(s)) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// A worker that claimed the stage and died: its message comes back after the
// lease and the stage finishes once.
func TestCrashedWorkerMessageRedeliveredAfterLease(t *testing.T) {
	cl := newChange(t, 12345)
	j := createJob(t, cl, nil)
	// The crashed worker's claim: lease held, never completed.
	if _, err := env.jobs.Claim(context.Background(), j.ID, domain.StageFetch, job.Lease{Owner: "crashed-worker#1", Now: job.Now(), TTL: env.lease}, 5); err != nil {
		t.Fatal(err)
	}
	if err := env.queues.Send(context.Background(), envelope.Envelope{V: 1, JobID: j.ID, Changelist: cl, ReviewVersion: 1, Stage: domain.StageFetch, TraceID: "crash"}); err != nil {
		t.Fatal(err)
	}
	done := waitJob(t, j.ID, untilSettled(), "succeeded", succeeded)
	if a := done.StageRecord(domain.StageFetch).Attempts; a != 2 {
		t.Fatalf("fetch attempts %d, want 2 (the crashed one and the redelivery)", a)
	}
	var claimedAt []time.Time
	for _, e := range done.History {
		if e.Type == "stage_claimed" && e.Stage == "fetch" {
			at, _ := time.Parse(job.TimeFormat, e.At)
			claimedAt = append(claimedAt, at)
		}
	}
	if len(claimedAt) != 2 || claimedAt[1].Sub(claimedAt[0]) < env.lease-time.Second {
		t.Fatalf("reclaimed at %v: not after the lease of %s", claimedAt, env.lease)
	}
	if n := len(mailsFor(cl, 1)); n != 1 {
		t.Fatalf("%d e-mails, want 1", n)
	}
}

// createJob stores a job directly (no webhook, no enqueue; far sweep deadline).
func createJob(t testing.TB, cl int64, recipients []string) *job.Job {
	t.Helper()
	j := job.New(uuid.NewString(), uniqueKey(t), cl, 1, job.Now(), time.Hour)
	if recipients != nil {
		j.RequestedRecipients = recipients
	}
	j.TraceID = "test"
	if err := env.jobs.Create(context.Background(), j, &store.Idempotency{Key: j.IdempotencyKey, JobID: j.ID, RequestHash: "test", CreatedAt: j.CreatedAt}); err != nil {
		t.Fatal(err)
	}
	return j
}

func TestMalformedMessageGoesToDLQWithDiagnostics(t *testing.T) {
	body := fmt.Sprintf(`{"this is not": "an envelope", "nonce": %q}`, uuid.NewString())
	url := stageURLs("QueueUrl")[domain.StageFetch]
	if _, err := env.sqs.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: &url, MessageBody: &body}); err != nil {
		t.Fatal(err)
	}
	it := awaitDLQ(t, domain.StageFetch, func(it dlqItem) bool { return it.Body == body }, untilDeadLettered())
	if it.Attrs["error_class"] != string(failure.SchemaInvalid) || it.Attrs["reason"] == "" || it.Attrs["first_failure_at"] == "" || it.Attrs["stage"] != "fetch" {
		t.Fatalf("diagnostics missing: %v", it.Attrs)
	}
}

func TestMissingChangelistIsNotFoundOnFirstAttempt(t *testing.T) {
	r := postWebhook(t, map[string]any{"changelist_id": changeSeq.Add(1), "review_version": 1, "idempotency_key": uniqueKey(t)})
	id := r.Decoded["job_id"].(string)
	waitJob(t, id, untilSettled(), "failed", failed)
	it := awaitDLQ(t, domain.StageFetch, forJob(id), untilDeadLettered())
	if dl := it.Env.DeadLetter; dl.ErrorClass != failure.NotFound || dl.Attempts != 1 {
		t.Fatalf("dead letter %+v", dl)
	}
}

func TestChangelistOutsideAllowListIsRejected(t *testing.T) {
	_, id := submit(t, 12346)
	waitJob(t, id, untilSettled(), "failed", failed)
	it := awaitDLQ(t, domain.StageFetch, forJob(id), untilDeadLettered())
	if dl := it.Env.DeadLetter; dl.ErrorClass != failure.PolicyRejected || dl.Attempts != 1 {
		t.Fatalf("dead letter %+v", dl)
	}
	for _, req := range env.llm.Requests() {
		for _, m := range req.Messages {
			if strings.Contains(m.Content, "//depot/secret/") {
				t.Fatal("a path outside the allow-list reached the LLM")
			}
		}
	}
}

// --- the runtime in-process, against the emulator's DynamoDB and SQS ---

// scratch returns a test-only queue: real receipt handles for in-process
// runs, consumed by no event source mapping.
func scratch(t testing.TB) string {
	t.Helper()
	out, err := env.sqs.CreateQueue(context.Background(), &sqs.CreateQueueInput{QueueName: aws.String("it-scratch-" + uuid.NewString()[:8])})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = env.sqs.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: out.QueueUrl})
	})
	return aws.ToString(out.QueueUrl)
}

// delivered sends an envelope to the scratch queue and receives it back as
// an SQS record, the way the event source mapping would hand it over.
func delivered(t *testing.T, url string, e envelope.Envelope) events.SQSMessage {
	t.Helper()
	body, _ := e.Encode()
	if _, err := env.sqs.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: &url, MessageBody: &body}); err != nil {
		t.Fatal(err)
	}
	// Bounded by time, not by polls: a loaded emulator can answer an
	// empty long poll for several seconds after the send.
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		out, err := env.sqs.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: 30})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			if aws.ToString(m.Body) == body {
				return events.SQSMessage{MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: body,
					Attributes: map[string]string{"ApproximateReceiveCount": "1"}}
			}
		}
	}
	t.Fatal("scratch message never arrived")
	return events.SQSMessage{}
}

// jobAtNotify stores a job whose fetch and llm stages are done, so an
// in-process notify runtime can work on it without touching other stages.
func jobAtNotify(t *testing.T) *job.Job {
	t.Helper()
	j := createJob(t, changeSeq.Add(1), nil)
	_, err := env.ddb.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: aws.String(env.out["JobsTableName"]),
		Key:                       map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: "JOB#" + j.ID}, "sk": &ddbtypes.AttributeValueMemberS{Value: "JOB"}},
		UpdateExpression:          aws.String("SET #stage = :n, stages.#f.#st = :d, stages.#l.#st = :d"),
		ExpressionAttributeNames:  map[string]string{"#stage": "stage", "#st": "status", "#f": "fetch", "#l": "llm"},
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":n": &ddbtypes.AttributeValueMemberS{Value: "notify"}, ":d": &ddbtypes.AttributeValueMemberS{Value: "done"}}})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func notifyEnvelope(j *job.Job) envelope.Envelope {
	return envelope.Envelope{V: 1, JobID: j.ID, Changelist: j.Changelist, ReviewVersion: 1, Stage: domain.StageNotify, TraceID: "in-process"}
}

func runtime(url string, lease time.Duration, proc stage.Processor, metrics *bytes.Buffer) *stage.Runtime {
	q := queue.New(env.sqs, map[domain.Stage]string{domain.StageNotify: url}, stageURLs("DlqUrl"))
	return &stage.Runtime{Stage: domain.StageNotify, Jobs: env.jobs, Queues: q, Processor: proc, Lease: lease, MaxAttempts: 5,
		Backoff: backoff.Default, Log: env.quiet, Metrics: obs.NewMetrics(metrics, "test")}
}

// A panic is classified INTERNAL_BUG and dead-lettered; a retryable failure
// is reported alone in batchItemFailures; the success is acknowledged.
func TestBatchIsPartialAndPanicsAreClassified(t *testing.T) {
	url := scratch(t)
	panics, flaky, fine := jobAtNotify(t), jobAtNotify(t), jobAtNotify(t)
	proc := stage.ProcessorFunc(func(ctx context.Context, j *job.Job) (job.Result, error) {
		switch j.ID {
		case panics.ID:
			var m map[string]int
			//lint:ignore SA5000 the panic is the point: a real runtime bug inside a processor
			m["nil map"]++
		case flaky.ID:
			return job.Result{}, failure.Errorf(failure.NetworkTimeout, "connection reset")
		}
		return job.Result{}, nil
	})
	var metrics bytes.Buffer
	recs := []events.SQSMessage{delivered(t, url, notifyEnvelope(panics)), delivered(t, url, notifyEnvelope(flaky)), delivered(t, url, notifyEnvelope(fine))}
	resp, err := runtime(url, 30*time.Second, proc, &metrics).Handle(context.Background(), events.SQSEvent{Records: recs})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != recs[1].MessageId {
		t.Fatalf("batchItemFailures %+v, want only the retryable record %s", resp.BatchItemFailures, recs[1].MessageId)
	}
	it := awaitDLQ(t, domain.StageNotify, forJob(panics.ID), untilDeadLettered())
	if dl := it.Env.DeadLetter; dl.ErrorClass != failure.InternalBug || dl.Attempts != 1 || !strings.Contains(dl.LastStack, "panic") || !strings.Contains(dl.LastStack, "goroutine") {
		t.Fatalf("panic dead letter: %+v", dl)
	}
	if j, _ := env.jobs.Get(context.Background(), fine.ID); j.State != job.Succeeded {
		t.Fatalf("the healthy record's job is %s", j.State)
	}
	if j, _ := env.jobs.Get(context.Background(), flaky.ID); j.State != job.RetryWait || j.StageRecord(domain.StageNotify).LastErrorClass != failure.NetworkTimeout {
		t.Fatalf("the retryable record's job is %s", j.State)
	}
}

// Retry-After beyond the operational ceiling is capped at 5 minutes.
func TestRetryAfterIsCappedAtFiveMinutes(t *testing.T) {
	url := scratch(t)
	j := jobAtNotify(t)
	proc := stage.ProcessorFunc(func(context.Context, *job.Job) (job.Result, error) {
		return job.Result{}, failure.Upstream(429, 3*time.Hour, errors.New("quota window"))
	})
	rec := delivered(t, url, notifyEnvelope(j))
	if _, err := runtime(url, 30*time.Second, proc, &bytes.Buffer{}).Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec}}); err != nil {
		t.Fatal(err)
	}
	got, _ := env.jobs.Get(context.Background(), j.ID)
	if d := retries(t, got, domain.StageNotify); len(d) != 1 || d[0] != 5*time.Minute {
		t.Fatalf("scheduled delays %v, want [5m0s]", d)
	}
	// The message itself is hidden for the delay: nothing to receive now.
	out, _ := env.sqs.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: &url, WaitTimeSeconds: 1})
	if len(out.Messages) != 0 {
		t.Fatal("the delayed message is visible again at once")
	}
}

// When another worker takes the lease over, the first worker's heartbeat
// fails, its context is cancelled and it writes nothing.
func TestLeaseTakenOverStopsTheWorker(t *testing.T) {
	url := scratch(t)
	j := jobAtNotify(t)
	sawCancel := make(chan error, 1)
	proc := stage.ProcessorFunc(func(ctx context.Context, _ *job.Job) (job.Result, error) {
		select {
		case <-ctx.Done():
			sawCancel <- context.Cause(ctx)
			return job.Result{}, ctx.Err()
		case <-time.After(15 * time.Second):
			sawCancel <- nil
			return job.Result{}, nil
		}
	})
	rec := delivered(t, url, notifyEnvelope(j))
	resp := make(chan events.SQSEventResponse, 1)
	go func() {
		r, _ := runtime(url, 3*time.Second, proc, &bytes.Buffer{}).Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec}})
		resp <- r
	}()
	// Let the worker claim, then hand the lease to a second worker (as a requeue after expiry would).
	waitJob(t, j.ID, untilSettled(), "claimed", func(j *job.Job) bool { return j.StageRecord(domain.StageNotify).Status == job.StageRunning })
	_, err := env.ddb.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: aws.String(env.out["JobsTableName"]),
		Key:                       map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: "JOB#" + j.ID}, "sk": &ddbtypes.AttributeValueMemberS{Value: "JOB"}},
		UpdateExpression:          aws.String("SET stages.#n.#o = :o"),
		ExpressionAttributeNames:  map[string]string{"#o": "owner", "#n": "notify"},
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":o": &ddbtypes.AttributeValueMemberS{Value: "second-worker#1"}}})
	if err != nil {
		t.Fatal(err)
	}
	cause := <-sawCancel
	if !errors.Is(cause, job.ErrLeaseLost) {
		t.Fatalf("worker context cause %v, want lease lost", cause)
	}
	r := <-resp
	if len(r.BatchItemFailures) != 1 {
		t.Fatalf("the stale worker acknowledged its message: %+v", r)
	}
	after, _ := env.jobs.Get(context.Background(), j.ID)
	rec2 := after.StageRecord(domain.StageNotify)
	if after.State != job.Running || rec2.Owner != "second-worker#1" || rec2.Status != job.StageRunning {
		t.Fatalf("the stale worker wrote to the job: state %s, notify %+v", after.State, rec2)
	}
	// And a stale owner's writes are refused by the store itself.
	stale := job.Lease{Owner: rec.MessageId + "#1", Now: job.Now(), TTL: time.Minute}
	if _, err := env.jobs.Complete(context.Background(), j.ID, domain.StageNotify, stale, job.Result{}, time.Minute); !errors.Is(err, job.ErrLeaseLost) {
		t.Fatalf("stale Complete: %v, want ErrLeaseLost", err)
	}
	if err := env.jobs.Renew(context.Background(), j.ID, domain.StageNotify, stale); !errors.Is(err, job.ErrLeaseLost) {
		t.Fatalf("stale Renew: %v, want ErrLeaseLost", err)
	}
}

// A full restart is an explicit operator choice: the failed job runs again
// from fetch, and its dead letters are removed so they cannot be replayed on top.
func TestFullRestartFromFetch(t *testing.T) {
	fault(t, llmstandin.Fault{Status: 403, Count: 1, Body: json.RawMessage(`{"error":{"code":"permission_denied","message":"no"}}`)})
	cl, id := submit(t, 12345)
	j := waitJob(t, id, untilSettled(), "failed", failed)
	env.llm.Reset()
	e := envelope.Envelope{V: 1, JobID: id, Changelist: cl, ReviewVersion: 1, TraceID: j.TraceID}
	if err := operator().Restart(context.Background(), e, "integration-test", "credentials fixed"); err != nil {
		t.Fatal(err)
	}
	j = waitJob(t, id, untilSettled(), "succeeded after restart", succeeded)
	restarted := false
	fetchClaims := 0
	for _, ev := range j.History {
		restarted = restarted || ev.Type == "full_restart"
		if ev.Type == "stage_claimed" && ev.Stage == "fetch" {
			fetchClaims++
		}
	}
	if !restarted || fetchClaims != 2 || j.StageRecord(domain.StageFetch).Attempts != 1 {
		t.Fatalf("restart: history has full_restart=%v, %d fetch claims; fetch %+v", restarted, fetchClaims, j.StageRecord(domain.StageFetch))
	}
	items, err := operator().List(context.Background(), domain.StageLLM, dlq.Searched) // every item: the suite's DLQ holds many
	if err != nil {
		t.Fatal(err)
	}
	if err := operator().Release(context.Background(), items); err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.JobID() == id {
			t.Fatal("the restarted job's dead letter is still on the DLQ")
		}
	}
	if n := len(mailsFor(cl, 1)); n != 1 {
		t.Fatalf("%d e-mails, want 1", n)
	}
}
