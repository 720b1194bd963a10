// Command review is the llm stage: it sends the redacted changeset to the
// LLM and stores the validated ReviewResult. See shared/pipeline,
// shared/review and shared/llm.
package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/criticizer/criticizer/shared/coldstart"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/llm"
	"github.com/criticizer/criticizer/shared/pipeline"
	"github.com/criticizer/criticizer/shared/redact"
	"github.com/criticizer/criticizer/shared/review"
	"github.com/criticizer/criticizer/shared/secrets"
)

func main() {
	ctx := context.Background()
	env := coldstart.Must(coldstart.Load(ctx, "review"))
	v := env.Vars
	cfg := llm.Config{Endpoint: v.String("LLM_ENDPOINT"), Model: v.String("LLM_MODEL"),
		Timeout: v.Seconds("LLM_TIMEOUT_SECONDS", 45, 1, 900), Logger: env.Log}
	secretID := v.String("LLM_SECRET_ID")
	// The same policy as fetch, or its proofs of redaction cannot vouch.
	policy := redact.PolicyFromConfig(v)
	coldstart.Must(env, v.Err())

	// The client is rebuilt whenever the key changes, so an emergency
	// rotation reaches warm functions: a rejected key re-reads the secret.
	provider := secrets.NewRotating(env.Secrets, secretID, func(v string) (*llm.Client, error) {
		var s struct {
			APIKey string `json:"api_key"`
		}
		if err := json.Unmarshal([]byte(v), &s); err != nil || s.APIKey == "" {
			return nil, fmt.Errorf("LLM secret %s: want JSON with api_key", secretID)
		}
		return llm.New(cfg, s.APIKey)
	})
	_, _, err := provider.Get(ctx, false) // fail the cold start on a bad secret, not the first job
	coldstart.Must(env, err)
	guard, err := redact.New(policy)
	coldstart.Must(env, err)

	proc := &pipeline.Review{Redacted: env.Redacted(), Guard: guard,
		LLM: pipeline.CompleterFunc(func(ctx context.Context, p llm.Prompt) (llm.Completion, error) {
			return secrets.Do(ctx, provider, func(c *llm.Client) (llm.Completion, error) { return c.Complete(ctx, p) })
		}),
		Parse: review.Options{PromptVersion: review.PromptVersion}, Limits: review.DefaultPromptLimits, Log: env.Log}
	lambda.Start(env.Runtime(domain.StageLLM, proc, guard.Sanitize).Handle)
}
