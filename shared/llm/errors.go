package llm

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
)

// Reason says what a provider answer meant beyond its failure class:
// Truncated and ContextLength are answered by a smaller chunk, not a retry.
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
	// ReasonInvalidRequest: the server says the request is invalid, whatever
	// the status: a configuration error, never retried.
	ReasonInvalidRequest Reason = "invalid_request"
	// ReasonBusy: 503, the server's queue is full (Ollama: "server busy,
	// please try again", ollama/ollama PR 4144): waited out with backoff.
	ReasonBusy        Reason = "server_busy"
	ReasonBadResponse Reason = "bad_response" // the answer is not the provider's documented shape
)

// Error is what a failed call tells: the provider's code and type (clipped),
// its request id, a refusal's sanitized text. Never the provider's message
// (a 401's quotes part of the key), only an invalid request's validation
// reason. It is always wrapped in a *failure.Error carrying the class.
type Error struct {
	Provider  string
	Reason    Reason
	Status    int
	Code      string
	Type      string
	RequestID string
	Refusal   string // the model's refusal, one line, clipped
	Detail    string // our own wording, never upstream text
	// ServerReason (ReasonInvalidRequest) is the validation messages without
	// the values they quote, one line, clipped.
	ServerReason string
	namesFormat  bool      // the invalid request's reason names the response format
	RateLimit    RateLimit // what the answer's headers said
	// RetryAfterHeader is the Retry-After (or retry-after-ms) wait, 0 when
	// none was sent: a limiter obeys it; a reset header only says when a
	// limit is full again.
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
	fmt.Fprintf(&b, ", request %s)", cmp.Or(e.RequestID, "-"))
	if e.ServerReason != "" {
		fmt.Fprintf(&b, " server says: %q", e.ServerReason)
	}
	if e.Refusal != "" {
		fmt.Fprintf(&b, " refusal: %q", e.Refusal)
	}
	return b.String()
}

// Details returns the *Error in err's chain, if any.
func Details(err error) (*Error, bool) {
	return errors.AsType[*Error](err)
}

// NeedsSmallerInput reports whether the request or its answer did not fit the model; a
// smaller chunk may succeed where a retry cannot.
func NeedsSmallerInput(err error) bool {
	e, ok := Details(err)
	return ok && (e.Reason == ReasonTruncated || e.Reason == ReasonContextLength)
}

// Classed wraps e in a *failure.Error of class.
func Classed(class failure.Class, retryAfter time.Duration, e *Error) error {
	return &failure.Error{Class: class, RetryAfter: retryAfter, UpstreamCode: e.Status, Err: e}
}

// ClassFor is the class a reason maps to unless the provider's code says more.
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
	// Truncated, ContextLength, BadRequest, BadResponse: a retry cannot help.
	return failure.SchemaInvalid
}

// openAIError is {"error":{"code","type","message","param"}}: code a string
// (OpenAI), a number (some compatibles) or null; type null on Azure (read as "").
type openAIError struct {
	Error struct {
		Code    json.RawMessage `json:"code"`
		Type    string          `json:"type"`
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
// invalid request, whose validation reason alone is kept.
func openAIStatusError(provider string, resp *http.Response, body []byte, reqID string) error {
	var ae openAIError
	_ = json.Unmarshal(body, &ae) // a non-JSON body leaves code and type empty
	if ae.Error.Message == "" {
		// vLLM's envelope is flat: {"object":"error","message","type","code"}.
		var flat struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
		}
		if json.Unmarshal(body, &flat) == nil && flat.Message != "" {
			ae.Error.Message, ae.Error.Type, ae.Error.Code = flat.Message, flat.Type, flat.Code
		}
	}
	code, typ := domain.Clip(ae.code(), 64), domain.Clip(ae.Error.Type, 64)
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
		// Without Retry-After, type names the limit hit: its reset is the hint.
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

// MentionsContextLength recognises a too-long prompt the code does not name
// (DeepSeek: "This model's maximum context length is 65536 tokens ...";
// Anthropic: "prompt is too long"; Bedrock: "Input is too long for requested model").
func MentionsContextLength(msg string) bool {
	m := strings.ToLower(msg)
	return slices.ContainsFunc([]string{"context length", "context_length", "context window", "prompt is too long",
		"input is too long", "too many tokens", "too many input tokens", "reduce the length"},
		func(s string) bool { return strings.Contains(m, s) })
}

// parseRetryAfter reads how long the provider asks us to wait: Retry-After,
// retry-after-ms, then the longer of OpenAI's x-ratelimit-reset-requests /
// -tokens (Go durations: "6m0s"). Unparseable or past values give 0.
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

// explicitRetryAfter reads Retry-After (seconds or HTTP date), then retry-after-ms.
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

// maxRetryAfter only guards against overflow; rule BO-2's ceiling is the stage's.
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

// requestID is the first request-id header set (OpenAI, Anthropic, Azure, AWS).
func requestID(h http.Header) string {
	for _, name := range []string{"X-Request-Id", "Request-Id", "Apim-Request-Id", "X-Ms-Request-Id", "X-Amzn-Requestid"} {
		if v := h.Get(name); v != "" {
			return domain.Clip(domain.OneLine(v), 128)
		}
	}
	return ""
}

// sanitizeRefusal: one line, no control characters, at most 500 bytes.
func sanitizeRefusal(s string) string { return domain.Clip(domain.OneLine(s), 500) }
