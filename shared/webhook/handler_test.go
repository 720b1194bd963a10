package webhook

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/criticizer/criticizer/shared/envelope"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/recipients"
	"github.com/criticizer/criticizer/shared/store"
)

// racingJobs answers Create the way DynamoDB answers a duplicate that raced
// the original: conflicts while the original's transaction is in flight,
// then the duplicate-key cancellation with the original's record.
type racingJobs struct {
	conflicts int
	existing  *store.Idempotency
	calls     int
}

func (r *racingJobs) Create(_ context.Context, j *job.Job, idem *store.Idempotency) error {
	r.calls++
	if r.calls <= r.conflicts {
		return failure.Wrap(failure.Conflict, errors.New("TransactionConflict"))
	}
	return &store.DuplicateKeyError{Existing: r.existing}
}

func (r *racingJobs) Get(context.Context, string) (*job.Job, error) { return nil, job.ErrNotFound }

type nopQueue struct{}

func (nopQueue) Send(context.Context, envelope.Envelope) error { return nil }

func signed(key []byte, body string) events.APIGatewayProxyRequest {
	ts := time.Now().Unix()
	return events.APIGatewayProxyRequest{HTTPMethod: "POST", Resource: "/webhooks/changelist", Body: body,
		Headers: map[string]string{HeaderTimestamp: strconv.FormatInt(ts, 10), HeaderSignature: Sign(key, ts, "POST", "/webhooks/changelist", []byte(body))}}
}

func TestDuplicateRacingTheOriginal(t *testing.T) {
	key := []byte("unit-test-key-0123456789")
	body := `{"changelist_id":7,"review_version":1,"idempotency_key":"k"}`
	req, _ := Parse([]byte(body))
	saved := store.SavedResponse{Status: 202, Headers: map[string]string{"Content-Type": "application/json", "Location": "/jobs/orig"}, Body: `{"job_id":"orig"}`}
	tests := []struct {
		name       string
		conflicts  int
		hash       string
		wantStatus int
		wantBody   string
	}{
		{"conflicts then the saved response", 2, req.Hash(), 202, saved.Body},
		{"different payload under the key", 1, "other-hash", http.StatusUnprocessableEntity, ""},
		{"conflicts that do not clear", 10, req.Hash(), http.StatusServiceUnavailable, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jobs := &racingJobs{conflicts: tt.conflicts, existing: &store.Idempotency{Key: "k", JobID: "orig", RequestHash: tt.hash, Response: saved}}
			h := &Handler{Jobs: jobs, Queue: nopQueue{}, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), ReplayWindow: time.Minute,
				Keys: func(context.Context, bool) ([][]byte, error) { return [][]byte{key}, nil }}
			resp, err := h.Handle(context.Background(), signed(key, body))
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.wantStatus || (tt.wantBody != "" && resp.Body != tt.wantBody) {
				t.Fatalf("got %d %s, want %d %s", resp.StatusCode, resp.Body, tt.wantStatus, tt.wantBody)
			}
			if tt.wantStatus == 202 && resp.Headers["Location"] != "/jobs/orig" {
				t.Fatalf("saved headers not returned: %v", resp.Headers)
			}
		})
	}
}

