//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	smtpstandin "github.com/criticizer/criticizer/internal/standin/smtp"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/envelope"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/webhook"
)

var changeSeq atomic.Int64

func init() { changeSeq.Store(time.Now().Unix()%1_000_000*100 + 200_000_000) }

// newChange copies fixture changelist template to a fresh changelist number
// in the test depot, so each test owns its changelist's versions and e-mails.
func newChange(t testing.TB, template int64) int64 {
	t.Helper()
	return newChangeWith(t, template, nil)
}

// newChangeWith is newChange with the fixture edited by mutate (e.g. to add
// p4 faults) before it is written.
func newChangeWith(t testing.TB, template int64, mutate func(fixture map[string]any)) int64 {
	t.Helper()
	n := changeSeq.Add(1)
	b, err := os.ReadFile(filepath.Join(env.depot, "changes", fmt.Sprintf("%d.json", template)))
	if err != nil {
		t.Fatal(err)
	}
	var fx map[string]any
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	fx["change"] = n
	// A marker in the description (after its first line, which e-mail
	// subjects use) finds this changelist's prompt among the LLM's requests.
	fx["desc"] = fmt.Sprint(fx["desc"]) + "\n" + changeMarker(n) + "\n"
	if mutate != nil {
		mutate(fx)
	}
	out, _ := json.Marshal(fx)
	// Written aside and renamed into place: p4 stand-in processes serving
	// other jobs index this directory at any moment, and a half-written
	// change would read as a broken depot (the stand-in then answers
	// "Invalid revision number" for every file, as a fetch saw once in a few
	// benchmark runs). The aside name does not end in .json: never indexed.
	dir := filepath.Join(env.depot, "changes")
	tmp := filepath.Join(dir, fmt.Sprintf(".%d.json.tmp", n))
	if err := os.WriteFile(tmp, out, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, fmt.Sprintf("%d.json", n))); err != nil {
		t.Fatal(err)
	}
	return n
}

func changeMarker(cl int64) string { return fmt.Sprintf("[integration change %d]", cl) }

type apiResponse struct {
	Status  int
	Header  http.Header
	Body    []byte
	Decoded map[string]any
}

