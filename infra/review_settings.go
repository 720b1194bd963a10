package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/criticizer/criticizer/shared/result"
)

// ReviewSettings bound what one review covers and costs, and give the
// environment's default review rules. They are embedded in EnvConfig, so
// their keys sit beside the others in cdk.json `environments.<env>`; zero
// means the llm function's default (functions/llm).
type ReviewSettings struct {
	ReviewMaxFiles      int `json:"reviewMaxFiles,omitempty"`      // REVIEW_MAX_FILES
	ReviewMaxBytes      int `json:"reviewMaxBytes,omitempty"`      // REVIEW_MAX_BYTES
	ReviewMaxFileBytes  int `json:"reviewMaxFileBytes,omitempty"`  // REVIEW_MAX_FILE_BYTES
	ReviewMaxChunkFiles int `json:"reviewMaxChunkFiles,omitempty"` // REVIEW_MAX_CHUNK_FILES
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

// validateReview checks the review settings against what the review
// function accepts, so a bad value fails the synth, not a cold start.
func (s ReviewSettings) validateReview() error {
	var errs []string
	for _, r := range []struct {
		name   string
		v, max int
	}{
		{"reviewMaxFiles", s.ReviewMaxFiles, 1_000_000},
		{"reviewMaxBytes", s.ReviewMaxBytes, 1 << 30},
		{"reviewMaxFileBytes", s.ReviewMaxFileBytes, 1 << 30},
		{"reviewMaxChunkFiles", s.ReviewMaxChunkFiles, 10_000},
		{"reviewMaxTokens", s.ReviewMaxTokens, 100_000_000},
	} {
		if r.v < 0 || r.v > r.max {
			errs = append(errs, fmt.Sprintf("%s %d: want 0..%d (0 = the default)", r.name, r.v, r.max))
		}
	}
	if s.DailyTokenBudget < 0 || s.DailyTokenBudget > 1e12 {
		errs = append(errs, fmt.Sprintf("dailyTokenBudget %d: want 0..1e12 (0 = unbounded)", s.DailyTokenBudget))
	}
	if s.DailyTokenBudget > 0 && s.ReviewMaxTokens > 0 && int64(s.ReviewMaxTokens) > s.DailyTokenBudget {
		errs = append(errs, fmt.Sprintf("reviewMaxTokens %d is above dailyTokenBudget %d", s.ReviewMaxTokens, s.DailyTokenBudget))
	}
	if len(s.ReviewRules) > 0 {
		if _, rejected := result.ParseRules(s.ReviewRules); len(rejected) > 0 {
			errs = append(errs, "reviewRules: "+strings.Join(rejected, "; "))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid review settings: %s", strings.Join(errs, "; "))
	}
	return nil
}
