package llm

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/criticizer/criticizer/shared/backoff"
	"github.com/criticizer/criticizer/shared/failure"
)

// Limiter paces one instance's calls to a provider's per-model rate limits,
// so a provider asking to slow down is waited out inside the attempt (rule
// BO-4, "waiting is not failing"):
//
//   - limits come from configuration and from every answer's rate-limit
//     headers (the limit all callers share); each is a continuously
//     refilling token bucket;
//   - a call waits until both buckets hold its cost (prompt bytes over the
//     bytes-per-token ratio usage reports, plus its output reservation) and
//     any provider-requested pause ends;
//   - a 429, or a busy server's 503 (at most maxBusyRetries per call), is
//     retried after the provider's hint (full-jitter backoff without one)
//     and halves the calls allowed in flight; successes raise it again (AIMD);
//   - a wait that cannot end Reserve before the deadline, or longer than
//     MaxWait, fails RATE_LIMITED with the wait as its Retry-After.
//
// It is safe for concurrent use.
type Limiter struct {
	cfg LimiterConfig

	mu     sync.Mutex
	models map[string]*modelLimits
}

// Shared is a per-model, per-minute token budget all llm instances draw from
// (shared/store's MinuteTokens): the provider's limit is the account's.
type Shared interface {
	// Take reserves tokens of model's current minute, or says how long
	// until a minute with room.
	Take(ctx context.Context, model string, tokens int, now time.Time) (wait time.Duration, err error)
}

// LimiterConfig configures a Limiter. Zero fields take the defaults noted.
type LimiterConfig struct {
	Shared Shared // drawn from after this instance's own pacing; nil: none
	// RequestsPerMinute and TokensPerMinute: 0 is unknown until the
	// provider's headers say (Bedrock never does).
	RequestsPerMinute, TokensPerMinute int
	MaxConcurrency                     int // calls in flight per model; 0 means 4
	// OutputTokens reserves a call's output when its Prompt sets no
	// MaxTokens (providers count it); 0 means DefaultMaxTokens.
	OutputTokens  int
	BytesPerToken float64 // first estimate, refined from usage; 0 means 4
	// Reserve is the time a call needs after its wait, before the deadline:
	// the client's timeout.
	Reserve time.Duration
	Clock   Clock // nil: the system clock
	// Backoff draws the wait after the nth consecutive 429; nil means
	// backoff.Default.Delay(n, 0).
	Backoff func(n int) time.Duration
	Logger  *slog.Logger // a record per rate-limited answer; nil discards
}

