package llm

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/llm/llmtest"

	"github.com/criticizer/criticizer/shared/failure"
)

func rateLimited(retryAfter time.Duration, rl RateLimit) error {
	return Classed(failure.RateLimited, retryAfter, &Error{Provider: OpenAI, Reason: ReasonRateLimited, Status: 429,
		RetryAfterHeader: retryAfter, RateLimit: rl})
}

// scripted answers its calls from errs in order, then succeeds.
type scripted struct {
	mu    sync.Mutex
	errs  []error
	calls int
	ok    Completion
}

func (s *scripted) Complete(context.Context, Prompt) (Completion, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if len(s.errs) > 0 {
		err := s.errs[0]
		s.errs = s.errs[1:]
		return Completion{}, err
	}
	return s.ok, nil
}

var prompt = Prompt{System: strings.Repeat("s", 200), User: strings.Repeat("u", 200), MaxTokens: 100} // 100 + 100 tokens

func TestLimiterWaitsOutRetryAfter(t *testing.T) {
	clock := llmtest.NewVirtualClock()
	start := clock.Now()
	p := &scripted{errs: []error{rateLimited(2*time.Second, RateLimit{}), rateLimited(2*time.Second, RateLimit{}), rateLimited(3*time.Second, RateLimit{})},
		ok: Completion{Content: []byte("{}")}}
	l := NewLimiter(LimiterConfig{Clock: clock, MaxConcurrency: 4})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	comp, err := l.Wrap("m", p).Complete(ctx, prompt)
	if err != nil || string(comp.Content) != "{}" {
		t.Fatalf("Complete = %q, %v; want the answer after three 429s", comp.Content, err)
	}
	if p.calls != 4 {
		t.Errorf("provider calls = %d, want 4", p.calls)
	}
	if waited := clock.Now().Sub(start); waited < 7*time.Second {
		t.Errorf("waited %v, want at least the 7s the provider asked for", waited)
	}
	if c := l.model("m").allowed(); c >= 4 {
		t.Errorf("concurrency = %d after 429s, want it lowered", c)
	}
}

func TestLimiterEndsTheAttemptWhenTheWaitDoesNotFit(t *testing.T) {
	tests := []struct {
		name       string
		retryAfter time.Duration
		deadline   time.Duration // 0: none
	}{
		{"wait beyond the invocation's remaining time", 30 * time.Second, 20 * time.Second},
		{"wait leaves no time for the call", 10 * time.Second, 20 * time.Second}, // Reserve is 15s
		{"wait beyond the 5-minute ceiling", 6 * time.Minute, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := llmtest.NewVirtualClock()
			p := &scripted{errs: []error{rateLimited(tt.retryAfter, RateLimit{})}}
			l := NewLimiter(LimiterConfig{Clock: clock, Reserve: 15 * time.Second})
			ctx := context.Background()
			if tt.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(ctx, clock.Now().Add(tt.deadline))
				defer cancel()
			}
			_, err := l.Wrap("m", p).Complete(ctx, prompt)
			if failure.Classify(err) != failure.RateLimited || failure.RetryAfter(err) < tt.retryAfter {
				t.Fatalf("err = %v (retry after %v), want RATE_LIMITED asking for %v", err, failure.RetryAfter(err), tt.retryAfter)
			}
			if p.calls != 1 {
				t.Errorf("provider calls = %d, want 1: the wait was not taken", p.calls)
			}
		})
	}
}

func TestLimiterPacesToTheConfiguredTokensPerMinute(t *testing.T) {
	clock := llmtest.NewVirtualClock()
	start := clock.Now()
	p := &scripted{ok: Completion{Content: []byte("{}"), Usage: Usage{InputTokens: 100}}}
	// 6,000 tokens a minute, 200 per call: the first 30 calls fit the full
	// bucket, the next 30 need another minute.
	l := NewLimiter(LimiterConfig{Clock: clock, TokensPerMinute: 6000})
	for range 60 {
		if _, err := l.Wrap("m", p).Complete(context.Background(), prompt); err != nil {
			t.Fatal(err)
		}
	}
	if got := clock.Now().Sub(start); got < 59*time.Second || got > 61*time.Second {
		t.Errorf("60 calls of 200 tokens at 6,000/min took %v, want 1 min", got)
	}
}

func TestLimiterLearnsLimitsFromHeaders(t *testing.T) {
	clock := llmtest.NewVirtualClock()
	start := clock.Now()
	// The provider says 6,000 tokens a minute with none left.
	p := &scripted{ok: Completion{Content: []byte("{}"), RateLimit: RateLimit{TokensLimit: 6000, TokensRemaining: 0, HasTokens: true}}}
	l := NewLimiter(LimiterConfig{Clock: clock})
	m := l.Wrap("m", p)
	if _, err := m.Complete(context.Background(), prompt); err != nil {
		t.Fatal(err)
	}
	if d := clock.Now().Sub(start); d != 0 {
		t.Fatalf("first call waited %v with no limit known", d)
	}
	if _, err := m.Complete(context.Background(), prompt); err != nil {
		t.Fatal(err)
	}
	// 200 tokens at 100/s.
	if d := clock.Now().Sub(start); d < 1900*time.Millisecond || d > 2100*time.Millisecond {
		t.Errorf("second call waited %v, want ~2s for 200 tokens at 6,000/min", d)
	}
	// Another model's limits are its own.
	if _, err := l.Wrap("other", p).Complete(context.Background(), prompt); err != nil {
		t.Fatal(err)
	}
	if d := clock.Now().Sub(start); d > 2100*time.Millisecond {
		t.Errorf("a call to another model waited for this model's limit")
	}
}

