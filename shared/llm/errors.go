package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
)

// Reason says what a provider answer meant, beyond its failure class. The
// llm stage acts on it: Truncated and ContextLength are answered by a
// smaller chunk, not by a blind retry.
type Reason string

const (
	ReasonTruncated     Reason = "truncated"               // output token limit reached mid-answer
	ReasonContextLength Reason = "context_length_exceeded" // the prompt does not fit the model
	ReasonRefusal       Reason = "refusal"                 // the model declined to answer
	ReasonContentFilter Reason = "content_filter"          // the provider's filter or guardrail stopped it
	ReasonQuota         Reason = "insufficient_quota"      // billing/quota exhausted: an operator must act
	ReasonRateLimited   Reason = "rate_limited"
	ReasonAuth          Reason = "auth"
	ReasonUpstream      Reason = "upstream"
	ReasonBadRequest    Reason = "bad_request" // the provider says our request is wrong
	// ReasonInvalidRequest: the server says the request itself is invalid
	// (a validation error, an unsupported parameter or response format),
	// whatever status it sent it with: a configuration error, never an
	// upstream fault to retry.
	ReasonInvalidRequest Reason = "invalid_request"
	// ReasonBusy: 503, the server's queue is full (Ollama: "server busy,
	// please try again", ollama/ollama PR 4144): waited out with backoff.
	ReasonBusy        Reason = "server_busy"
	ReasonBadResponse Reason = "bad_response" // the answer is not the provider's documented shape
)

