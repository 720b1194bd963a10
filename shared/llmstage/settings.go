package llmstage

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/decide"
	"github.com/criticizer/criticizer/shared/llm"
	"github.com/criticizer/criticizer/shared/redact"
	"github.com/criticizer/criticizer/shared/result"
	"github.com/criticizer/criticizer/shared/settings"
)

// Settings are what the llm function reads beyond the common settings.
type Settings struct {
	LLM llm.Settings
	// Budget sizes the chunks and bounds what one changelist gets
	// reviewed; zero fields take the model family's defaults
	// (result.Budget). OutputTokens is the provider's max_tokens.
	Budget  result.Budget
	Rollout result.Rollout
	// ModelRollout is the model canary: a share of jobs reviewed by
	// another model at the same provider (LLM_MODEL_CANDIDATE[_PERCENT]).
	ModelRollout result.ModelRollout
	Parallelism  int // LLM_PARALLELISM: chunks reviewed at once
	// DailyTokenBudget bounds the environment's model tokens per UTC day
	// (REVIEW_DAILY_TOKEN_BUDGET); 0 for none.
	DailyTokenBudget int64
	// Rules are the environment's default review rules (REVIEW_RULES, JSON
	// in the schema of the depot's .criticizer.yaml).
	Rules result.Rules
	// Terms are the model's list prices (LLM_PRICES_PER_MTOK; each review's
	// estimated cost is recorded when they are set) and the provider's
	// limits for it (LLM_REQUESTS_PER_MINUTE, LLM_TOKENS_PER_MINUTE; 0 =
	// learnt from its rate-limit headers). TokensPerMinute also caps a
	// chunk's size.
	Terms ModelTerms
	// QueueVisibility is the llm queue's visibility timeout (the function's
	// timeout) when longer than the lease (QUEUE_VISIBILITY_SECONDS); 0 = the lease.
	QueueVisibility time.Duration
	// AllowPromptPatchDrift accepts a model answering with another patch of
	// the prompt version (PROMPT_PATCH_DRIFT, rule RC-4).
	AllowPromptPatchDrift bool
	// Redaction must equal the fetch stage's, or its proofs of redaction
	// cannot vouch for the changeset.
	Redaction redact.Policy
	// Candidate is the model canary's own prices and limits: providers
	// price and limit each model apart (docs/reference/llm-providers.md,
	// "Rate-limit headers"). Its limits are the stable model's unless set.
	Candidate ModelTerms
	// Decide is what deciding a review reads: the gate and the dismissal
	// policy (package decide).
	Decide decide.Settings
}

// ModelTerms are what one model costs and how fast the provider admits
// its calls: its list prices and its per-minute limits (0: learnt from
// the provider's rate-limit headers).
type ModelTerms struct {
	Prices                             llm.Prices
	RequestsPerMinute, TokensPerMinute int
}

// SettingsFromEnv reads the llm function's settings: llm.SettingsFromEnv,
// the redaction policy, the review decision's (decide.SettingsFromEnv) and
// its own, each described, with its default and range, by its declaration
// (shared/settings; docs/configuration.md's LLM table).
func SettingsFromEnv(r *config.Reader) Settings {
	s := Settings{LLM: llm.SettingsFromEnv(r), Redaction: redact.PolicyFromConfig(r), Decide: decide.SettingsFromEnv(r)}
	s.Budget = result.Budget{
		ContextTokens:   r.Int(settings.LLMContextTokens),
		OutputTokens:    s.LLM.Config.MaxTokens,
		BytesPerToken:   r.Float(settings.LLMBytesPerToken),
		MaxFiles:        r.Int(settings.ReviewMaxFiles),
		MaxBytes:        r.Int(settings.ReviewMaxBytes),
		MaxFileBytes:    r.Int(settings.ReviewMaxFileBytes),
		MaxChunkFiles:   r.Int(settings.ReviewMaxChunkFiles),
		MaxReviewTokens: r.Int(settings.ReviewMaxTokens),
	}
	s.Terms.RequestsPerMinute = r.Int(settings.LLMRequestsPerMinute)
	s.Terms.TokensPerMinute = r.Int(settings.LLMTokensPerMinute)
	s.QueueVisibility = r.Seconds(settings.QueueVisibilitySeconds)
	s.AllowPromptPatchDrift = r.Bool(settings.PromptPatchDrift)
	s.DailyTokenBudget = int64(r.Int(settings.ReviewDailyTokenBudget))
	if js := r.Optional(settings.ReviewRules); js != "" {
		var rejected []string
		if s.Rules, rejected = result.ParseRules([]byte(js)); len(rejected) > 0 {
			r.Fail(fmt.Errorf("REVIEW_RULES rejected: %v", rejected))
		}
	}
	s.Rollout = result.Rollout{Candidate: r.Optional(settings.PromptCandidateVersion), Percent: r.Int(settings.PromptCandidatePercent)}
	r.Fail(s.Rollout.Validate())
	s.ModelRollout = result.ModelRollout{Candidate: r.Optional(settings.LLMModelCandidate), Percent: r.Int(settings.LLMModelCandidatePercent)}
	r.Fail(s.ModelRollout.Validate(s.LLM.Config.Model))
	s.Parallelism = r.Int(settings.LLMParallelism)
	var err error
	if s.Terms.Prices, err = llm.ParsePrices(r.Optional(settings.LLMPricesPerMTok)); err != nil {
		r.Fail(fmt.Errorf("LLM_PRICES_PER_MTOK: %w", err))
	}
	if s.Candidate.Prices, err = llm.ParsePrices(r.Optional(settings.LLMModelCandidatePricesPerMTok)); err != nil {
		r.Fail(fmt.Errorf("LLM_MODEL_CANDIDATE_PRICES_PER_MTOK: %w", err))
	}
	s.Candidate.RequestsPerMinute = cmp.Or(r.Int(settings.LLMModelCandidateRequestsPerMinute), s.Terms.RequestsPerMinute)
	s.Candidate.TokensPerMinute = cmp.Or(r.Int(settings.LLMModelCandidateTokensPerMinute), s.Terms.TokensPerMinute)
	return s
}

// WindowReporter is a client that can ask its server for the model's
// context window (llm.Client.ContextTokens).
type WindowReporter interface {
	ContextTokens(ctx context.Context) (int, string)
}

// DiscoverWindow sets b's context window from what client's server reports,
// when none is configured (LLM_CONTEXT_TOKENS) and the client can ask: a
// self-hosted model's window is whatever its operator started it with, not
// its family's. Once per cold start; a server that reports none leaves the
// family's default.
func DiscoverWindow(ctx context.Context, b *result.Budget, client any, log *slog.Logger) {
	wr, ok := client.(WindowReporter)
	if !ok || b.ContextTokens > 0 {
		return
	}
	if n, source := wr.ContextTokens(ctx); n > 0 {
		b.ContextTokens = n
		log.InfoContext(ctx, "context window from the model server", "context_tokens", n, "source", source)
	}
}