// TestLimiterConcurrencyAIMD: a 429 halves the calls allowed in flight;
// successes raise it back to the maximum.
func TestLimiterConcurrencyAIMD(t *testing.T) {
	clock := llmtest.NewVirtualClock()
	p := &scripted{errs: []error{rateLimited(time.Second, RateLimit{})}, ok: Completion{Content: []byte("{}")}}
	l := NewLimiter(LimiterConfig{Clock: clock, MaxConcurrency: 8})
	m := l.Wrap("m", p)
	if _, err := m.Complete(context.Background(), prompt); err != nil {
		t.Fatal(err)
	}
	if c := l.model("m").allowed(); c != 4 {
		t.Fatalf("concurrency after one 429 = %d, want 4", c)
	}
	for range 40 {
		if _, err := m.Complete(context.Background(), prompt); err != nil {
			t.Fatal(err)
		}
	}
	if c := l.model("m").allowed(); c != 8 {
		t.Errorf("concurrency after 40 successes = %d, want back at 8", c)
	}
}

// TestLimiterBoundsCallsInFlight: no more calls reach the provider at once
// than allowed, and one 429 among parallel calls holds them all.
func TestLimiterBoundsCallsInFlight(t *testing.T) {
	var inFlight, peak atomic.Int32
	release := make(chan struct{})
	p := ProviderFunc(func(ctx context.Context, _ Prompt) (Completion, error) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			old := peak.Load()
			if n <= old || peak.CompareAndSwap(old, n) {
				break
			}
		}
		<-release
		return Completion{Content: []byte("{}")}, nil
	})
	l := NewLimiter(LimiterConfig{MaxConcurrency: 3})
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := l.Wrap("m", p).Complete(context.Background(), prompt); err != nil {
				t.Error(err)
			}
		}()
	}
	// Let the calls through one by one once three are waiting at the provider.
	for sent := 0; sent < 10; sent++ {
		for inFlight.Load() < int32(min(3, 10-sent)) {
			time.Sleep(time.Millisecond) // polling a condition, not a fixed wait
		}
		release <- struct{}{}
	}
	wg.Wait()
	if peak.Load() != 3 {
		t.Errorf("peak calls in flight = %d, want 3", peak.Load())
	}
}

// A Retry-After shorter than the drawn backoff does not shorten it (spec
// §8.2: the wait is the max of the two), inside an attempt as between them,
// whether or not the answer's rate-limit headers pace the retry too.
func TestLimiterRetryAfterNeverShortensTheBackoff(t *testing.T) {
	for name, rl := range map[string]RateLimit{
		"no rate-limit headers":      {},
		"headers pace a short retry": {RequestsLimit: 60, RequestsRemaining: 0, HasRequests: true, RequestsReset: time.Second},
	} {
		clock := llmtest.NewVirtualClock()
		start := clock.Now()
		p := &scripted{errs: []error{rateLimited(time.Second, rl), rateLimited(time.Second, rl)}, ok: Completion{Content: []byte("{}")}}
		var draws []int
		l := NewLimiter(LimiterConfig{Clock: clock, Backoff: func(n int) time.Duration { draws = append(draws, n); return 5 * time.Second }})
		if _, err := l.Wrap("m", p).Complete(context.Background(), prompt); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if waited := clock.Now().Sub(start); waited < 10*time.Second {
			t.Errorf("%s: waited %v after two 429s asking 1s each, want the drawn 5s each", name, waited)
		}
		if len(draws) != 2 || draws[0] != 1 || draws[1] != 2 {
			t.Errorf("%s: backoff drawn for consecutive 429s %v, want [1 2]", name, draws)
		}
	}
}

func TestLimiterBacksOffWithoutAHint(t *testing.T) {
	clock := llmtest.NewVirtualClock()
	start := clock.Now()
	throttled := Classed(failure.RateLimited, 0, &Error{Provider: Bedrock, Reason: ReasonRateLimited, Status: 429, Code: "ThrottlingException"})
	p := &scripted{errs: []error{throttled, throttled, throttled}, ok: Completion{Content: []byte("{}")}}
	l := NewLimiter(LimiterConfig{Clock: clock})
	if _, err := l.Wrap("m", p).Complete(context.Background(), prompt); err != nil {
		t.Fatal(err)
	}
	// Full jitter: each wait in [0, 1s·2^(n-1)].
	if d := clock.Now().Sub(start); d > 7*time.Second {
		t.Errorf("waited %v, want at most 1+2+4 s", d)
	}
	if p.calls != 4 {
		t.Errorf("calls = %d", p.calls)
	}
}

