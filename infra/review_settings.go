package main

import (
	"encoding/json"
	"strings"

	"github.com/criticizer/criticizer/shared/result"
)

// ReviewSettings bound what one review covers and costs, and give the
// environment's default review rules. They are embedded in EnvConfig, so
// their keys sit beside the others in cdk.json `environments.<env>`; zero
// means the llm function's default (functions/llm).
type ReviewSettings struct {
	// ReviewMaxTokens is the token budget of one review (REVIEW_MAX_TOKENS);
	// files past it are skipped "over budget". 0 = unbounded.
	ReviewMaxTokens int `json:"reviewMaxTokens,omitempty"`
	// DailyTokenBudget is the environment's model tokens per UTC day
	// (REVIEW_DAILY_TOKEN_BUDGET); above it reviews run without the model,
	// and DailyTokenBudgetAlarm fires at 80 %. 0 = unbounded, no alarm.
	DailyTokenBudget int64 `json:"dailyTokenBudget,omitempty"`
	// ReviewRules are the environment's default review rules
	// (REVIEW_RULES), in the schema of the depot's .criticizer.yaml.
	ReviewRules json.RawMessage `json:"reviewRules,omitempty"`
}

// validateReview checks what no one declaration's range can (those
// validateDeclared checks): one review's budget within the day's, and
// the default rules, so a bad value fails the synth, not a cold start.
func validateReview(c EnvConfig, p *problems) {
	if c.DailyTokenBudget > 0 && c.ReviewMaxTokens > 0 && int64(c.ReviewMaxTokens) > c.DailyTokenBudget {
		p.add("reviewMaxTokens %d is above dailyTokenBudget %d", c.ReviewMaxTokens, c.DailyTokenBudget)
	}
	if len(c.ReviewRules) > 0 {
		if _, rejected := result.ParseRules(c.ReviewRules); len(rejected) > 0 {
			p.add("reviewRules: %s", strings.Join(rejected, "; "))
		}
	}
}
