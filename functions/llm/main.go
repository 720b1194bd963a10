// Command llm runs the llm stage (shared/llmstage, shared/result,
// shared/llm): it reviews the redacted changeset in chunks that fit the
// model and stores the validated ReviewResult (settings: docs/configuration.md).
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/coldstart"
	"github.com/criticizer/criticizer/shared/decide"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/jobpage"
	"github.com/criticizer/criticizer/shared/ledger"
	"github.com/criticizer/criticizer/shared/llm"
	_ "github.com/criticizer/criticizer/shared/llm/bedrock" // the bedrock family
	"github.com/criticizer/criticizer/shared/llmstage"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/queue"
	"github.com/criticizer/criticizer/shared/redact"
	"github.com/criticizer/criticizer/shared/result"
	"github.com/criticizer/criticizer/shared/sanitize"
	"github.com/criticizer/criticizer/shared/secrets"
	"github.com/criticizer/criticizer/shared/store"
	"github.com/criticizer/criticizer/shared/swarm"
	"github.com/criticizer/criticizer/shared/weekly"
)

func main() {
	ctx := context.Background()
	env := coldstart.Must(coldstart.Load(ctx, "llm", sanitize.Logs))
	set := llmstage.SettingsFromEnv(env.Vars)
	coldstart.Must(env, env.Vars.Err())
	cfg, provider, secretID := set.LLM.Config, set.LLM.Provider, set.LLM.SecretID
	cfg.Schema, cfg.Logger = result.SchemaJSON(), env.Log

	sm := secrets.New(secretsmanager.NewFromConfig(env.AWS), secrets.CacheTTL)
	complete, first := client(ctx, env, sm, provider, secretID, cfg)
	// A self-hosted server's window bounds the chunks, unless LLM_CONTEXT_TOKENS says.
	llmstage.DiscoverWindow(ctx, &set.Budget, first, env.Log)
	// One Limiter per model and instance, outside the rotating client: what
	// it learnt survives a key rotation.
	ddb := dynamodb.NewFromConfig(env.AWS)
	jobs := store.New(ddb, env.Config.JobsTable)
	limiter := func(model string, t llmstage.ModelTerms) *llm.Limiter {
		lc := llm.LimiterConfig{RequestsPerMinute: t.RequestsPerMinute, TokensPerMinute: t.TokensPerMinute, MaxConcurrency: set.Parallelism,
			OutputTokens: cfg.MaxTokens, BytesPerToken: set.Budget.For(model).BytesPerToken, Reserve: cfg.Timeout, Logger: env.Log}
		if t.TokensPerMinute > 0 {
			lc.Shared = jobs.MinuteTokens(t.TokensPerMinute) // the account's limit, shared by concurrent reviews
		}
		return llm.NewLimiter(lc)
	}
	limited := limiter(cfg.Model, set.Terms).Wrap(cfg.Model, complete)
	var candidate llm.Provider
	if set.ModelRollout.Active() {
		// The model canary: same provider, key and endpoint, its own limits
		// (docs/reference/llm-providers.md, "Rate-limit headers").
		cc := cfg
		cc.Model = set.ModelRollout.Candidate
		cand, _ := client(ctx, env, sm, provider, secretID, cc)
		candidate = limiter(cc.Model, set.Candidate).Wrap(cc.Model, cand)
	}
	guard, err := redact.New(set.Redaction)
	coldstart.Must(env, err)

	queues := queue.New(sqs.NewFromConfig(env.AWS), env.Config.QueueURLs, env.Config.DLQURLs)
	proc := &llmstage.LLM{Redacted: artifacts.New(artifacts.NewS3Client(env.AWS), env.Config.RedactedBkt), Guard: guard,
		LLM: limited, Model: cfg.Model, Budget: set.Budget, Rollout: set.Rollout, ModelRollout: set.ModelRollout, CandidateLLM: candidate, Candidate: set.Candidate, Parallelism: set.Parallelism, Terms: set.Terms,
		AllowPromptPatchDrift: set.AllowPromptPatchDrift, Metrics: env.Metrics, Log: env.Log, Rules: set.Rules, DailyTokenBudget: set.DailyTokenBudget}
	// The rerun ledger, kept as long as the delivery identities beside it.
	led := ledger.NewStore(ddb, env.Config.JobsTable).WithUniquenessRetention(env.Config.UniquenessRetention)
	proc.Jobs, proc.Ledger = jobs, led
	// What the review says is decided here, once, before notify delivers it.
	fates := outcome.NewStore(ddb, env.Config.JobsTable).WithUniquenessRetention(env.Config.UniquenessRetention).WithMetrics(env.Metrics)
	proc.Decide = &decide.Decider{Artifacts: proc.Redacted, Ledger: led, Jobs: jobs, Outcomes: fates, Policy: set.Decide.Dismissals, SwarmLinks: set.Decide.SwarmLinks}
	if set.Decide.WeeklyDigest {
		// Each review's week entry, recorded as it is decided (one PutItem).
		proc.Decide.Weeks = &weekly.Entries{API: ddb, Table: env.Config.JobsTable}
	}
	if page := set.Decide.Page; page.SecretID != "" {
		// The job page link the review is delivered with (e-mail, Swarm summary).
		proc.Decide.Page = &jobpage.Links{Key: &jobpage.Key{Secrets: sm, SecretID: page.SecretID}, Base: page.BaseURL}
	}
	if set.DailyTokenBudget > 0 {
		proc.Daily = jobs.DailyTokens()
	}
	rt := env.Runtime(domain.StageLLM, jobs, queues, proc, guard.Sanitize)
	rt.QueueVisibility = set.QueueVisibility
	rt.AfterDeadLetter = swarm.NewReporter(jobs, env.Log).DeadLettered // a dead-lettered Swarm run hears {fail}
	lambda.Start(rt.Handle)
}

// client builds the provider's client for cfg.Model: an AWS family signs
// with the role; the others' client is rebuilt whenever the API key changes
// (a rejected key re-reads it). It also returns the first client built.
func client(ctx context.Context, env *coldstart.Env, sm *secrets.Store, provider, secretID string, cfg llm.Config) (llm.Provider, llm.Provider) {
	if f, _ := llm.FamilyOf(provider); f.AWS {
		c, err := llm.New(provider, cfg, llm.Credentials{AWS: env.AWS})
		coldstart.Must(env, err)
		return c, c
	}
	rot := secrets.NewRotating(sm, secretID, func(v string) (llm.Provider, error) {
		var s struct {
			APIKey string `json:"api_key"`
		}
		if err := secrets.Unmarshal(secretID, v, &s, "api_key"); err != nil {
			return nil, err
		}
		return llm.New(provider, cfg, llm.Credentials{APIKey: s.APIKey})
	})
	first, _, err := rot.Get(ctx, false) // fail the cold start on a bad secret, not the first job
	coldstart.Must(env, err)
	return llm.ProviderFunc(func(ctx context.Context, p llm.Prompt) (llm.Completion, error) {
		return secrets.Do(ctx, rot, func(c llm.Provider) (llm.Completion, error) { return c.Complete(ctx, p) })
	}), first
}
