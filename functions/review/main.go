// Command review is the llm stage: it sends the redacted changeset to the
// LLM and stores the validated ReviewResult. See shared/pipeline,
// shared/review and shared/llm.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/criticizer/criticizer/shared/coldstart"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/llm"
	"github.com/criticizer/criticizer/shared/pipeline"
	"github.com/criticizer/criticizer/shared/redact"
	"github.com/criticizer/criticizer/shared/review"
)

func main() {
	ctx := context.Background()
	env := coldstart.Must(coldstart.Load(ctx, "review"))
	v := env.Vars
	cfg := llm.Config{Endpoint: v.String("LLM_ENDPOINT"), Model: v.String("LLM_MODEL"),
		Timeout: v.Seconds("LLM_TIMEOUT_SECONDS", 45, 1, 900), Logger: env.Log}
	secretID := v.String("LLM_SECRET_ID")
	coldstart.Must(env, v.Err())

	key, err := env.Secrets.Field(ctx, secretID, "api_key")
	coldstart.Must(env, err)
	client, err := llm.New(cfg, key)
	coldstart.Must(env, err)
	guard, err := redact.New(redact.Policy{})
	coldstart.Must(env, err)

	proc := &pipeline.Review{Redacted: env.Redacted(), Guard: guard, LLM: client,
		Parse: review.Options{PromptVersion: review.PromptVersion}, Limits: review.DefaultPromptLimits, Log: env.Log}
	lambda.Start(env.Runtime(domain.StageLLM, proc, guard.Sanitize).Handle)
}
