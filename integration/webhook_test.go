//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/criticizer/criticizer/shared/envelope"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/webhook"
)

// 100 concurrent identical webhooks: one job, 100 byte-identical answers.
func TestConcurrentIdenticalWebhooks(t *testing.T) {
	cl := newChange(t, 12345)
	key := uniqueKey(t)
	body, _ := json.Marshal(map[string]any{"changelist_id": cl, "review_version": 1, "idempotency_key": key})
	const n = 100
	resps := make([]apiResponse, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resps[i] = call(t, http.MethodPost, "/webhooks/changelist", body, nil)
		}()
	}
	wg.Wait()
	first := resps[0]
	if first.Status != http.StatusAccepted {
		t.Fatalf("status %d: %s", first.Status, first.Body)
	}
	for i, r := range resps {
		if r.Status != first.Status || !bytes.Equal(r.Body, first.Body) ||
			r.Header.Get("Location") != first.Header.Get("Location") || r.Header.Get("Content-Type") != first.Header.Get("Content-Type") {
			t.Fatalf("response %d differs: %d %s %v vs %d %s %v", i, r.Status, r.Body, r.Header, first.Status, first.Body, first.Header)
		}
	}
	if got := countJobs(t, key); got != 1 {
		t.Fatalf("%d jobs for idempotency key %s, want 1", got, key)
	}
	waitJob(t, first.Decoded["job_id"].(string), untilSettled(), "succeeded", succeeded)
	if m := len(mailsFor(cl, 1)); m != 1 {
		t.Fatalf("%d e-mails, want 1", m)
	}
}

func countJobs(t *testing.T, key string) int {
	t.Helper()
	// Every page: a Scan answers at most 1 MB, and by now the suite's table
	// holds far more (the chaos run's jobs), so one page may miss the job.
	pages := dynamodb.NewScanPaginator(env.ddb, &dynamodb.ScanInput{TableName: aws.String(env.out["JobsTableName"]),
		FilterExpression:          aws.String("sk = :job AND idempotency_key = :k"),
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":job": &ddbtypes.AttributeValueMemberS{Value: "JOB"}, ":k": &ddbtypes.AttributeValueMemberS{Value: key}}})
	n := 0
	for pages.HasMorePages() {
		out, err := pages.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		n += len(out.Items)
	}
	return n
}

func TestSameKeyDifferentPayloadIsRejected(t *testing.T) {
	cl := newChange(t, 12345)
	key := uniqueKey(t)
	if r := postWebhook(t, map[string]any{"changelist_id": cl, "review_version": 1, "idempotency_key": key}); r.Status != http.StatusAccepted {
		t.Fatalf("first: %d %s", r.Status, r.Body)
	}
	r := postWebhook(t, map[string]any{"changelist_id": cl, "review_version": 2, "idempotency_key": key})
	if r.Status != http.StatusUnprocessableEntity || errCode(r) != "idempotency_key_reused" {
		t.Fatalf("same key, other payload: %d %s; want 422 idempotency_key_reused", r.Status, r.Body)
	}
	if got := countJobs(t, key); got != 1 {
		t.Fatalf("%d jobs, want 1", got)
	}
}

func errCode(r apiResponse) string {
	e, _ := r.Decoded["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

// Every rejection is a 4xx with a machine-readable reason, through API Gateway.
func TestWebhookRejections(t *testing.T) {
	good, _ := json.Marshal(map[string]any{"changelist_id": 1, "review_version": 1, "idempotency_key": "never-stored"})
	sign := func(ts int64, body []byte) func(*http.Request) {
		return func(r *http.Request) {
			r.Header.Set(webhook.HeaderTimestamp, strconv.FormatInt(ts, 10))
			r.Header.Set(webhook.HeaderSignature, webhook.Sign(env.webhookKey, ts, "POST", "/webhooks/changelist", body))
		}
	}
	big := append([]byte(`{"changelist_id":1,"review_version":1,"idempotency_key":"big","requested_by":"`), bytes.Repeat([]byte("x"), 300<<10)...)
	big = append(big, `"}`...)
	tests := []struct {
		name   string
		body   []byte
		mutate func(*http.Request)
		status int
		code   string
	}{
		{"bad signature", good, func(r *http.Request) {
			r.Header.Set(webhook.HeaderSignature, webhook.Sign([]byte("wrong-key-123456"), time.Now().Unix(), "POST", "/webhooks/changelist", good))
		}, 401, "invalid_signature"},
		{"signature over another body", good, sign(time.Now().Unix(), []byte(`{}`)), 401, "invalid_signature"},
		{"no signature", good, func(r *http.Request) { r.Header.Del(webhook.HeaderSignature) }, 401, "missing_signature"},
		{"stale timestamp", good, sign(time.Now().Add(-time.Hour).Unix(), good), 401, "stale_timestamp"},
		{"malformed JSON", []byte(`{"changelist_id": 1,`), nil, 400, "malformed_json"},
		{"missing field", []byte(`{"changelist_id":1,"review_version":1}`), nil, 400, "missing_field"},
		{"invalid field", []byte(`{"changelist_id":-1,"review_version":1,"idempotency_key":"k"}`), nil, 400, "invalid_field"},
		{"oversize body", big, nil, 413, "payload_too_large"},
		{"wrong content type", good, func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") }, 415, "unsupported_media_type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, http.MethodPost, "/webhooks/changelist", tt.body, tt.mutate)
			if r.Status != tt.status || errCode(r) != tt.code {
				t.Fatalf("got %d %q (%s), want %d %q", r.Status, errCode(r), truncate(r.Body), tt.status, tt.code)
			}
		})
	}
	if countJobs(t, "never-stored") != 0 || countJobs(t, "big") != 0 {
		t.Fatal("a rejected request created a job")
	}
}