// Clock is the Limiter's time source. Waiters ask for an end time, not a
// duration, so those computing the same end wake together on any clock.
type Clock interface {
	Now() time.Time
	At(t time.Time) <-chan time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time                  { return time.Now() }
func (systemClock) At(t time.Time) <-chan time.Time { return time.After(time.Until(t)) }

// MaxWait is the longest a Limiter waits at once (rule BO-2's ceiling).
const MaxWait = 5 * time.Minute

// NewLimiter returns a Limiter with cfg's defaults filled in.
func NewLimiter(cfg LimiterConfig) *Limiter {
	cfg.MaxConcurrency = cmp.Or(max(cfg.MaxConcurrency, 0), 4)
	cfg.OutputTokens = cmp.Or(max(cfg.OutputTokens, 0), DefaultMaxTokens)
	cfg.BytesPerToken = cmp.Or(max(cfg.BytesPerToken, 0), 4)
	cfg.Clock = cmp.Or[Clock](cfg.Clock, systemClock{})
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	if cfg.Backoff == nil {
		cfg.Backoff = func(n int) time.Duration { return backoff.Default.Delay(n, 0) }
	}
	return &Limiter{cfg: cfg, models: map[string]*modelLimits{}}
}

// Wrap returns next paced by l's limits for model.
func (l *Limiter) Wrap(model string, next Provider) Provider {
	return ProviderFunc(func(ctx context.Context, p Prompt) (Completion, error) {
		return l.complete(ctx, model, l.model(model), next, p)
	})
}

func (l *Limiter) model(name string) *modelLimits {
	l.mu.Lock()
	defer l.mu.Unlock()
	m, ok := l.models[name]
	if !ok {
		now := l.cfg.Clock.Now()
		m = &modelLimits{
			tokens:      newBucket(l.cfg.TokensPerMinute, now),
			requests:    newBucket(l.cfg.RequestsPerMinute, now),
			concurrency: float64(l.cfg.MaxConcurrency),
			bpt:         l.cfg.BytesPerToken,
			changed:     make(chan struct{}),
		}
		l.models[name] = m
	}
	return m
}

type modelLimits struct {
	mu           sync.Mutex
	tokens       bucket
	requests     bucket
	pausedUntil  time.Time // a provider-requested pause (Retry-After)
	concurrency  float64   // AIMD: calls allowed in flight
	inFlight     int
	consecutive  int // 429s since the last success, for backoff without a hint
	lastDecrease time.Time
	bpt          float64 // prompt bytes per token, from usage
	usedBytes    int64
	usedTokens   int64
	spentTokens  float64       // tokens reserved so far, to age header readings
	spentCalls   float64       // requests reserved so far, likewise
	changed      chan struct{} // closed and replaced when a slot frees or limits change
}

func (m *modelLimits) allowed() int { return max(1, int(m.concurrency)) }

func (m *modelLimits) broadcast() {
	close(m.changed)
	m.changed = make(chan struct{})
}

// bucket is a per-minute limit refilled continuously (as Anthropic documents
// its limits; OpenAI's behave alike). Zero capacity: unknown, no pacing.
type bucket struct {
	capacity float64
	level    float64
	at       time.Time
}

func newBucket(perMinute int, now time.Time) bucket {
	return bucket{capacity: float64(perMinute), level: float64(perMinute), at: now}
}

func (b *bucket) perSecond() float64 { return b.capacity / 60 }

func (b *bucket) refill(now time.Time) {
	if b.capacity <= 0 {
		return
	}
	if dt := now.Sub(b.at).Seconds(); dt > 0 {
		b.level = math.Min(b.capacity, b.level+dt*b.perSecond())
	}
	b.at = now
}

// wait is how long until the bucket holds n (at most its capacity: a call
// larger than the limit waits for a full bucket and lets the provider judge).
func (b *bucket) wait(n float64) time.Duration {
	if b.capacity <= 0 {
		return 0
	}
	n = math.Min(n, b.capacity)
	if b.level >= n {
		return 0
	}
	return time.Duration((n - b.level) / b.perSecond() * float64(time.Second))
}

func (b *bucket) take(n float64) {
	if b.capacity > 0 {
		b.level -= math.Min(n, b.capacity)
	}
}

// learn takes the provider's limit and what it had left, less this
// instance's reservations since (spentSince).
func (b *bucket) learn(limit int, remaining int, hasRemaining bool, spentSince float64, now time.Time) {
	if limit > 0 && float64(limit) != b.capacity {
		if b.capacity <= 0 {
			b.level = float64(limit)
		}
		b.capacity = float64(limit)
		b.at = now
	}
	if hasRemaining && b.capacity > 0 {
		b.refill(now)
		b.level = math.Min(b.level, float64(remaining)-spentSince)
	}
}

func (l *Limiter) cost(m *modelLimits, p Prompt) float64 {
	out := cmp.Or(max(p.MaxTokens, 0), l.cfg.OutputTokens)
	return float64(len(p.System)+len(p.User))/m.bpt + float64(out)
}

// complete sends p through next, waiting as the limits require.
func (l *Limiter) complete(ctx context.Context, model string, m *modelLimits, next Provider, p Prompt) (Completion, error) {
	cost := l.cost(m, p)
	var limited int
	var waited time.Duration
	for {
		mark, err := l.acquire(ctx, m, cost)
		waited += mark.waited
		if err == nil {
			var w time.Duration
			w, err = l.shared(ctx, model, cost)
			waited += w
			if err != nil {
				l.free(m) // not called: nothing to learn
			}
		}
		if err != nil {
			return Completion{}, err
		}
		comp, err := next.Complete(ctx, p) // release sets the pause a slow-down asks for
		l.release(m, p, comp, err, mark)
		if !slowDown(err) || (busy(err) && limited >= maxBusyRetries) {
			if err == nil {
				comp.RateLimited, comp.Waited = limited, waited
			}
			return comp, err
		}
		limited++
	}
}

// shared waits for and reserves the call's cost in the shared budget.
func (l *Limiter) shared(ctx context.Context, model string, cost float64) (time.Duration, error) {
	if l.cfg.Shared == nil {
		return 0, nil
	}
	start := l.cfg.Clock.Now()
	for {
		now := l.cfg.Clock.Now()
		wait, err := l.cfg.Shared.Take(ctx, model, int(math.Ceil(cost)), now)
		if err != nil || wait <= 0 {
			return now.Sub(start), err
		}
		if err := l.fits(ctx, now, wait); err != nil {
			return now.Sub(start), err
		}
		select {
		case <-ctx.Done():
			return now.Sub(start), fmt.Errorf("llm: waiting for the shared rate limit: %w", context.Cause(ctx))
		case <-l.cfg.Clock.At(now.Add(wait)):
		}
	}
}

// spentMark is the reservation counters right after a call's own, and its wait.
type spentMark struct {
	tokens, calls float64
	waited        time.Duration
}

// acquire waits until m allows a call of cost, and reserves it.
func (l *Limiter) acquire(ctx context.Context, m *modelLimits, cost float64) (spentMark, error) {
	start := l.cfg.Clock.Now()
	for {
		m.mu.Lock()
		now := l.cfg.Clock.Now()
		m.tokens.refill(now)
		m.requests.refill(now)
		var wait time.Duration
		slot := m.inFlight < m.allowed()
		if slot {
			wait = max(m.pausedUntil.Sub(now), m.tokens.wait(cost), m.requests.wait(1))
		}
		if slot && wait <= 0 {
			m.tokens.take(cost)
			m.requests.take(1)
			m.spentTokens += cost
			m.spentCalls++
			mark := spentMark{tokens: m.spentTokens, calls: m.spentCalls, waited: now.Sub(start)}
			m.inFlight++
			m.mu.Unlock()
			return mark, nil
		}
		if wait > 0 {
			if err := l.fits(ctx, now, wait); err != nil {
				m.mu.Unlock()
				return spentMark{}, err
			}
		}
		changed := m.changed
		m.mu.Unlock()
		var timer <-chan time.Time
		if wait > 0 {
			timer = l.cfg.Clock.At(now.Add(wait))
		}
		select {
		case <-ctx.Done():
			return spentMark{}, fmt.Errorf("llm: waiting for the rate limit: %w", context.Cause(ctx))
		case <-timer:
		case <-changed:
		}
	}
}

// fits refuses a wait over MaxWait or not leaving Reserve before the deadline.
func (l *Limiter) fits(ctx context.Context, now time.Time, wait time.Duration) error {
	e := &Error{Provider: "limiter", Reason: ReasonRateLimited}
	if wait > MaxWait {
		e.Detail = fmt.Sprintf("the rate limit needs a wait of %s, over the %s ceiling", wait.Round(time.Millisecond), MaxWait)
		return Classed(failure.RateLimited, wait, e)
	}
	if dl, ok := ctx.Deadline(); ok && now.Add(wait+l.cfg.Reserve).After(dl) {
		e.Detail = fmt.Sprintf("the rate limit needs a wait of %s; the invocation has %s left", wait.Round(time.Millisecond), dl.Sub(now).Round(time.Millisecond))
		return Classed(failure.RateLimited, wait, e)
	}
	return nil
}

// free gives back a call's slot without a call made.
func (l *Limiter) free(m *modelLimits) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inFlight--
	m.broadcast()
}

