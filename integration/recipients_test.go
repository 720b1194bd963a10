//go:build integration

package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
)

// A caller naming a recipient outside the environment's recipient policy
// gets 422 with the reason, and nothing is stored: the same key with an
// allowed recipient is then a new job, not a reused key.
func TestWebhookRefusesRecipientsOutsideThePolicy(t *testing.T) {
	cl := newChange(t, 12345)
	key := uniqueKey(t)
	r := postWebhook(t, map[string]any{"changelist_id": cl, "review_version": 1, "idempotency_key": key,
		"recipients": []string{"reviewers@example.com", "eve@attacker.example"}})
	if r.Status != http.StatusUnprocessableEntity || errCode(r) != "recipient_not_allowed" || !strings.Contains(string(r.Body), "eve@attacker.example (domain_not_allowed)") {
		t.Fatalf("outside recipient: %d %s", r.Status, r.Body)
	}
	r = postWebhook(t, map[string]any{"changelist_id": cl, "review_version": 1, "idempotency_key": key, "recipients": []string{"reviewers@example.com"}})
	if r.Status != http.StatusAccepted {
		t.Fatalf("the refused request stored something: the same key now answers %d %s", r.Status, r.Body)
	}
	waitJob(t, r.Decoded["job_id"].(string), untilSettled(), "succeeded", succeeded)
	for _, m := range waitMails(t, cl, 1, 2, untilSettled()) {
		for _, to := range m.To {
			if strings.HasSuffix(to, "@attacker.example") {
				t.Errorf("e-mailed %s", to)
			}
		}
	}
}

// Recipients resolved later — here the author's Perforce user spec, which
// any user can edit — are held against the policy: the outside address is
// never e-mailed and is recorded in the job's history; a job with no allowed
// recipient left ends POLICY_REJECTED at fetch.
func TestResolvedRecipientOutsideThePolicyIsNotEmailed(t *testing.T) {
	user := fmt.Sprintf("mallory%d", changeSeq.Add(1))
	spec, _ := json.Marshal(map[string]string{"User": user, "Email": strings.ToUpper(user) + "@Attacker.Example", "FullName": "Mallory"})
	if err := os.WriteFile(filepath.Join(env.depot, "users", user+".json"), spec, 0o644); err != nil {
		t.Fatal(err)
	}
	outside := user + "@attacker.example"
	byMallory := func(fx map[string]any) { fx["user"] = user }

	t.Run("another recipient allowed", func(t *testing.T) {
		cl := newChangeWith(t, 12345, byMallory)
		r := postWebhook(t, map[string]any{"changelist_id": cl, "review_version": 1, "idempotency_key": uniqueKey(t), "recipients": []string{"reviewers@example.com"}})
		if r.Status != http.StatusAccepted {
			t.Fatalf("webhook: %d %s", r.Status, r.Body)
		}
		j := waitJob(t, r.Decoded["job_id"].(string), untilSettled(), "succeeded", succeeded)
		if !slices.Equal(j.Recipients, []string{"reviewers@example.com"}) {
			t.Errorf("recipients %q: the outside author must not be one", j.Recipients)
		}
		recorded := false
		for _, e := range j.History {
			recorded = recorded || (e.Type == job.EventCompleted && e.Stage == string(domain.StageFetch) &&
				strings.Contains(e.Detail, "not e-mailed, outside the recipient policy: "+outside))
		}
		if !recorded {
			hist, _ := json.MarshalIndent(j.History, "", "  ")
			t.Errorf("the refusal is not in the job's history:\n%s", hist)
		}
		for _, m := range waitMails(t, cl, 1, 1, untilSettled()) {
			if slices.Contains(m.To, outside) {
				t.Errorf("e-mailed %s", outside)
			}
		}
	})
	t.Run("nobody else", func(t *testing.T) {
		cl := newChangeWith(t, 12345, byMallory)
		r := postWebhook(t, map[string]any{"changelist_id": cl, "review_version": 1, "idempotency_key": uniqueKey(t)})
		if r.Status != http.StatusAccepted {
			t.Fatalf("webhook: %d %s", r.Status, r.Body)
		}
		j := waitJob(t, r.Decoded["job_id"].(string), untilDeadLettered()+untilSettled(), "failed", failed)
		if s := j.StageRecord(domain.StageFetch); s.LastErrorClass != failure.PolicyRejected || s.Attempts != 1 {
			t.Fatalf("fetch stage %+v: want POLICY_REJECTED on the first attempt", s)
		}
		if j.Artifacts.Redacted != "" || len(mailsFor(cl, 1)) != 0 {
			t.Errorf("a policy-rejected job stored %q or sent %d e-mails", j.Artifacts.Redacted, len(mailsFor(cl, 1)))
		}
	})
}

// A changelist whose describe lists no files (all hidden from the service
// user, or an empty shelf) is rejected whole as POLICY_REJECTED: neither
// its description nor anything else reaches the LLM or an e-mail.
func TestChangelistWithNoVisibleFilesIsRejected(t *testing.T) {
	cl := newChangeWith(t, 12345, func(fx map[string]any) { fx["files"] = []any{} })
	r := postWebhook(t, map[string]any{"changelist_id": cl, "review_version": 1, "idempotency_key": uniqueKey(t), "recipients": []string{"reviewers@example.com"}})
	if r.Status != http.StatusAccepted {
		t.Fatalf("webhook: %d %s", r.Status, r.Body)
	}
	j := waitJob(t, r.Decoded["job_id"].(string), untilDeadLettered()+untilSettled(), "failed", failed)
	if s := j.StageRecord(domain.StageFetch); s.LastErrorClass != failure.PolicyRejected || s.Attempts != 1 {
		t.Fatalf("fetch stage %+v: want POLICY_REJECTED on the first attempt", s)
	}
	if j.Stage != domain.StageFetch || j.Artifacts.Raw != "" || j.Artifacts.Redacted != "" {
		t.Errorf("job reached %s with artifacts %+v", j.Stage, j.Artifacts)
	}
	for _, req := range env.llm.Requests() {
		for _, m := range req.Messages {
			if strings.Contains(m.Content, changeMarker(cl)) {
				t.Fatal("the changelist's description reached the LLM")
			}
		}
	}
	if n := len(mailsFor(cl, 1)); n != 0 {
		t.Errorf("%d e-mails for a rejected changelist", n)
	}
}