// call sends a signed request through API Gateway on the emulator.
func call(t testing.TB, method, path string, body []byte, mutate func(*http.Request)) apiResponse {
	t.Helper()
	req, err := http.NewRequest(method, env.apiURL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Now().Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(webhook.HeaderTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(webhook.HeaderSignature, webhook.Sign(env.webhookKey, ts, method, path, body))
	if mutate != nil {
		mutate(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r := apiResponse{Status: resp.StatusCode, Header: resp.Header, Body: b}
	_ = json.Unmarshal(b, &r.Decoded)
	return r
}

func postWebhook(t testing.TB, payload map[string]any) apiResponse {
	t.Helper()
	b, _ := json.Marshal(payload)
	return call(t, http.MethodPost, "/webhooks/changelist", b, nil)
}

func uniqueKey(t testing.TB) string {
	return fmt.Sprintf("it-%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), time.Now().UnixNano())
}

// untilSettled bounds how long one job may take to reach a state under the
// faults a test injects: each of its stages may lose a worker (the message
// returns after a lease) and a job whose next message was lost is
// re-enqueued by a sweep (two leases after its deadline, on the schedule).
// It is a deadline for a failing test, not a pace: waits end on the condition.
func untilSettled() time.Duration { return 4*env.lease + 2*sweepEvery }

// untilDeadLettered bounds how long a dead letter may take to appear once its
// job is failed (the send follows the job write in the same invocation; a
// crash in between leaves it to a redelivery after the lease, or a sweep).
func untilDeadLettered() time.Duration { return 2*env.lease + sweepEvery }

// waitJob polls the job until pred holds or the timeout passes.
func waitJob(t testing.TB, id string, timeout time.Duration, what string, pred func(*job.Job) bool) *job.Job {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var j *job.Job
	for time.Now().Before(deadline) {
		var err error
		j, err = env.jobs.Get(context.Background(), id)
		if err == nil && pred(j) {
			return j
		}
		time.Sleep(250 * time.Millisecond)
	}
	if j != nil {
		hist, _ := json.MarshalIndent(j.History, "", "  ")
		t.Fatalf("job %s: not %s after %s; state %s stage %s\nhistory %s", id, what, timeout, j.State, j.Stage, hist)
	}
	t.Fatalf("job %s: not found after %s", id, timeout)
	return nil
}

func succeeded(j *job.Job) bool { return j.State == job.Succeeded }
func failed(j *job.Job) bool    { return j.State == job.Failed }

// mailsFor lists the accepted messages for one changelist version.
func mailsFor(cl int64, version int) []smtpstandin.Message {
	var out []smtpstandin.Message
	for _, m := range env.smtp.Messages() {
		if strings.Contains(m.Subject, fmt.Sprintf("CL %d v%d", cl, version)) {
			out = append(out, m)
		}
	}
	return out
}

// waitMails waits until want messages for one changelist version arrived
// (a relay may deliver after the send returned) and fails on more or fewer.
func waitMails(t *testing.T, cl int64, version, want int, timeout time.Duration) []smtpstandin.Message {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got := mailsFor(cl, version)
		if len(got) >= want || time.Now().After(deadline) {
			if len(got) != want {
				t.Fatalf("%d e-mails for CL %d v%d after %s, want %d", len(got), cl, version, timeout, want)
			}
			return got
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// dlqItem is a message found on a DLQ.
type dlqItem struct {
	Body  string
	Env   *envelope.Envelope
	Attrs map[string]string
}

// awaitDLQ waits for a message about jobID (or with the given body hash) on a
// stage's DLQ, deletes it and returns it.
func awaitDLQ(t *testing.T, stage domain.Stage, match func(dlqItem) bool, timeout time.Duration) dlqItem {
	t.Helper()
	url := stageURLs("DlqUrl")[stage]
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		out, err := env.sqs.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
			VisibilityTimeout: 2, MessageAttributeNames: []string{"All"}, MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{"All"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			it := dlqItem{Body: aws.ToString(m.Body), Attrs: map[string]string{}}
			for k, v := range m.MessageAttributes {
				it.Attrs[k] = aws.ToString(v.StringValue)
			}
			if e, err := envelope.Decode(it.Body); err == nil {
				it.Env = &e
			}
			if match(it) {
				_, _ = env.sqs.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle})
				return it
			}
		}
	}
	t.Fatalf("no matching message on the %s DLQ after %s", stage, timeout)
	return dlqItem{}
}

func forJob(id string) func(dlqItem) bool {
	return func(it dlqItem) bool { return it.Env != nil && it.Env.JobID == id }
}

// invoke runs a deployed function once, synchronously.
func invoke(t *testing.T, outputName string, payload []byte) []byte {
	t.Helper()
	out, err := env.lambda.Invoke(context.Background(), &lambda.InvokeInput{FunctionName: aws.String(env.out[outputName]), Payload: payload})
	if err != nil {
		t.Fatalf("invoke %s: %v", outputName, err)
	}
	if out.FunctionError != nil {
		t.Fatalf("invoke %s: function error %s: %s", outputName, aws.ToString(out.FunctionError), out.Payload)
	}
	return out.Payload
}

// assertNoSecrets fails when any planted or generated secret appears in s.
func assertNoSecrets(t *testing.T, what, s string) {
	t.Helper()
	for name, v := range env.secrets {
		if v != "" && strings.Contains(s, v) {
			t.Errorf("%s contains the %s", what, name)
		}
	}
	for _, planted := range plantedSecrets {
		if strings.Contains(s, planted) {
			t.Errorf("%s contains the planted secret %q", what, planted[:6]+"…")
		}
	}
}
