// Command review is the llm stage: it sends the redacted changeset to the
// LLM and stores the validated ReviewResult. See shared/reviewstage,
// shared/review and shared/llm.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/coldstart"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/llm"
	"github.com/criticizer/criticizer/shared/queue"
	"github.com/criticizer/criticizer/shared/redact"
	"github.com/criticizer/criticizer/shared/review"
	"github.com/criticizer/criticizer/shared/reviewstage"
	"github.com/criticizer/criticizer/shared/secrets"
	"github.com/criticizer/criticizer/shared/store"
	"github.com/criticizer/criticizer/shared/swarm"
)

func main() {
	ctx := context.Background()
	env := coldstart.Must(coldstart.Load(ctx, "review"))
	v := env.Vars
	cfg := llm.Config{Endpoint: v.String("LLM_ENDPOINT"), Model: v.String("LLM_MODEL"),
		Timeout: v.Seconds("LLM_TIMEOUT_SECONDS", 45, 1, 900), Logger: env.Log}
	secretID := v.String("LLM_SECRET_ID")
	coldstart.Must(env, v.Err())

	// The client is rebuilt whenever the key changes, so an emergency
	// rotation reaches warm functions: a rejected key re-reads the secret.
	sm := secrets.New(secretsmanager.NewFromConfig(env.AWS), secrets.CacheTTL)
	provider := secrets.NewRotating(sm, secretID, func(v string) (*llm.Client, error) {
		var s struct {
			APIKey string `json:"api_key"`
		}
		if err := secrets.Unmarshal(secretID, v, &s, "api_key"); err != nil {
			return nil, err
		}
		return llm.New(cfg, s.APIKey)
	})
	_, _, err := provider.Get(ctx, false) // fail the cold start on a bad secret, not the first job
	coldstart.Must(env, err)
	guard, err := redact.New(redact.Policy{})
	coldstart.Must(env, err)

	jobs := store.New(dynamodb.NewFromConfig(env.AWS), env.Config.JobsTable)
	queues := queue.New(sqs.NewFromConfig(env.AWS), env.Config.QueueURLs, env.Config.DLQURLs)
	proc := &reviewstage.Review{Redacted: artifacts.New(artifacts.NewS3Client(env.AWS), env.Config.RedactedBkt), Guard: guard,
		LLM: reviewstage.CompleterFunc(func(ctx context.Context, p llm.Prompt) (llm.Completion, error) {
			return secrets.Do(ctx, provider, func(c *llm.Client) (llm.Completion, error) { return c.Complete(ctx, p) })
		}),
		Parse: review.Options{PromptVersion: review.PromptVersion}, Limits: review.DefaultPromptLimits, Log: env.Log}
	rt := env.Runtime(domain.StageLLM, jobs, queues, proc, guard.Sanitize)
	rt.AfterDeadLetter = swarm.NewReporter(jobs, env.Log).DeadLettered // a dead-lettered Swarm run hears {fail}
	lambda.Start(rt.Handle)
}
