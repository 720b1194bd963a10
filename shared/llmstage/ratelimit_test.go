package llmstage_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/llm/llmtest"

	llmstandin "github.com/criticizer/criticizer/internal/standin/llm"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/llm"
	"github.com/criticizer/criticizer/shared/llmstage"
	"github.com/criticizer/criticizer/shared/result"
)

// limited puts the harness's model client behind a Limiter on clock.
func limited(clock llm.Clock, reserve time.Duration) func(*llmstage.LLM) {
	lim := llm.NewLimiter(llm.LimiterConfig{Clock: clock, Reserve: reserve})
	return func(r *llmstage.LLM) {
		r.LLM = lim.Wrap(r.Model, r.LLM)
	}
}

// TestRateLimitsAreWaitedOutInOneAttempt: a provider answering 429 with
// Retry-After on a dozen of the review's calls costs time, not attempts.
func TestRateLimitsAreWaitedOutInOneAttempt(t *testing.T) {
	clock := llmtest.NewVirtualClock()
	start := clock.Now()
	wrap := limited(clock, 10*time.Second)
	h := newHarness(t, wrap)
	cs := chunked(1000) // ten chunks
	h.standin.QueueFault(llmstandin.Fault{Status: 429, RetryAfter: "1", Count: 12})
	// The llm function's own timeout (reviewTimeoutSeconds' default), on
	// the virtual clock. Twelve consecutive 429s draw full-jitter backoffs
	// of at most 1+2+4+8+16+32+6×60 = 423s in all (backoff.Default), so
	// they always fit; a shorter deadline would fail on an unlucky draw.
	ctx, cancel := context.WithDeadline(context.Background(), clock.Now().Add(900*time.Second))
	defer cancel()
	res, err := h.stage.Process(ctx, h.job(t, "job-429s", cs))
	if err != nil {
		t.Fatalf("one attempt: %v, want the review done", err)
	}
	limitedCalls, ok := 0, 0
	for _, r := range h.standin.Requests() {
		switch r.Status {
		case 429:
			limitedCalls++
		case 200:
			ok++
		}
	}
	if limitedCalls != 12 || ok != 10 {
		t.Errorf("provider saw %d 429s and %d answers, want 12 and 10", limitedCalls, ok)
	}
	if waited := clock.Now().Sub(start); waited < time.Second {
		t.Errorf("waited %v in all, want at least the provider's Retry-After", waited)
	}
	meta := domain.ReadReviewMeta(h.result(t, res).Meta)
	if meta.Chunks != 10 || meta.ReusedChunks != 0 {
		t.Errorf("meta = %+v", meta)
	}
	// The job record says what was waited out.
	if res.Review.RateLimitedCalls != 12 || res.Review.RateLimitWaitMS < 1000 {
		t.Errorf("job stats %+v, want 12 rate-limited calls and the wait", res.Review)
	}
	if !strings.Contains(h.metrics.String(), `"ReviewRateLimited":12`) {
		t.Errorf("metrics = %s", h.metrics.String())
	}
}

