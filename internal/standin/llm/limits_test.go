package llm_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/criticizer/criticizer/internal/standin/llm"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	llmclient "github.com/criticizer/criticizer/shared/llm"
)

var formats = []string{llm.FormatOpenAI, llm.FormatAnthropic, llm.FormatBedrock}

// userPrompt is a review request's user message for one file.
func userPrompt(path, diff string) string {
	return reviewPrompt(domain.Changeset{Changelist: 7, Status: "submitted",
		Files: []domain.FileChange{{DepotPath: path, Action: "edit", Type: "text", Rev: 2, Diff: "@@ -1,1 +1,2 @@\n" + diff}}}).User
}

func withKey(o llm.Options) llm.Options { o.APIKey = key; return o }

// TestPromptCaching: each provider's client sends the system prompt so the
// provider caches it (OpenAI: a stable prefix; Anthropic: cache_control;
// Bedrock: cachePoint), and the stand-in reports the cache in each
// provider's usage fields, which the client normalizes.
func TestPromptCaching(t *testing.T) {
	long := strings.Repeat("Review rules that stay the same for every chunk. ", 120) // ~1,500 tokens
	for _, format := range formats {
		t.Run(format, func(t *testing.T) {
			srv, _ := start(t, withKey(llm.Options{}))
			c := providerClient(t, format, srv.URL(), &bytes.Buffer{})
			var usage []llmclient.Usage
			for _, p := range []llmclient.Prompt{
				{System: long, User: userPrompt("//depot/a.c", "+int a;\n")},
				{System: long, User: userPrompt("//depot/b.c", "+int b;\n")},
				{System: "short rules", User: userPrompt("//depot/c.c", "+int c;\n")},
			} {
				comp, err := c.Complete(context.Background(), p)
				if err != nil {
					t.Fatal(err)
				}
				usage = append(usage, comp.Usage)
			}
			reqs := srv.Requests()
			for i, u := range usage {
				if u.InputTokens != reqs[i].InputTokens {
					t.Errorf("call %d: client says %d input tokens, the stand-in counted %d (cached and written included)", i, u.InputTokens, reqs[i].InputTokens)
				}
			}
			staticTokens := len(long) / 4
			if usage[0].CachedInputTokens != 0 {
				t.Errorf("first call read %d cached tokens from an empty cache", usage[0].CachedInputTokens)
			}
			if format != llm.FormatOpenAI && usage[0].CacheWriteInputTokens < staticTokens {
				t.Errorf("first call wrote %d tokens to the cache, want the %d of the system prompt", usage[0].CacheWriteInputTokens, staticTokens)
			}
			if got := usage[1].CachedInputTokens; got < staticTokens-128 || got > usage[1].InputTokens {
				t.Errorf("second call read %d cached tokens, want about the %d of the system prompt", got, staticTokens)
			}
			if usage[2].CachedInputTokens != 0 || usage[2].CacheWriteInputTokens != 0 {
				t.Errorf("a prefix under 1,024 tokens was cached: %+v", usage[2])
			}
		})
	}
}

// TestRateLimitAnswers: with a tokens-per-minute limit the stand-in answers
// 429 the way each provider does, with its headers, and the client reads
// them: OpenAI names the limit and sends x-ratelimit-* but no Retry-After;
// Anthropic sends retry-after and anthropic-ratelimit-*; Bedrock throttles
// with no hint.
func TestRateLimitAnswers(t *testing.T) {
	for _, format := range formats {
		t.Run(format, func(t *testing.T) {
			// 600 tokens a minute, all in the bucket: one call of ~250 fits twice.
			srv, _ := start(t, withKey(llm.Options{TokensPerMinute: 600}))
			c := providerClient(t, format, srv.URL(), &bytes.Buffer{})
			p := llmclient.Prompt{System: "rules", User: userPrompt("//depot/a.c", "+int a;\n"), MaxTokens: 200}
			var err error
			var comp llmclient.Completion
			for i := 0; i < 5 && err == nil; i++ {
				comp, err = c.Complete(context.Background(), p)
				if err == nil && format != llm.FormatBedrock && (!comp.RateLimit.HasTokens || comp.RateLimit.TokensLimit != 600) {
					t.Errorf("answer %d rate limit = %+v, want the 600-token limit", i, comp.RateLimit)
				}
			}
			if failure.Classify(err) != failure.RateLimited {
				t.Fatalf("err = %v, want RATE_LIMITED once the bucket is empty", err)
			}
			d, _ := llmclient.Details(err)
			switch format {
			case llm.FormatOpenAI:
				if d.Type != "tokens" || d.RetryAfterHeader != 0 || !d.RateLimit.HasTokens || d.RateLimit.TokensReset <= 0 {
					t.Errorf("429 details = %+v", d)
				}
			case llm.FormatAnthropic:
				if d.RetryAfterHeader < time.Second || !d.RateLimit.HasTokens {
					t.Errorf("429 details = %+v", d)
				}
			case llm.FormatBedrock:
				if d.Code != "ThrottlingException" || failure.RetryAfter(err) != 0 || d.RateLimit != (llmclient.RateLimit{}) {
					t.Errorf("throttling details = %+v", d)
				}
			}
			last := srv.Requests()[len(srv.Requests())-1]
			if last.Status != 429 || last.RateLimited != "tokens" {
				t.Errorf("recorded %+v", last)
			}
		})
	}
}

