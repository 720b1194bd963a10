package llm

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RateLimit is what an answer's rate-limit headers said of the account's
// limits (docs/reference/llm-providers.md); zero limits: not sent.
type RateLimit struct {
	// RequestsLimit and TokensLimit are the per-minute limits.
	RequestsLimit, TokensLimit int
	// RequestsRemaining and TokensRemaining are what is left; valid only
	// when HasRequests / HasTokens.
	RequestsRemaining, TokensRemaining int
	HasRequests, HasTokens             bool
	// RequestsReset and TokensReset are how long until the limit is back
	// to full.
	RequestsReset, TokensReset time.Duration
}

// ParseRateLimit reads OpenAI's x-ratelimit-* (resets as Go durations) and
// Anthropic's anthropic-ratelimit-* (RFC 3339 resets; -tokens-, else
// input-tokens). Bedrock sends none.
func ParseRateLimit(h http.Header, now time.Time) RateLimit {
	var r RateLimit
	intHeader := func(name string) (int, bool) {
		n, err := strconv.ParseInt(strings.TrimSpace(h.Get(name)), 10, 64)
		if err != nil || n < 0 {
			return 0, false
		}
		return int(min(n, 1<<40)), true
	}
	durHeader := func(name string) time.Duration {
		v := strings.TrimSpace(h.Get(name)) // "" parses as neither
		if d, err := time.ParseDuration(v); err == nil && d > 0 {
			return min(d, maxRetryAfter)
		}
		if t, err := time.Parse(time.RFC3339, v); err == nil && t.After(now) {
			return min(t.Sub(now), maxRetryAfter)
		}
		return 0
	}
	// read fills one limit from its three headers; names maps "limit",
	// "remaining", "reset" to the header names of one provider and kind.
	read := func(names func(string) string, limit, remaining *int, has *bool, reset *time.Duration) bool {
		l, okL := intHeader(names("limit"))
		rem, okR := intHeader(names("remaining"))
		if !okL && !okR {
			return false
		}
		*limit, *remaining, *has = l, rem, okR
		*reset = durHeader(names("reset"))
		return true
	}
	// OpenAI: x-ratelimit-limit-requests, x-ratelimit-remaining-tokens, …
	openai := func(kind string) func(string) string {
		return func(what string) string { return "X-Ratelimit-" + what + "-" + kind }
	}
	// Anthropic: anthropic-ratelimit-requests-limit, anthropic-ratelimit-tokens-remaining, …
	anthropic := func(kind string) func(string) string {
		return func(what string) string { return "Anthropic-Ratelimit-" + kind + "-" + what }
	}
	if !read(openai("requests"), &r.RequestsLimit, &r.RequestsRemaining, &r.HasRequests, &r.RequestsReset) {
		read(anthropic("requests"), &r.RequestsLimit, &r.RequestsRemaining, &r.HasRequests, &r.RequestsReset)
	}
	if !read(openai("tokens"), &r.TokensLimit, &r.TokensRemaining, &r.HasTokens, &r.TokensReset) &&
		!read(anthropic("tokens"), &r.TokensLimit, &r.TokensRemaining, &r.HasTokens, &r.TokensReset) {
		read(anthropic("input-tokens"), &r.TokensLimit, &r.TokensRemaining, &r.HasTokens, &r.TokensReset)
	}
	return r
}