// release frees the slot, learns from headers and usage, and on a slow-down
// pauses the model and lowers its concurrency.
func (l *Limiter) release(m *modelLimits, p Prompt, comp Completion, err error, mark spentMark) {
	m.mu.Lock()
	defer m.mu.Unlock()
	defer m.broadcast()
	now := l.cfg.Clock.Now()
	m.inFlight--
	rl := comp.RateLimit
	d, hasDetails := Details(err)
	if hasDetails {
		rl = d.RateLimit
	}
	// The headers predate what this instance reserved after this call.
	m.tokens.learn(rl.TokensLimit, rl.TokensRemaining, rl.HasTokens, m.spentTokens-mark.tokens, now)
	m.requests.learn(rl.RequestsLimit, rl.RequestsRemaining, rl.HasRequests, m.spentCalls-mark.calls, now)

	if !slowDown(err) {
		if err == nil {
			m.consecutive = 0
			// Additive increase: one more slot per window of successes.
			m.concurrency = math.Min(float64(l.cfg.MaxConcurrency), m.concurrency+1/m.concurrency)
			if u := comp.Usage.InputTokens; u > 0 {
				m.usedBytes += int64(len(p.System) + len(p.User))
				m.usedTokens += int64(u)
				m.bpt = float64(m.usedBytes) / float64(m.usedTokens)
			}
		}
		return
	}
	m.consecutive++
	// The wait: Retry-After; else, with headers, what the buckets need (a
	// reset header is when a limit is full again, longer than needed); else
	// the reset hint; else backoff.
	if !rl.HasTokens && !rl.HasRequests {
		// No headers (Bedrock): the buckets are empty; a configured limit paces the retry.
		m.tokens.level = math.Min(m.tokens.level, 0)
		m.requests.level = math.Min(m.requests.level, 0)
	}
	var hint time.Duration
	paced := max(m.tokens.wait(l.cost(m, p)), m.requests.wait(1))
	switch {
	case hasDetails && d.RetryAfterHeader > 0:
		hint = d.RetryAfterHeader
	case (rl.HasTokens || rl.HasRequests) && paced > 0:
		hint = 0 // acquire waits for the buckets
	default:
		hint = failure.RetryAfter(err)
	}
	if hint > 0 || paced <= 0 {
		// Full-jitter backoff per consecutive 429 (rule BO-1), never
		// shortened by a Retry-After (spec §8.2: max of the two).
		hint = max(hint, l.cfg.Backoff(m.consecutive))
	}
	if until := now.Add(hint); until.After(m.pausedUntil) {
		m.pausedUntil = until
	}
	// Multiplicative decrease once per pause: concurrent 429s are one signal.
	if !now.Before(m.lastDecrease) {
		m.concurrency = math.Max(1, m.concurrency/2)
		m.lastDecrease = now.Add(max(hint, paced))
	}
	reason := ReasonRateLimited
	if hasDetails {
		reason = d.Reason
	}
	l.cfg.Logger.Warn("llm rate limited; waiting", slog.Duration("retry_after", hint), slog.Int("concurrency", m.allowed()),
		slog.Int("consecutive", m.consecutive), slog.String("reason", string(reason)))
}

// maxBusyRetries bounds the 503s one call waits out: a queue that stays full
// (or a gateway for a server that is gone) ends the attempt, retryable.
const maxBusyRetries = 5

// slowDown: err asks to wait and send again (a 429, or a 503 busy server
// such as Ollama's full queue).
func slowDown(err error) bool {
	return failure.Classify(err) == failure.RateLimited || busy(err)
}

func busy(err error) bool {
	d, ok := Details(err)
	return ok && d.Reason == ReasonBusy
}