func truncate(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

// Versioned reruns: lower → 409, equal → the existing job (no-op), higher → a new job.
func TestRerunRules(t *testing.T) {
	cl := newChange(t, 12345)
	v2 := postWebhook(t, map[string]any{"changelist_id": cl, "review_version": 2, "idempotency_key": uniqueKey(t)})
	if v2.Status != http.StatusAccepted {
		t.Fatalf("v2: %d %s", v2.Status, v2.Body)
	}
	v2id := v2.Decoded["job_id"].(string)
	waitJob(t, v2id, untilSettled(), "succeeded", succeeded)

	lower := postWebhook(t, map[string]any{"changelist_id": cl, "review_version": 1, "idempotency_key": uniqueKey(t) + "-low"})
	if lower.Status != http.StatusConflict || errCode(lower) != "stale_review_version" {
		t.Fatalf("lower version: %d %s", lower.Status, lower.Body)
	}
	equal := postWebhook(t, map[string]any{"changelist_id": cl, "review_version": 2, "idempotency_key": uniqueKey(t) + "-eq"})
	if equal.Status != http.StatusOK || equal.Decoded["job_id"] != v2id || equal.Decoded["rerun"] != false {
		t.Fatalf("equal version: %d %s; want 200 with job %s", equal.Status, equal.Body, v2id)
	}
	higher := postWebhook(t, map[string]any{"changelist_id": cl, "review_version": 3, "idempotency_key": uniqueKey(t) + "-hi"})
	if higher.Status != http.StatusAccepted || higher.Decoded["job_id"] == v2id {
		t.Fatalf("higher version: %d %s", higher.Status, higher.Body)
	}
	waitJob(t, higher.Decoded["job_id"].(string), untilSettled(), "succeeded", succeeded)
	if len(mailsFor(cl, 2)) != 1 || len(mailsFor(cl, 3)) != 1 || len(mailsFor(cl, 1)) != 0 {
		t.Fatalf("e-mails per version: v1 %d, v2 %d, v3 %d; want 0, 1, 1", len(mailsFor(cl, 1)), len(mailsFor(cl, 2)), len(mailsFor(cl, 3)))
	}
	// Version 3 of the same code, e-mail only: compared with version 2, every finding still open.
	if s := mailsFor(cl, 3)[0].Subject; !strings.Contains(s, "; since v2: 0 new, 0 resolved") {
		t.Errorf("version 3's subject %q: want it compared with version 2", s)
	}
	if text := textPart(t, mailsFor(cl, 3)[0].Raw); !strings.Contains(text, "STILL OPEN (") || strings.Contains(text, "NEW (") {
		t.Errorf("version 3's e-mail is not grouped as still open:\n%s", text)
	}
}

type crashingQueue struct{}

func (crashingQueue) Send(context.Context, envelope.Envelope) error {
	panic("fault injection: the process dies after the job write, before the enqueue")
}

// The job is written, then the process dies before the first message is
// sent: the sweeper still gets the job to succeeded.
func TestJobStoredButNeverEnqueuedStillSucceeds(t *testing.T) {
	cl := newChange(t, 12345)
	h := &webhook.Handler{Jobs: env.jobs, Deliveries: env.outbox, Queue: crashingQueue{}, Log: env.quiet,
		ReplayWindow: 5 * time.Minute, SweepAfter: time.Second,
		Keys: func(context.Context, bool) ([][]byte, error) { return [][]byte{env.webhookKey}, nil }}
	body, _ := json.Marshal(map[string]any{"changelist_id": cl, "review_version": 1, "idempotency_key": uniqueKey(t)})
	ts := time.Now().Unix()
	req := events.APIGatewayProxyRequest{HTTPMethod: "POST", Resource: "/webhooks/changelist", Path: "/webhooks/changelist", Body: string(body),
		Headers: map[string]string{"content-type": "application/json", "x-criticizer-timestamp": strconv.FormatInt(ts, 10),
			"x-criticizer-signature": webhook.Sign(env.webhookKey, ts, "POST", "/webhooks/changelist", body)}}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the injected crash did not happen")
			}
		}()
		_, _ = h.Handle(context.Background(), req)
	}()
	cr, err := env.jobs.GetChangelist(context.Background(), cl)
	if err != nil {
		t.Fatalf("the job was not stored before the crash: %v", err)
	}
	j, err := env.jobs.Get(context.Background(), cr.LatestJobID)
	if err != nil || j.State != job.Queued || j.StageRecord("fetch").Attempts != 0 {
		t.Fatalf("stored job: %+v, %v", j, err)
	}
	// Wait for the clock to pass the job's own sweep deadline.
	due, err := time.Parse(job.TimeFormat, j.SweepAt)
	if err != nil {
		t.Fatalf("stored job has no sweep deadline: %q", j.SweepAt)
	}
	time.Sleep(time.Until(due.Add(10 * time.Millisecond)))
	// Run the sweeper now rather than wait for its schedule. The scheduled
	// run may get there first; either way one sweep must re-enqueue the job.
	invoke(t, "SweeperFunctionName", []byte(`{}`))
	done := waitJob(t, j.ID, untilSettled(), "succeeded", succeeded)
	swept := false
	for _, e := range done.History {
		swept = swept || (e.Type == "swept" && strings.HasPrefix(e.Detail, "re-enqueued fetch"))
	}
	if !swept {
		t.Fatalf("the job succeeded without a sweep re-enqueueing it: %+v", done.History)
	}
	if n := len(mailsFor(cl, 1)); n != 1 {
		t.Fatalf("%d e-mails, want 1", n)
	}
}

