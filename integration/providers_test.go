//go:build integration

package integration

import (
	"context"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"

	llmstandin "github.com/criticizer/criticizer/internal/standin/llm"
)

// setReviewEnv changes the llm function's environment for one test and
// restores it afterwards: the deployed stack speaks OpenAI; these tests
// switch the provider family the way an operator would (configuration only).
func setReviewEnv(t testing.TB, change map[string]string) {
	t.Helper()
	setFunctionEnv(t, "LlmFunctionName", change)
}

// setFunctionEnv changes the environment of the function the stack output
// names for one test and restores it afterwards.
func setFunctionEnv(t testing.TB, output string, change map[string]string) {
	t.Helper()
	ctx := context.Background()
	name := aws.String(env.out[output])
	cfg, err := env.lambda.GetFunctionConfiguration(ctx, &lambda.GetFunctionConfigurationInput{FunctionName: name})
	if err != nil {
		t.Fatal(err)
	}
	orig := map[string]string{}
	if cfg.Environment != nil {
		orig = maps.Clone(cfg.Environment.Variables)
	}
	next := maps.Clone(orig)
	maps.Copy(next, change)
	update := func(vars map[string]string) error {
		if _, err := env.lambda.UpdateFunctionConfiguration(ctx, &lambda.UpdateFunctionConfigurationInput{
			FunctionName: name, Environment: &lambdatypes.Environment{Variables: vars}}); err != nil {
			return err
		}
		// Wait for the update to apply, as AWS requires before the next change.
		deadline := time.Now().Add(60 * time.Second)
		for {
			c, err := env.lambda.GetFunctionConfiguration(ctx, &lambda.GetFunctionConfigurationInput{FunctionName: name})
			if err != nil {
				return err
			}
			if c.LastUpdateStatus != lambdatypes.LastUpdateStatusInProgress && c.Environment != nil &&
				maps.Equal(c.Environment.Variables, vars) {
				return nil
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s configuration not updated after 60s (status %s)", output, c.LastUpdateStatus)
			}
			time.Sleep(200 * time.Millisecond) // polling an API for a state change, not synchronising on time
		}
	}
	if err := update(next); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := update(orig); err != nil {
			t.Errorf("restore the environment of %s: %v", output, err)
		}
	})
}

// TestReviewThroughEachProviderFamily runs a webhook-to-e-mail job with the
// llm function switched to Anthropic Messages and to Bedrock Converse (the
// AWS SDK with the function's credentials, its BaseEndpoint pointed at the
// stand-in), and checks the model was asked in that family's wire format and
// that the job records the tokens it cost.
func TestReviewThroughEachProviderFamily(t *testing.T) {
	for _, tt := range []struct {
		provider, format, path string
		vars                   map[string]string
	}{
		{"anthropic", llmstandin.FormatAnthropic, "/v1/messages", map[string]string{"LLM_PROVIDER": "anthropic"}},
		{"bedrock", llmstandin.FormatBedrock, "/converse", map[string]string{"LLM_PROVIDER": "bedrock", "LLM_MODEL": "anthropic.claude-3-5-sonnet-20240620-v1:0"}},
	} {
		t.Run(tt.provider, func(t *testing.T) {
			setReviewEnv(t, tt.vars)
			cl := newChange(t, 12345)
			resp := postWebhook(t, map[string]any{"changelist_id": cl, "review_version": 1, "idempotency_key": uniqueKey(t),
				"recipients": []string{"reviewers@example.com"}, "source": "p4-trigger"})
			if resp.Status != http.StatusAccepted {
				t.Fatalf("POST status %d, body %s", resp.Status, resp.Body)
			}
			j := waitJob(t, resp.Decoded["job_id"].(string), 90*time.Second, "succeeded", succeeded)
			if j.FindingCount == 0 || j.Review == nil || j.Review.InputTokens == 0 || j.Review.OutputTokens == 0 || j.Review.ModelCalls != 1 {
				t.Errorf("job: findings %d, review stats %+v", j.FindingCount, j.Review)
			}
			var seen bool
			for _, r := range env.llm.Requests() {
				if len(r.Messages) > 1 && strings.Contains(r.Messages[len(r.Messages)-1].Content, changeMarker(cl)) {
					seen = true
					if r.Format != tt.format || !strings.HasSuffix(r.Path, tt.path) || r.Status != http.StatusOK {
						t.Errorf("request in %s to %s (status %d), want %s %s", r.Format, r.Path, r.Status, tt.format, tt.path)
					}
				}
			}
			if !seen {
				t.Error("no request for this changelist reached the stand-in")
			}
			if mails := mailsFor(cl, 1); len(mails) != 2 {
				t.Errorf("%d e-mails, want 2", len(mails))
			}
		})
	}
}
