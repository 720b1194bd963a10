//go:build integration

package integration

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	llmstandin "github.com/criticizer/criticizer/internal/standin/llm"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/webhook"
)

// Emergency rotation of the LLM key: the provider stops accepting the old key
// at once. A warm llm function, which cached the old key, must pick up the
// new one from Secrets Manager within the same attempt, without a redeploy.
func TestLLMKeyEmergencyRotation(t *testing.T) {
	_, warm := submit(t, 12345) // make sure the llm function is warm with the old key
	waitJob(t, warm, untilSettled(), "succeeded", succeeded)

	newKey := "sk-rotated-" + strings.ReplaceAll(uniqueKey(t), "-", "")[:24]
	if _, err := env.sm.PutSecretValue(context.Background(), &secretsmanager.PutSecretValueInput{
		SecretId: aws.String(env.out["LlmSecretArn"]), SecretString: aws.String(fmt.Sprintf(`{"api_key":%q}`, newKey))}); err != nil {
		t.Fatal(err)
	}
	env.secrets["rotated LLM API key"] = newKey
	addr := strings.TrimPrefix(env.llm.URL(), "http://")
	if err := env.llm.Close(); err != nil {
		t.Fatal(err)
	}
	rotated := llmstandin.NewServer(llmstandin.Options{APIKey: newKey})
	var err error
	for i := 0; i < 20; i++ { // the port is free again once the old listener is gone
		if _, err = rotated.Start(addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	env.llm, env.local.LLM = rotated, rotated

	_, id := submit(t, 12345)
	j := waitJob(t, id, untilSettled(), "succeeded", succeeded)
	if a := j.StageRecord(domain.StageLLM).Attempts; a != 1 {
		t.Fatalf("llm attempts %d: the rotation should be absorbed inside one attempt", a)
	}
	reqs := rotated.Requests()
	if len(reqs) < 2 || reqs[0].Status != 401 || reqs[len(reqs)-1].Status != 200 {
		t.Fatalf("want a rejected call with the old key, then success with the new one; got %d requests", len(reqs))
	}
}

// Revocation of the webhook credential, end to end as docs/operating.md
// ("Rotating and revoking caller credentials") does it: rotate with the
// operator tool (the previous key keeps verifying during the recorded
// overlap), revoke the previous key, and it is refused within the
// documented cache bound (webhook.KeyCacheTTL); an emergency rotation
// (--overlap 0) refuses the replaced key without a revocation.
func TestWebhookCredentialRevocation(t *testing.T) {
	original := env.webhookKey
	defer func() { env.webhookKey = original }()
	rotate := func(overlap string) []byte {
		out := strings.TrimSpace(criticizer(t, "secret", "rotate", "webhook", "--overlap", overlap))
		lines := strings.Split(out, "\n")
		key := lines[len(lines)-1]
		if len(lines) != 2 || len(key) < 40 || !strings.Contains(lines[0], "verifies until") {
			t.Fatalf("secret rotate printed %q", out)
		}
		env.secrets["webhook key rotated with the CLI, overlap "+overlap] = key
		return []byte(key)
	}
	// A signed status request answers 404 for an unknown job when the key
	// verifies and 401 when it does not; it stores nothing either way.
	status := func(key []byte) int {
		env.webhookKey = key
		return call(t, http.MethodGet, "/jobs/00000000-0000-4000-8000-000000000000", nil, nil).Status
	}
	old := original
	rotated := rotate("1h")
	// A warm function re-reads the key after a mismatch once per
	// webhook.RefreshEvery: the new key verifies within that.
	within(t, webhook.RefreshEvery+10*time.Second, "the new key verifies", func() bool { return status(rotated) == http.StatusNotFound })
	if s := status(old); s != http.StatusNotFound {
		t.Fatalf("the previous key during its overlap: %d", s)
	}

	if out := criticizer(t, "secret", "revoke-previous", "webhook"); !strings.Contains(out, "revoked") {
		t.Fatalf("revoke-previous: %q", out)
	}
	within(t, webhook.KeyCacheTTL+30*time.Second, "the revoked key is refused", func() bool { return status(old) == http.StatusUnauthorized })
	if s := status(rotated); s != http.StatusNotFound {
		t.Fatalf("the current key after the revocation: %d", s)
	}

	// Emergency rotation: the replaced key stops at once.
	emergency := rotate("0s")
	within(t, webhook.RefreshEvery+10*time.Second, "the emergency key verifies", func() bool { return status(emergency) == http.StatusNotFound })
	within(t, webhook.KeyCacheTTL+30*time.Second, "the replaced key is refused", func() bool { return status(rotated) == http.StatusUnauthorized })
	original = emergency // later tests sign with the current key
	env.secrets["webhook hmac key"] = string(emergency)
}

// within waits for cond to hold, failing after bound (a deadline for a
// failing test, not a pace: it ends on the condition).
func within(t *testing.T, bound time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not the case after %s: %s", bound, what)
		}
		time.Sleep(time.Second)
	}
}