// TestSetLimitsOnARunningStandin: a stand-in started without limits
// enforces the token limit SetLimits gives it (429 once the bucket is
// spent) and stops when the limit is set to 0 again.
func TestSetLimitsOnARunningStandin(t *testing.T) {
	srv, _ := start(t, withKey(llm.Options{}))
	c := providerClient(t, llm.FormatAnthropic, srv.URL(), &bytes.Buffer{})
	p := llmclient.Prompt{System: "rules", User: userPrompt("//depot/a.c", "+int a;\n"), MaxTokens: 200}
	calls := func() (ok int, err error) {
		for ok = 0; ok < 5; ok++ {
			if _, err = c.Complete(context.Background(), p); err != nil {
				return ok, err
			}
		}
		return ok, nil
	}
	if ok, err := calls(); err != nil || ok != 5 {
		t.Fatalf("without limits: %d calls then %v", ok, err)
	}
	srv.SetLimits(600, 0, 0)
	ok, err := calls()
	if failure.Classify(err) != failure.RateLimited || ok < 1 || ok > 2 {
		t.Fatalf("at 600 tokens a minute: %d calls then %v, want one or two (about 250 tokens each) then RATE_LIMITED", ok, err)
	}
	if d, _ := llmclient.Details(err); d.RetryAfterHeader < time.Second {
		t.Errorf("429 without Retry-After: %+v", d)
	}
	srv.SetLimits(0, 0, 0)
	if ok, err := calls(); err != nil || ok != 5 {
		t.Fatalf("limits off again: %d calls then %v", ok, err)
	}
}

// TestLimiterKeepsToTheStandinsLimit: behind the Limiter, a run of calls
// that exceeds the limit completes, waiting instead of failing.
func TestLimiterKeepsToTheStandinsLimit(t *testing.T) {
	for _, format := range formats {
		t.Run(format, func(t *testing.T) {
			// 60,000 tokens a minute (1,000 a second), a bucket of 0.3 s.
			srv, _ := start(t, withKey(llm.Options{TokensPerMinute: 60000, RateLimitBurst: 300 * time.Millisecond}))
			c := providerClient(t, format, srv.URL(), &bytes.Buffer{})
			cfg := llmclient.LimiterConfig{MaxConcurrency: 2, OutputTokens: 100}
			if format == llm.FormatBedrock {
				cfg.TokensPerMinute = 60000 // Bedrock sends no headers: the quota is configured
			}
			lim := llmclient.NewLimiter(cfg)
			p := lim.Wrap("m", c)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for i := range 8 {
				// ~250 tokens each: 2,000 in all, 1.7 s beyond the first bucket.
				if _, err := p.Complete(ctx, llmclient.Prompt{System: "rules", User: userPrompt("//depot/a.c", strings.Repeat("+int a;\n", 60)), MaxTokens: 100}); err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
			}
			ok := 0
			for _, r := range srv.Requests() {
				if r.Status == 200 {
					ok++
				}
			}
			if ok != 8 {
				t.Errorf("%d calls answered, want 8", ok)
			}
		})
	}
}
