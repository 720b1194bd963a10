package llm

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The stand-in's provider economics, as docs/reference/llm-providers.md
// describes them: rate limits enforced with 429s and the rate-limit headers
// each provider sends, and prompt caching with each provider's fields.

// bytesPerToken is the stand-in's tokenizer: four bytes a token.
const bytesPerToken = 4

func tokens(bytes int) int { return (bytes + bytesPerToken - 1) / bytesPerToken }

// Prompt caching: the minimum cacheable prefix (OpenAI and Anthropic: 1,024
// tokens; Anthropic Haiku models 2,048), OpenAI's 128-token steps, and the
// 5-minute life of a cache entry, refreshed on each hit.
const (
	minCacheTokens      = 1024
	minCacheTokensHaiku = 2048
	cacheStepTokens     = 128
	cacheTTL            = 5 * time.Minute
)

// wireBlock is a content block as far as caching reads it: Anthropic's
// {"type":"text","text","cache_control"} or Bedrock's {"text"} and
// {"cachePoint":{"type":"default"}}.
type wireBlock struct {
	Text         string          `json:"text"`
	CacheControl json.RawMessage `json:"cache_control"`
	CachePoint   json.RawMessage `json:"cachePoint"`
}

// promptText is a request's text as a provider reads it (OpenAI's schema,
// counted and cached as OpenAI does, the system prompt, the messages) and
// the length of the prefix its last cache marker ends (-1: none): after
// Anthropic's cache_control block, at Bedrock's cachePoint.
func promptText(req wireRequest) (string, int) {
	var b strings.Builder
	marker := -1
	if rf := req.ResponseFormat; rf != nil && len(rf.JSONSchema) > 0 {
		b.Write(rf.JSONSchema)
	}
	add := func(raw json.RawMessage) {
		for _, bl := range blocks(raw) {
			if bl.CachePoint != nil {
				marker = b.Len()
			}
			b.WriteString(bl.Text)
			if bl.CacheControl != nil && string(bl.CacheControl) != "null" {
				marker = b.Len()
			}
		}
	}
	add(req.System)
	for _, m := range req.Messages {
		add(m.Content)
	}
	return b.String(), marker
}

// cacheUse is what one request read from and wrote to the cache, in tokens.
type cacheUse struct{ read, write int }

// cache looks up and records a request's cacheable prefix. Call with s.mu held.
func (s *Server) cache(format, model, text string, marker int, now time.Time) cacheUse {
	minTokens := minCacheTokens
	if strings.Contains(strings.ToLower(model), "haiku") {
		minTokens = minCacheTokensHaiku
	}
	// One running hash over the text: a prefix's key is its state at the
	// prefix's end (the steps of a long prompt cost one pass, not one each).
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%s\x00", format, model)
	hashed := 0
	key := func(n int) uint64 {
		h.Write([]byte(text[hashed:n]))
		hashed = n
		return h.Sum64()
	}
	hit := func(k uint64) bool { // and (re)starts k's life
		exp, ok := s.cacheSeen[k]
		s.cacheSeen[k] = now.Add(cacheTTL)
		return ok && now.Before(exp)
	}
	if format == FormatOpenAI {
		// Automatic: the longest previously seen prefix, in 128-token steps
		// from 1,024 tokens. Every step of this prompt is remembered.
		read := 0
		for n := minTokens * bytesPerToken; n <= len(text); n += cacheStepTokens * bytesPerToken {
			if hit(key(n)) {
				read = tokens(n)
			}
		}
		return cacheUse{read: read}
	}
	if marker < 0 || tokens(marker) < minTokens {
		return cacheUse{}
	}
	if hit(key(marker)) {
		return cacheUse{read: tokens(marker)}
	}
	return cacheUse{write: tokens(marker)}
}

// limitBucket is one rate limit: a token bucket refilled continuously at
// perMinute a minute, holding burst of it.
type limitBucket struct {
	perMinute int
	capacity  float64
	level     float64
	at        time.Time
}

func (b *limitBucket) refill(now time.Time) {
	if dt := now.Sub(b.at).Seconds(); dt > 0 {
		b.level = math.Min(b.capacity, b.level+dt*float64(b.perMinute)/60)
	}
	b.at = now
}

// need is how long until the bucket holds n; a request larger than the
// bucket is admitted when it is full.
func (b *limitBucket) need(n float64) time.Duration {
	n = math.Min(n, b.capacity)
	if b.level >= n {
		return 0
	}
	return time.Duration((n - b.level) / (float64(b.perMinute) / 60) * float64(time.Second))
}