// Error is what a failed call tells: the provider's own code and type
// (clipped), its request id, and for a refusal the model's sanitized text.
// It never holds the provider's error message: a 401 message quotes part of
// the API key; only an invalid request's validation reason is kept
// (ServerReason: the field and rule, sanitized). It is always wrapped in a
// *failure.Error that carries the class.
type Error struct {
	Provider  string
	Reason    Reason
	Status    int
	Code      string
	Type      string
	RequestID string
	// Refusal is the model's refusal text, one line, clipped (diagnostics).
	Refusal string
	// Detail is our own wording, never upstream text.
	Detail string
	// ServerReason is, for ReasonInvalidRequest, what the server said was
	// invalid: the validation messages without the values they quote,
	// one line, clipped and passed through shared/sanitize.
	ServerReason string
	// namesFormat: the invalid request's reason names the response format.
	namesFormat bool
	// RateLimit is what the answer's headers said about the limits.
	RateLimit RateLimit
	// RetryAfterHeader is the wait the answer's Retry-After (or
	// retry-after-ms) header asked for, 0 when it sent none: a limiter obeys
	// it, while a reset header only says when a limit is full again.
	RetryAfterHeader time.Duration
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "llm %s: %s", e.Provider, e.Reason)
	if e.Detail != "" {
		b.WriteString(": " + e.Detail)
	}
	if e.Status != 0 {
		fmt.Fprintf(&b, " (status %d", e.Status)
	} else {
		b.WriteString(" (")
	}
	if e.Code != "" {
		fmt.Fprintf(&b, ", code %q", e.Code)
	}
	if e.Type != "" {
		fmt.Fprintf(&b, ", type %q", e.Type)
	}
	fmt.Fprintf(&b, ", request %s)", orDash(e.RequestID))
	if e.ServerReason != "" {
		fmt.Fprintf(&b, " server says: %q", e.ServerReason)
	}
	if e.Refusal != "" {
		fmt.Fprintf(&b, " refusal: %q", e.Refusal)
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Details returns the *Error in err's chain, if any.
func Details(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// NeedsSmallerInput reports whether err says the request or its answer did
// not fit the model: truncated output or an over-long prompt. A smaller chunk
// (or, for truncation, a higher max_tokens) may succeed where a retry cannot.
func NeedsSmallerInput(err error) bool {
	e, ok := Details(err)
	return ok && (e.Reason == ReasonTruncated || e.Reason == ReasonContextLength)
}

// Classed wraps e in a *failure.Error of class (the form every provider
// family returns).
func Classed(class failure.Class, retryAfter time.Duration, e *Error) error {
	return &failure.Error{Class: class, RetryAfter: retryAfter, UpstreamCode: e.Status, Err: e}
}

// ClassFor is the failure class every provider's reason maps to, unless the
// provider's own code says more (rate limits vs quota, 5xx vs network).
func ClassFor(r Reason) failure.Class {
	switch r {
	case ReasonRefusal, ReasonContentFilter:
		return failure.PolicyRejected
	case ReasonQuota, ReasonAuth:
		return failure.AuthDenied
	case ReasonRateLimited:
		return failure.RateLimited
	case ReasonUpstream:
		return failure.Upstream5xx
	case ReasonBusy:
		return failure.NetworkTimeout
	case ReasonInvalidRequest:
		return failure.InternalBug
	}
	// Truncated, ContextLength, BadRequest, BadResponse: retrying the same
	// request cannot help; the llm stage re-chunks the first two.
	return failure.SchemaInvalid
}

// openAIError is the OpenAI-compatible error envelope:
// {"error":{"code","type","message","param"}}. code is a string for OpenAI, a
// number for some compatibles, null for rate limits; type is null on Azure.
type openAIError struct {
	Error struct {
		Code    json.RawMessage `json:"code"`
		Type    *string         `json:"type"`
		Message string          `json:"message"`
	} `json:"error"`
}

func (e openAIError) code() string {
	var s string
	if json.Unmarshal(e.Error.Code, &s) == nil {
		return s
	}
	if string(e.Error.Code) == "null" {
		return ""
	}
	return strings.Trim(string(e.Error.Code), `"`)
}

func (e openAIError) typ() string {
	if e.Error.Type == nil {
		return ""
	}
	return *e.Error.Type
}

// openAIStatusError classes a non-2xx OpenAI-compatible answer:
//
//	429 insufficient_quota                         quota: AUTH_DENIED, operator needed
//	429 / rate_limit_exceeded                      RATE_LIMITED (Retry-After or x-ratelimit-reset-*)
//	context_length_exceeded, or a 400 whose        context length: re-chunk smaller
//	  message names the context length (DeepSeek)
//	content_filter / content_policy_violation      POLICY_REJECTED (Azure prompt filter)
//	401, 403                                       AUTH_DENIED
//	any status whose body says the request is      INTERNAL_BUG (invalid_request, not retried;
//	  invalid (InvalidRequest)                       the server's reason kept, sanitized)
//	internal_error / server_error, other 5xx       UPSTREAM_5XX
//	503                                            NETWORK_TIMEOUT, server_busy: the Limiter backs off
//	502, 504, 408                                  NETWORK_TIMEOUT
//	other 4xx                                      SCHEMA_INVALID
//
// The message is read only to recognise a context-length look-alike and an
// invalid request; only the latter's validation reason is kept
// (ServerReason), never the message of any other answer (for 401 it quotes
// part of the key).
func openAIStatusError(provider string, resp *http.Response, body []byte, reqID string) error {
	var ae openAIError
	_ = json.Unmarshal(body, &ae) // a non-JSON body leaves code and type empty
	if ae.Error.Message == "" {
		// vLLM's envelope is flat: {"object":"error","message","type","code"}.
		var flat struct {
			Message string          `json:"message"`
			Type    *string         `json:"type"`
			Code    json.RawMessage `json:"code"`
		}
		if json.Unmarshal(body, &flat) == nil && flat.Message != "" {
			ae.Error.Message, ae.Error.Type, ae.Error.Code = flat.Message, flat.Type, flat.Code
		}
	}
	code, typ := Clip(ae.code(), 64), Clip(ae.typ(), 64)
	status := resp.StatusCode
	e := &Error{Provider: provider, Status: status, Code: code, Type: typ, RequestID: reqID}
	retryAfter := parseRetryAfter(resp.Header, time.Now())
	switch {
	case code == "insufficient_quota" || typ == "insufficient_quota":
		e.Reason, e.Detail = ReasonQuota, "the provider account's quota or billing is exhausted; retrying cannot help until an operator raises it"
		return Classed(failure.AuthDenied, 0, e)
	case status == http.StatusTooManyRequests || code == "rate_limit_exceeded" || typ == "rate_limit_exceeded":
		e.Reason = ReasonRateLimited
		var explicit bool
		e.RetryAfterHeader, explicit = explicitRetryAfter(resp.Header, time.Now())
		// Without Retry-After, type names the limit that was hit: its reset is
		// the hint (the other limit's reset is when that one is full again,
		// which may be much later).
		if !explicit && (typ == "tokens" || typ == "requests") {
			if d, err := time.ParseDuration(strings.TrimSpace(resp.Header.Get("X-Ratelimit-Reset-" + typ))); err == nil {
				retryAfter = min(max(d, 0), maxRetryAfter)
			}
		}
		return Classed(failure.RateLimited, retryAfter, e)
	case code == "context_length_exceeded" || code == "string_above_max_length" ||
		(status >= 400 && status < 500 && MentionsContextLength(ae.Error.Message)):
		e.Reason = ReasonContextLength
	case status >= 400 && status < 500 && (code == "content_filter" || code == "content_policy_violation" || typ == "content_policy_violation"):
		e.Reason = ReasonContentFilter
		e.Detail = "the provider's content filter rejected the prompt"
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Reason = ReasonAuth
	case InvalidRequest(status, code, typ, ae.Error.Message, body):
		e.Reason, e.Detail = ReasonInvalidRequest, "the server refused the request as invalid: a configuration error (model, response format, parameters), not a fault a retry fixes"
		e.ServerReason, e.namesFormat = invalidReason(ae.Error.Message, body)
	case code == "internal_error" || typ == "internal_error":
		e.Reason = ReasonUpstream
	case status == http.StatusServiceUnavailable:
		e.Reason = ReasonBusy
		return Classed(failure.NetworkTimeout, retryAfter, e)
	case status == http.StatusBadGateway || status == http.StatusGatewayTimeout || status == http.StatusRequestTimeout:
		e.Reason = ReasonUpstream
		return Classed(failure.NetworkTimeout, retryAfter, e)
	case status >= 500:
		e.Reason = ReasonUpstream
	default:
		e.Reason = ReasonBadRequest
	}
	return Classed(ClassFor(e.Reason), retryAfter, e)
}

// MentionsContextLength recognises the wording providers use when the prompt
// is too long but the code does not say so (DeepSeek: invalid_request_error,
// "This model's maximum context length is 65536 tokens ..."; Anthropic:
// "prompt is too long"; Bedrock: "Input is too long for requested model").
func MentionsContextLength(msg string) bool {
	m := strings.ToLower(msg)
	for _, s := range []string{"context length", "context_length", "context window", "prompt is too long",
		"input is too long", "too many tokens", "too many input tokens", "reduce the length"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// parseRetryAfter reads how long the provider asks us to wait: Retry-After
// (delay-seconds or HTTP date), retry-after-ms, then OpenAI's
// x-ratelimit-reset-requests / x-ratelimit-reset-tokens, which are Go-style
// durations ("12ms", "1s", "6m0s"); with both, the longer wins, since either
// limit blocks the request. Unparseable or past values give 0 (backoff decides).
func parseRetryAfter(h http.Header, now time.Time) time.Duration {
	if d, ok := explicitRetryAfter(h, now); ok {
		return d
	}
	var longest time.Duration
	for _, name := range []string{"X-Ratelimit-Reset-Requests", "X-Ratelimit-Reset-Tokens"} {
		if d, err := time.ParseDuration(strings.TrimSpace(h.Get(name))); err == nil && d > longest {
			longest = d
		}
	}
	return min(longest, maxRetryAfter)
}

// explicitRetryAfter reads Retry-After (delay-seconds or HTTP date), then
// retry-after-ms; ok is false when neither is sent or parses.
func explicitRetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if secs, err := strconv.ParseFloat(v, 64); err == nil {
			return clampRetryAfter(secs), true
		}
		if t, err := http.ParseTime(v); err == nil {
			if d := t.Sub(now); d > 0 {
				return min(d, maxRetryAfter), true
			}
			return 0, true
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return clampRetryAfter(ms / 1000), true
		}
	}
	return 0, false
}

// maxRetryAfter only guards the conversion against overflow; the stage's
// retry policy applies rule BO-2's 5-minute ceiling.
const maxRetryAfter = 24 * time.Hour

func clampRetryAfter(secs float64) time.Duration {
	switch {
	case !(secs > 0): // also NaN
		return 0
	case secs > maxRetryAfter.Seconds():
		return maxRetryAfter
	}
	return time.Duration(secs * float64(time.Second))
}

// requestID is the first request-id header the provider sets: OpenAI
// x-request-id, Anthropic request-id, Azure apim-request-id / x-ms-request-id,
// AWS x-amzn-requestid.
func requestID(h http.Header) string {
	for _, name := range []string{"X-Request-Id", "Request-Id", "Apim-Request-Id", "X-Ms-Request-Id", "X-Amzn-Requestid"} {
		if v := h.Get(name); v != "" {
			return Clip(domain.OneLine(v), 128)
		}
	}
	return ""
}

// sanitizeRefusal keeps a refusal readable in diagnostics: one line, no
// control characters, at most 500 bytes.
func sanitizeRefusal(s string) string { return Clip(domain.OneLine(s), 500) }

// Clip cuts s to at most n bytes at a UTF-8 boundary.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
