// Command review is the llm stage: it reviews the redacted changeset in
// chunks that fit the configured model and stores the merged, validated
// ReviewResult. See shared/reviewstage, shared/review and shared/llm.
//
// Environment (beyond the common stage variables):
//
//	LLM_PROVIDER              openai (default) | anthropic | bedrock
//	LLM_ENDPOINT              provider BASE URL, e.g. https://api.openai.com; the client
//	                          appends /v1/chat/completions or /v1/messages. Optional for
//	                          bedrock (overrides the regional endpoint).
//	LLM_MODEL                 model name or Bedrock model id / inference profile
//	LLM_SECRET_ID             Secrets Manager secret {"api_key":…}; not used for bedrock (IAM)
//	LLM_TIMEOUT_SECONDS       per call (default 45)
//	LLM_RESPONSE_FORMAT       openai only: json_schema (default) | json_object
//	LLM_MAX_OUTPUT_TOKENS     max_tokens per call (default 4096)
//	LLM_CONTEXT_TOKENS        context window (default: by model family)
//	LLM_BYTES_PER_TOKEN       token estimate, e.g. 3.5 (default: by model family)
//	LLM_PARALLELISM           chunks reviewed at once (default 4)
//	REVIEW_MAX_FILES          files reviewed per changelist (default 5000)
//	REVIEW_MAX_BYTES          diff bytes reviewed per changelist (default 64 MiB)
//	REVIEW_MAX_FILE_BYTES     diff bytes reviewed per file (default 256 KiB)
//	REVIEW_MAX_CHUNK_FILES    files per model call (default 100)
//	PROMPT_CANDIDATE_VERSION  prompt version on trial (e.g. 1.1.0); empty for none
//	PROMPT_CANDIDATE_PERCENT  share of jobs, 0-100, that get it (0 = rolled back)
package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/coldstart"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/llm"
	"github.com/criticizer/criticizer/shared/llm/bedrock"
	"github.com/criticizer/criticizer/shared/queue"
	"github.com/criticizer/criticizer/shared/redact"
	"github.com/criticizer/criticizer/shared/review"
	"github.com/criticizer/criticizer/shared/reviewstage"
	"github.com/criticizer/criticizer/shared/sanitize"
	"github.com/criticizer/criticizer/shared/secrets"
	"github.com/criticizer/criticizer/shared/store"
	"github.com/criticizer/criticizer/shared/swarm"
)

func main() {
	ctx := context.Background()
	env := coldstart.Must(coldstart.Load(ctx, "review", sanitize.Logs))
	v := env.Vars
	provider := v.Optional("LLM_PROVIDER", llm.OpenAI)
	cfg := llm.Config{Model: v.String("LLM_MODEL"),
		Timeout:        v.Seconds("LLM_TIMEOUT_SECONDS", 45, 1, 900),
		MaxTokens:      v.Int("LLM_MAX_OUTPUT_TOKENS", llm.DefaultMaxTokens, 256, 1<<20),
		ResponseFormat: v.Optional("LLM_RESPONSE_FORMAT", llm.FormatJSONSchema),
		Schema:         review.SchemaJSON(),
		Logger:         env.Log}
	budget := review.Budget{
		ContextTokens: v.Int("LLM_CONTEXT_TOKENS", 0, 0, 10_000_000),
		OutputTokens:  cfg.MaxTokens,
		MaxFiles:      v.Int("REVIEW_MAX_FILES", 0, 0, 1_000_000),
		MaxBytes:      v.Int("REVIEW_MAX_BYTES", 0, 0, 1<<30),
		MaxFileBytes:  v.Int("REVIEW_MAX_FILE_BYTES", 0, 0, 1<<30),
		MaxChunkFiles: v.Int("REVIEW_MAX_CHUNK_FILES", 0, 0, 10_000),
	}
	if s := v.Optional("LLM_BYTES_PER_TOKEN", ""); s != "" {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f < 1 || f > 16 {
			coldstart.Must(env, fmt.Errorf("LLM_BYTES_PER_TOKEN=%q must be a number in [1, 16]", s))
		}
		budget.BytesPerToken = f
	}
	rollout := review.Rollout{Candidate: v.Optional("PROMPT_CANDIDATE_VERSION", ""), Percent: v.Int("PROMPT_CANDIDATE_PERCENT", 0, 0, 100)}
	parallelism := v.Int("LLM_PARALLELISM", reviewstage.DefaultParallelism, 1, 64)
	// The same policy as fetch, or its proofs of redaction cannot vouch.
	policy := redact.PolicyFromConfig(v)
	var secretID string
	switch provider {
	case llm.OpenAI, llm.Anthropic:
		cfg.Endpoint = v.String("LLM_ENDPOINT")
		secretID = v.String("LLM_SECRET_ID")
	case llm.Bedrock:
		cfg.Endpoint = v.Optional("LLM_ENDPOINT", "")
	default:
		coldstart.Must(env, fmt.Errorf("LLM_PROVIDER=%q must be openai, anthropic or bedrock", provider))
	}
	coldstart.Must(env, v.Err())
	coldstart.Must(env, rollout.Validate())

	var complete reviewstage.CompleterFunc
	if provider == llm.Bedrock {
		c, err := bedrock.New(cfg, env.AWS) // IAM: the function's role, no API key
		coldstart.Must(env, err)
		complete = c.Complete
	} else {
		// The client is rebuilt whenever the key changes, so an emergency
		// rotation reaches warm functions: a rejected key re-reads the secret.
		sm := secrets.New(secretsmanager.NewFromConfig(env.AWS), secrets.CacheTTL)
		rot := secrets.NewRotating(sm, secretID, func(v string) (llm.Provider, error) {
			var s struct {
				APIKey string `json:"api_key"`
			}
			if err := secrets.Unmarshal(secretID, v, &s, "api_key"); err != nil {
				return nil, err
			}
			return llm.New(provider, cfg, s.APIKey)
		})
		_, _, err := rot.Get(ctx, false) // fail the cold start on a bad secret, not the first job
		coldstart.Must(env, err)
		complete = func(ctx context.Context, p llm.Prompt) (llm.Completion, error) {
			return secrets.Do(ctx, rot, func(c llm.Provider) (llm.Completion, error) { return c.Complete(ctx, p) })
		}
	}
	guard, err := redact.New(policy)
	coldstart.Must(env, err)

	jobs := store.New(dynamodb.NewFromConfig(env.AWS), env.Config.JobsTable)
	queues := queue.New(sqs.NewFromConfig(env.AWS), env.Config.QueueURLs, env.Config.DLQURLs)
	proc := &reviewstage.Review{Redacted: artifacts.New(artifacts.NewS3Client(env.AWS), env.Config.RedactedBkt), Guard: guard,
		LLM: complete, Model: cfg.Model, Budget: budget, Rollout: rollout, Parallelism: parallelism, Metrics: env.Metrics, Log: env.Log}
	rt := env.Runtime(domain.StageLLM, jobs, queues, proc, guard.Sanitize)
	rt.AfterDeadLetter = swarm.NewReporter(jobs, env.Log).DeadLettered // a dead-lettered Swarm run hears {fail}
	lambda.Start(rt.Handle)
}