func TestStatusEndpoint(t *testing.T) {
	if r := call(t, http.MethodGet, "/jobs/no-such-job", nil, nil); r.Status != http.StatusNotFound || errCode(r) != "job_not_found" {
		t.Fatalf("unknown job: %d %s", r.Status, r.Body)
	}
	r := call(t, http.MethodGet, "/jobs/no-such-job", nil, func(r *http.Request) { r.Header.Del(webhook.HeaderSignature) })
	if r.Status != http.StatusUnauthorized {
		t.Fatalf("unsigned status request: %d %s", r.Status, r.Body)
	}
}

// During a rotation both the new and the previous secret verify.
func TestWebhookSecretRotation(t *testing.T) {
	old := env.webhookKey
	newKey := "rotated-" + strings.ReplaceAll(uniqueKey(t), "-", "")
	_, err := env.sm.PutSecretValue(context.Background(), &secretsmanager.PutSecretValueInput{SecretId: aws.String(env.out["WebhookSecretArn"]), SecretString: aws.String(newKey)})
	if err != nil {
		t.Fatal(err)
	}
	env.secrets["rotated webhook key"] = newKey
	for _, k := range []struct {
		name string
		key  []byte
	}{{"new", []byte(newKey)}, {"previous", old}} {
		env.webhookKey = k.key
		cl := newChange(t, 12345)
		// A warm function that read the key moments ago re-reads it after a
		// mismatch only once per webhook.RefreshEvery (bad requests are cheap).
		var r apiResponse
		deadline := time.Now().Add(webhook.RefreshEvery + 10*time.Second)
		for {
			r = postWebhook(t, map[string]any{"changelist_id": cl, "review_version": 1, "idempotency_key": uniqueKey(t) + k.name})
			if r.Status != http.StatusUnauthorized || time.Now().After(deadline) {
				break
			}
			time.Sleep(time.Second)
		}
		if r.Status != http.StatusAccepted {
			t.Fatalf("signed with the %s key: %d %s", k.name, r.Status, r.Body)
		}
	}
	env.webhookKey = []byte(newKey)
	env.secrets["webhook hmac key"] = newKey
}