// full is how long until the bucket is full again (OpenAI's reset).
func (b *limitBucket) full() time.Duration { return b.need(b.capacity) }

// SetLimits replaces the limits a running stand-in enforces (as Options; 0
// turns one off), each bucket starting full (docs/reference/llm-providers.md,
// "Rate-limit headers": token buckets refilled continuously), so a test on
// the shared stack can limit its own span.
func (s *Server) SetLimits(tokensPerMinute, requestsPerMinute int, burst time.Duration) {
	if burst <= 0 {
		burst = time.Minute
	}
	now := time.Now()
	bucket := func(perMinute int) limitBucket {
		c := float64(perMinute) * burst.Minutes()
		return limitBucket{perMinute: perMinute, capacity: c, level: c, at: now}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.TokensPerMinute, s.opts.RequestsPerMinute, s.opts.RateLimitBurst = tokensPerMinute, requestsPerMinute, burst
	s.tpm, s.rpm = bucket(tokensPerMinute), bucket(requestsPerMinute)
}

// admission is the outcome of the rate-limit check for one request.
type admission struct {
	limited string        // "tokens" or "requests" when refused
	wait    time.Duration // until the request would fit
	headers http.Header   // the rate-limit headers of the answer
	charged int           // tokens charged to the limit
}

// limit is a configured bucket and what one request of cost takes from it.
type limit struct {
	kind string
	b    *limitBucket
	n    float64
}

func (s *Server) limits(cost int) []limit {
	return slices.DeleteFunc([]limit{{"requests", &s.rpm, 1}, {"tokens", &s.tpm, math.Min(float64(cost), s.tpm.capacity)}},
		func(l limit) bool { return l.b.perMinute <= 0 })
}

// admit charges a request of cost tokens to the configured limits, or
// refuses it. Call with s.mu held.
func (s *Server) admit(format string, cost int, now time.Time) admission {
	a := admission{headers: http.Header{}}
	ls := s.limits(cost)
	for _, l := range ls {
		l.b.refill(now)
		if w := l.b.need(l.n); w > 0 && a.limited == "" {
			a.limited, a.wait = l.kind, w
		}
	}
	for _, l := range ls {
		if a.limited == "" {
			l.b.level -= l.n
			if l.kind == "tokens" {
				a.charged = cost
			}
		}
	}
	s.rateHeaders(format, a.headers, now)
	return a
}

// rateHeaders writes each provider's rate-limit headers (Bedrock sends none).
func (s *Server) rateHeaders(format string, h http.Header, now time.Time) {
	for _, l := range s.limits(0) {
		remaining := strconv.Itoa(max(0, int(l.b.level)))
		switch format {
		case FormatOpenAI:
			h.Set("X-Ratelimit-Limit-"+l.kind, strconv.Itoa(l.b.perMinute))
			h.Set("X-Ratelimit-Remaining-"+l.kind, remaining)
			h.Set("X-Ratelimit-Reset-"+l.kind, l.b.full().Round(time.Millisecond).String())
		case FormatAnthropic:
			h.Set("Anthropic-Ratelimit-"+l.kind+"-Limit", strconv.Itoa(l.b.perMinute))
			h.Set("Anthropic-Ratelimit-"+l.kind+"-Remaining", remaining)
			h.Set("Anthropic-Ratelimit-"+l.kind+"-Reset", now.Add(l.b.full()).UTC().Format(time.RFC3339))
		}
	}
}

// writeRateLimited answers a refused request the way each provider does:
// OpenAI 429 naming the limit (type "tokens"/"requests") with its headers
// and no Retry-After; Anthropic 429 rate_limit_error with retry-after in
// whole seconds; Bedrock ThrottlingException with no hint.
func writeRateLimited(w http.ResponseWriter, format string, a admission, reqID string) {
	for k, v := range a.headers {
		w.Header()[k] = v
	}
	msg := fmt.Sprintf("Rate limit reached on %s per min. Please try again in %s.", a.limited, a.wait.Round(time.Millisecond))
	switch format {
	case FormatOpenAI:
		writeError(w, http.StatusTooManyRequests, "rate_limit_exceeded", a.limited, msg)
	case FormatAnthropic:
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(a.wait.Seconds()))))
		writeFormatError(w, format, http.StatusTooManyRequests, "rate_limit_error", msg, reqID)
	default:
		writeFormatError(w, format, http.StatusTooManyRequests, "ThrottlingException", "Too many tokens, please wait before trying again.", reqID)
	}
}
