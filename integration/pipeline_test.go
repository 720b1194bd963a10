//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/outbox"
)

// Secrets planted in fixture changelist 12345 (deploy.go): fake, never valid.
var plantedSecrets = []string{"AKIAQX7N3PLV2KD5RTWE", "Tr0ub4dor&3-staging", "s3cr3t-Relay-42"}

// The walking skeleton: a signed webhook through API Gateway ends, through
// every stage run by the emulator's event source mappings, in one e-mail per
// recipient and a succeeded job.
func TestWebhookToEmail(t *testing.T) {
	cl := newChange(t, 12345)
	resp := postWebhook(t, map[string]any{"changelist_id": cl, "review_version": 1, "idempotency_key": uniqueKey(t),
		"recipients": []string{"reviewers@example.com"}, "source": "p4-trigger"})
	if resp.Status != http.StatusAccepted {
		t.Fatalf("POST status %d, body %s", resp.Status, resp.Body)
	}
	if resp.Header.Get("Location") == "" || resp.Decoded["state"] != "queued" {
		t.Fatalf("unexpected acceptance: headers %v body %s", resp.Header, resp.Body)
	}
	id := resp.Decoded["job_id"].(string)

	j := waitJob(t, id, untilSettled(), "succeeded", succeeded)
	for _, s := range domain.Stages {
		if r := j.StageRecord(s); r.Status != job.StageDone || r.Attempts != 1 {
			t.Errorf("stage %s: status %s attempts %d, want done after 1", s, r.Status, r.Attempts)
		}
	}
	wantRcpts := []string{"alice@example.com", "reviewers@example.com"}
	if !slices.Equal(j.Recipients, wantRcpts) {
		t.Errorf("recipients %v, want %v", j.Recipients, wantRcpts)
	}
	if j.FindingCount == 0 {
		t.Error("the review found nothing in a change with a strcpy into a fixed buffer")
	}

	mails := mailsFor(cl, 1)
	if len(mails) != 2 {
		t.Fatalf("%d e-mails for CL %d v1, want 2 (one per recipient)", len(mails), cl)
	}
	var got []string
	for _, m := range mails {
		got = append(got, m.To...)
		body := string(m.Raw)
		if !strings.Contains(body, "strcpy") {
			t.Errorf("e-mail to %v does not mention the strcpy finding", m.To)
		}
		assertNoSecrets(t, "e-mail", body)
	}
	slices.Sort(got)
	if !slices.Equal(got, wantRcpts) {
		t.Errorf("e-mailed %v, want %v", got, wantRcpts)
	}

	// Outbox rows: sent, with the provider id, keyed by (changelist, recipient, version).
	for _, r := range wantRcpts {
		row, err := env.outbox.Get(context.Background(), outbox.Email(delivery.Key{Changelist: cl, Recipient: r, ReviewVersion: 1}))
		if err != nil {
			t.Fatal(err)
		}
		if row.Status != outbox.Sent || row.NotifiedAt == "" || row.NotificationID == "" || row.Attempts != 1 {
			t.Errorf("outbox row for %s: %+v", r, row)
		}
	}

	// This changelist's prompt reached the LLM, redacted.
	var prompt string
	for _, req := range env.llm.Requests() {
		for _, m := range req.Messages {
			if strings.Contains(m.Content, changeMarker(cl)) {
				prompt = m.Content
			}
		}
	}
	if prompt == "" {
		t.Fatal("no LLM request carried this changelist's prompt")
	}
	if !strings.Contains(prompt, "[REDACTED:") {
		t.Error("the prompt shows no redaction of the planted secrets")
	}
	assertNoSecrets(t, "LLM prompt", prompt)

	// The status endpoint reports the same, signed like the webhook.
	st := call(t, http.MethodGet, "/jobs/"+id, nil, nil)
	if st.Status != http.StatusOK || st.Decoded["state"] != "succeeded" {
		t.Fatalf("GET /jobs/%s: %d %s", id, st.Status, st.Body)
	}
	deliveries, _ := json.Marshal(st.Decoded["deliveries"])
	if strings.Count(string(deliveries), `"status":"sent"`) != 2 {
		t.Errorf("status endpoint deliveries: %s", deliveries)
	}
}

// Sending the same webhook twice creates one job and one e-mail per recipient.
func TestDuplicateWebhookOneJobOneEmail(t *testing.T) {
	cl := newChange(t, 12345)
	payload := map[string]any{"changelist_id": cl, "review_version": 1, "idempotency_key": uniqueKey(t)}
	first := postWebhook(t, payload)
	second := postWebhook(t, payload)
	if first.Status != http.StatusAccepted || second.Status != first.Status || string(second.Body) != string(first.Body) {
		t.Fatalf("responses differ: %d %s / %d %s", first.Status, first.Body, second.Status, second.Body)
	}
	id := first.Decoded["job_id"].(string)
	waitJob(t, id, untilSettled(), "succeeded", succeeded)
	third := postWebhook(t, payload) // after success: still the saved response, no rerun
	if string(third.Body) != string(first.Body) || third.Status != first.Status {
		t.Fatalf("duplicate after success got %d %s", third.Status, third.Body)
	}
	awaitQueuesIdle(t, untilSettled()) // any stray duplicate work has run by then
	waitHeld(t)
	if n := len(mailsFor(cl, 1)); n != 1 {
		t.Fatalf("%d e-mails, want 1", n)
	}
}
