package llm

import (
	"math"
	"testing"
)

// A review's cost is its tokens at the configured list prices, cache reads
// and writes at their own; without prices there is no estimate.
func TestPricesCost(t *testing.T) {
	u := Usage{InputTokens: 100_000, CachedInputTokens: 60_000, CacheWriteInputTokens: 10_000, OutputTokens: 2_000}
	for _, tt := range []struct {
		prices string
		want   float64
		ok     bool
	}{
		// 30k plain × $3 + 10k written × $3.75 + 60k read × $0.30 + 2k out × $15, per million.
		{"input=3,cached_input=0.3,cache_write=3.75,output=15", 0.09 + 0.0375 + 0.018 + 0.03, true},
		// No cache_write price: written tokens are billed as input.
		{"input=3, cached_input=0.3, output=15", 0.09 + 0.03 + 0.018 + 0.03, true},
		{"", 0, false},
	} {
		p, err := ParsePrices(tt.prices)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := p.Cost(u)
		if ok != tt.ok || math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%q: cost %v (%v), want %v", tt.prices, got, ok, tt.want)
		}
	}
	for _, bad := range []string{"input", "input=-1", "inptu=3", "input=x"} {
		if _, err := ParsePrices(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