func TestParseRateLimit(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		h    map[string]string
		want RateLimit
	}{
		{"none (Bedrock)", nil, RateLimit{}},
		{"OpenAI", map[string]string{
			"x-ratelimit-limit-requests": "500", "x-ratelimit-remaining-requests": "499", "x-ratelimit-reset-requests": "120ms",
			"x-ratelimit-limit-tokens": "30000", "x-ratelimit-remaining-tokens": "12000", "x-ratelimit-reset-tokens": "6m0s",
		}, RateLimit{RequestsLimit: 500, RequestsRemaining: 499, HasRequests: true, RequestsReset: 120 * time.Millisecond,
			TokensLimit: 30000, TokensRemaining: 12000, HasTokens: true, TokensReset: 6 * time.Minute}},
		{"Anthropic", map[string]string{
			"anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "0",
			"anthropic-ratelimit-requests-reset": "2026-11-25T12:00:01Z",
			"anthropic-ratelimit-tokens-limit":   "80000", "anthropic-ratelimit-tokens-remaining": "4000",
			"anthropic-ratelimit-tokens-reset": "2026-11-25T12:00:30Z",
		}, RateLimit{RequestsLimit: 50, RequestsRemaining: 0, HasRequests: true, RequestsReset: time.Second,
			TokensLimit: 80000, TokensRemaining: 4000, HasTokens: true, TokensReset: 30 * time.Second}},
		{"Anthropic input tokens only", map[string]string{
			"anthropic-ratelimit-input-tokens-limit": "40000", "anthropic-ratelimit-input-tokens-remaining": "100",
		}, RateLimit{TokensLimit: 40000, TokensRemaining: 100, HasTokens: true}},
		{"garbage", map[string]string{"x-ratelimit-limit-tokens": "lots", "x-ratelimit-remaining-tokens": "-3"}, RateLimit{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.h {
				h.Set(k, v)
			}
			if got := ParseRateLimit(h, now); got != tt.want {
				t.Errorf("ParseRateLimit = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestLimiterPacesA429ByItsHeadersNotByTheReset: OpenAI's 429 has no
// Retry-After, only its headers; x-ratelimit-reset-tokens says when the limit
// is full again (here 6 minutes, past the 5-minute ceiling), but the call
// needs only its own tokens back: the limiter waits for those.
func TestLimiterPacesA429ByItsHeadersNotByTheReset(t *testing.T) {
	clock := llmtest.NewVirtualClock()
	start := clock.Now()
	rl := RateLimit{TokensLimit: 6000, TokensRemaining: 0, HasTokens: true, TokensReset: 6 * time.Minute}
	p := &scripted{errs: []error{Classed(failure.RateLimited, 6*time.Minute, &Error{Provider: OpenAI, Reason: ReasonRateLimited,
		Status: 429, Type: "tokens", RateLimit: rl})}, ok: Completion{Content: []byte("{}")}}
	l := NewLimiter(LimiterConfig{Clock: clock})
	if _, err := l.Wrap("m", p).Complete(context.Background(), prompt); err != nil {
		t.Fatalf("%v: want the call repeated once its 200 tokens are back", err)
	}
	// 200 tokens at 100 a second.
	if d := clock.Now().Sub(start); d < 1900*time.Millisecond || d > 2100*time.Millisecond {
		t.Errorf("waited %v, want ~2s", d)
	}
}

// minuteBudget is the shared per-minute budget (shared/store's MinuteTokens)
// in memory: tokens reserved per minute window, against one limit.
type minuteBudget struct {
	mu    sync.Mutex
	limit int
	used  map[int64]int
}

func (b *minuteBudget) Take(_ context.Context, _ string, tokens int, now time.Time) (time.Duration, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	w := now.Unix() / 60
	if b.used[w]+min(tokens, b.limit) > b.limit {
		return time.Unix((w+1)*60, 0).Sub(now), nil
	}
	b.used[w] += tokens
	return 0, nil
}

// Two instances of the llm function, each paced to the provider's 6,000
// tokens a minute, would together send twice that; drawing from the shared
// budget, they keep to it in every minute.
func TestLimiterSharedAcrossInstances(t *testing.T) {
	clock := llmtest.NewVirtualClock()
	p := &scripted{ok: Completion{Content: []byte("{}"), Usage: Usage{InputTokens: 100}}}
	shared := &minuteBudget{limit: 6000, used: map[int64]int{}}
	var wg sync.WaitGroup
	for range 2 {
		l := NewLimiter(LimiterConfig{Clock: clock, TokensPerMinute: 6000, Shared: shared})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 45 {
				if _, err := l.Wrap("m", p).Complete(context.Background(), prompt); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	total := 0
	for w, n := range shared.used {
		total += n
		if n > 6000 {
			t.Errorf("minute %d: %d tokens sent, over the shared 6,000", w, n)
		}
	}
	if total != 90*200 {
		t.Errorf("%d tokens reserved for 90 calls of 200", total)
	}
}
