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
	// Budget sizes the chunks and bounds a review; zero fields take the
	// model family's defaults. OutputTokens is the provider's max_tokens.
	Budget  result.Budget
	Rollout result.Rollout
	// ModelRollout is the model canary (LLM_MODEL_CANDIDATE[_PERCENT]).
	ModelRollout result.ModelRollout
	Parallelism  int // LLM_PARALLELISM: chunks reviewed at once
	// DailyTokenBudget: model tokens per UTC day (REVIEW_DAILY_TOKEN_BUDGET); 0 none.
	DailyTokenBudget int64
	// Rules are REVIEW_RULES (JSON in the depot's .criticizer.yaml schema).
	Rules result.Rules
	// Terms are the model's prices (LLM_PRICES_PER_MTOK) and limits
	// (LLM_REQUESTS_PER_MINUTE, LLM_TOKENS_PER_MINUTE; 0: from headers).
	Terms ModelTerms
	// QueueVisibility (QUEUE_VISIBILITY_SECONDS) when longer than the lease.
	QueueVisibility time.Duration
	// AllowPromptPatchDrift: PROMPT_PATCH_DRIFT, rule RC-4.
	AllowPromptPatchDrift bool
	// Redaction must equal fetch's, or its proofs cannot vouch for the changeset.
	Redaction redact.Policy
	// Candidate is the canary's own terms (providers price and limit each
	// model apart: docs/reference/llm-providers.md, "Rate-limit headers");
	// its limits are the stable model's unless set.
	Candidate ModelTerms
	// Decide is the gate and the dismissal policy (package decide).
	Decide decide.Settings
}

// ModelTerms are a model's list prices and per-minute limits (0: learnt
// from the provider's headers).
type ModelTerms struct {
	Prices                             llm.Prices
	RequestsPerMinute, TokensPerMinute int
}

// SettingsFromEnv reads the llm function's settings, each declared with its
// default and range in shared/settings (docs/configuration.md's LLM table).
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

// DiscoverWindow sets b's context window from what client's server reports,
// when none is configured (LLM_CONTEXT_TOKENS) and the client can ask
// (llm.Client.ContextTokens): a self-hosted model's window is whatever its
// operator started it with, not its family's. Once per cold start; a server
// that reports none leaves the family's default.
func DiscoverWindow(ctx context.Context, b *result.Budget, client any, log *slog.Logger) {
	wr, ok := client.(interface {
		ContextTokens(ctx context.Context) (int, string)
	})
	if !ok || b.ContextTokens > 0 {
		return
	}
	if n, source := wr.ContextTokens(ctx); n > 0 {
		b.ContextTokens = n
		log.InfoContext(ctx, "context window from the model server", "context_tokens", n, "source", source)
	}
}