// TestRecipientPolicyAtTheDoor: a request naming an address outside the
// policy, or more than its maximum, gets 422 with the reason, and nothing is
// stored or enqueued.
func TestRecipientPolicyAtTheDoor(t *testing.T) {
	key := []byte("unit-test-key-0123456789")
	policy, err := recipients.Parse([]string{"example.com", "*.corp.example.com"}, 3)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		recipients string
		wantStatus int
		wantCode   string
		wantInMsg  string
	}{
		{"allowed domains", `["a@example.com","B@Mail.Corp.Example.com"]`, http.StatusAccepted, "", ""},
		{"outside domain", `["a@example.com","eve@attacker.example"]`, http.StatusUnprocessableEntity, "recipient_not_allowed", "eve@attacker.example (domain_not_allowed)"},
		{"look-alike subdomain", `["eve@example.com.attacker.example"]`, http.StatusUnprocessableEntity, "recipient_not_allowed", "domain_not_allowed"},
		{"apex of a wildcard entry", `["x@corp.example.com"]`, http.StatusUnprocessableEntity, "recipient_not_allowed", "x@corp.example.com"},
		{"quoted local part naming another domain", `["\"eve@example.com\"@attacker.example"]`, http.StatusBadRequest, "invalid_field", "recipients[0]"},
		{"more than the maximum", `["a@example.com","b@example.com","c@example.com","d@example.com"]`, http.StatusUnprocessableEntity, "too_many_recipients", "at most 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jobs := &recordingJobs{}
			var logs strings.Builder
			h := &Handler{Jobs: jobs, Queue: nopQueue{}, Log: slog.New(slog.NewJSONHandler(&logs, nil)), ReplayWindow: time.Minute,
				Keys: func(context.Context, bool) ([][]byte, error) { return [][]byte{key}, nil }, Recipients: policy}
			body := `{"changelist_id":7,"review_version":1,"idempotency_key":"k","recipients":` + tt.recipients + `}`
			resp, err := h.Handle(context.Background(), signed(key, body))
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.wantStatus || !strings.Contains(resp.Body, tt.wantCode) || !strings.Contains(resp.Body, tt.wantInMsg) {
				t.Fatalf("got %d %s, want %d %s %q", resp.StatusCode, resp.Body, tt.wantStatus, tt.wantCode, tt.wantInMsg)
			}
			if stored := len(jobs.created); (tt.wantStatus == http.StatusAccepted) != (stored == 1) {
				t.Fatalf("%d jobs stored for a %d answer", stored, resp.StatusCode)
			}
			if tt.wantCode == "recipient_not_allowed" && !strings.Contains(logs.String(), `"event":"recipient_rejected"`) {
				t.Errorf("no security event logged: %s", logs.String())
			}
		})
	}
}

// A reused idempotency key whose request names other recipients is refused
// like any other payload difference (the e-mail would go to people the
// first request never named); the same recipients in another order or case
// get the saved response.
func TestReusedKeyWithOtherRecipientsIsRefused(t *testing.T) {
	key := []byte("unit-test-key-0123456789")
	first, err := Parse([]byte(`{"changelist_id":7,"review_version":1,"idempotency_key":"k","recipients":["a@example.com","b@example.com"]}`))
	if err != nil {
		t.Fatal(err)
	}
	saved := store.SavedResponse{Status: 202, Headers: map[string]string{"Location": "/jobs/orig"}, Body: `{"job_id":"orig"}`}
	policy, err := recipients.Parse([]string{"example.com"}, 5)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		recipients string
		want       int
	}{
		{`["B@example.com","a@example.com"]`, http.StatusAccepted},
		{`["a@example.com","c@example.com"]`, http.StatusUnprocessableEntity},
		{`["a@example.com"]`, http.StatusUnprocessableEntity},
		{`["a@example.com","b@example.com","c@example.com"]`, http.StatusUnprocessableEntity},
	} {
		jobs := &racingJobs{existing: &store.Idempotency{Key: "k", JobID: "orig", RequestHash: first.Hash(), Response: saved}}
		h := &Handler{Jobs: jobs, Queue: nopQueue{}, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), ReplayWindow: time.Minute, Recipients: policy,
			Keys: func(context.Context, bool) ([][]byte, error) { return [][]byte{key}, nil }}
		resp, err := h.Handle(context.Background(), signed(key, `{"changelist_id":7,"review_version":1,"idempotency_key":"k","recipients":`+tt.recipients+`}`))
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != tt.want {
			t.Errorf("key reused with recipients %s: %d %s, want %d", tt.recipients, resp.StatusCode, resp.Body, tt.want)
		}
	}
}
