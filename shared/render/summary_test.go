package render

import (
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/domain"
)

// The summary comment states what the review cost (issue 28: "the review
// summary and the e-mail state each review's tokens and, where prices are
// configured, its estimated cost"), and says nothing of it when no model ran.
func TestSummaryStatesTheReviewsUsage(t *testing.T) {
	for _, tt := range []struct {
		name string
		meta domain.ReviewMeta
		want []string
		not  []string
	}{
		{"priced", domain.ReviewMeta{InputTokens: 1200, OutputTokens: 340, ModelCalls: 2, CachedInputTokens: 800, EstimatedCostUSD: 0.0123},
			[]string{"Model usage: tokens 1200 in, 340 out, 2 model calls, 800 input from the prompt cache, est. $0.0123 at list prices."}, nil},
		{"no prices", domain.ReviewMeta{InputTokens: 10, OutputTokens: 5, ModelCalls: 1},
			[]string{"Model usage: tokens 10 in, 5 out, 1 model call."}, []string{"est. $"}},
		{"no model", domain.ReviewMeta{}, nil, []string{"Model usage"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := SwarmSummary(1, 0, nil, tt.meta, "", "")
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("summary %q lacks %q", body, w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(body, n) {
					t.Errorf("summary %q has %q", body, n)
				}
			}
		})
	}
}