// TestRateLimitWaitBeyondTheInvocationEndsTheAttempt: a wait that cannot
// fit in the invocation's remaining time ends the attempt RATE_LIMITED with
// the finished chunks stored; the next attempt asks only for the rest.
func TestRateLimitWaitBeyondTheInvocationEndsTheAttempt(t *testing.T) {
	clock := llmtest.NewVirtualClock()
	wrap := limited(clock, 10*time.Second)
	h := newHarness(t, func(r *llmstage.LLM) { r.Parallelism = 1; wrap(r) })
	cs := chunked(500) // five chunks, one at a time
	third := cs.Files[250].DepotPath
	h.standin.QueueFault(llmstandin.Fault{Status: 429, RetryAfter: "120", Match: third})
	j := h.job(t, "job-long-wait", cs)

	ctx, cancel := context.WithDeadline(context.Background(), clock.Now().Add(60*time.Second))
	_, err := h.stage.Process(ctx, j)
	cancel()
	if failure.Classify(err) != failure.RateLimited || failure.RetryAfter(err) < 120*time.Second {
		t.Fatalf("first attempt: %v (retry after %v), want RATE_LIMITED asking for 120s", err, failure.RetryAfter(err))
	}
	if n := len(h.standin.Requests()); n != 3 {
		t.Fatalf("first attempt made %d calls, want 3 (two done, the third rate limited, nothing after)", n)
	}
	if stored := h.s3.Keys("/chunks/"); countResults(stored) != 2 {
		t.Errorf("stored chunks = %v, want the two finished", stored)
	}

	res, err := h.stage.Process(context.Background(), j)
	if err != nil {
		t.Fatalf("next attempt: %v", err)
	}
	if n := len(h.standin.Requests()); n != 6 {
		t.Errorf("after the next attempt %d calls, want 6: only chunks 3-5 again", n)
	}
	if meta := domain.ReadReviewMeta(h.result(t, res).Meta); meta.Chunks != 5 || meta.ReusedChunks != 2 {
		t.Errorf("meta = %+v", meta)
	}
}

func countResults(keys []string) int {
	n := 0
	for _, k := range keys {
		if !strings.HasSuffix(k, ".error.json") {
			n++
		}
	}
	return n
}

// TestTokensBilledAreRecorded: the job record and the result's meta carry
// what the provider billed, cached and uncached. The static prefix is cached
// across chunks once it reaches the providers' 1,024-token minimum, which
// prompt 1.2.0's does and 1.0.0's does not.
func TestTokensBilledAreRecorded(t *testing.T) {
	for _, tt := range []struct {
		version string
		cached  bool
	}{
		{result.StablePromptVersion, false},
		{result.RulesPromptVersion, true},
	} {
		t.Run(tt.version, func(t *testing.T) {
			// One chunk at a time: calls sent together all miss the cache, as
			// they do at a real provider.
			h := newHarness(t, func(r *llmstage.LLM) {
				r.Parallelism = 1
				r.Terms.Prices = llm.Prices{Input: 3, CachedInput: 0.3, CacheWrite: 3, Output: 15}
				if tt.version != result.StablePromptVersion {
					r.Rollout = result.Rollout{Candidate: tt.version, Percent: 100}
				}
			})
			res, err := h.stage.Process(context.Background(), h.job(t, "job-billed", chunked(300)))
			if err != nil {
				t.Fatal(err)
			}
			var in, cached, out int
			for _, r := range h.standin.Requests() {
				in += r.InputTokens
				cached += r.CachedTokens
				out += r.OutputTokens
			}
			if (cached > 0) != tt.cached {
				t.Errorf("prompt %s: %d of %d input tokens cached, want cached: %v", tt.version, cached, in, tt.cached)
			}
			st := res.Review
			if st.PromptVersion != tt.version || st.InputTokens != in || st.CachedInputTokens != cached {
				t.Errorf("job stats %+v, the provider billed %d input of which %d cached", st, in, cached)
			}
			meta := domain.ReadReviewMeta(h.result(t, res).Meta)
			if meta.InputTokens != in || meta.CachedInputTokens != cached {
				t.Errorf("meta %+v", meta)
			}
			// The estimate is what the provider billed at the configured prices.
			if want := (float64(in-cached)*3 + float64(cached)*0.3 + float64(out)*15) / 1e6; math.Abs(meta.EstimatedCostUSD-want) > 1e-9 || want == 0 {
				t.Errorf("estimated cost $%v, want $%v", meta.EstimatedCostUSD, want)
			}
			for _, m := range []string{`"ReviewInputTokens":`, `"ReviewCachedInputTokens":`, `"ReviewOutputTokens":`} {
				if !strings.Contains(h.metrics.String(), m) {
					t.Errorf("metrics lack %s: %s", m, h.metrics.String())
				}
			}
		})
	}
}
