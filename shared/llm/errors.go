package llm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/criticizer/criticizer/shared/failure"
)

// apiError is the provider's error envelope: {"error":{"code","type","message"}}.
// code is a string for OpenAI and some compatibles, a number for others.
type apiError struct {
	Error struct {
		Code json.RawMessage `json:"code"`
		Type string          `json:"type"`
	} `json:"error"`
}

func (e apiError) code() string {
	var s string
	if json.Unmarshal(e.Error.Code, &s) == nil {
		return s
	}
	return strings.Trim(string(e.Error.Code), `"`)
}

// statusError classes a non-2xx answer. The provider's error code wins over
// the status where rule RC-6 names it (rate_limit_exceeded, internal_error,
// content policy); otherwise the status decides:
//
//	429                    RATE_LIMITED (Retry-After kept)
//	500, other 5xx         UPSTREAM_5XX
//	502, 503, 504, 408     NETWORK_TIMEOUT
//	401, 403               AUTH_DENIED
//	400 content policy     POLICY_REJECTED
//	other 4xx              SCHEMA_INVALID (our request is wrong; retrying cannot help)
//
// The provider's message is never included: for 401 it quotes part of the key.
func statusError(resp *http.Response, body []byte, reqID string) error {
	var ae apiError
	_ = json.Unmarshal(body, &ae) // a non-JSON error body leaves code and type empty
	code, typ := clip(ae.code(), 64), clip(ae.Error.Type, 64)
	status := resp.StatusCode
	retryAfter := parseRetryAfter(resp.Header, time.Now())

	var class failure.Class
	switch {
	case status == http.StatusTooManyRequests || code == "rate_limit_exceeded" || typ == "rate_limit_exceeded":
		class = failure.RateLimited
	case code == "internal_error" || typ == "internal_error":
		class = failure.Upstream5xx
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		class = failure.AuthDenied
	case status >= 400 && status < 500 && isPolicy(code, typ):
		class = failure.PolicyRejected
	case status == http.StatusBadGateway || status == http.StatusServiceUnavailable ||
		status == http.StatusGatewayTimeout || status == http.StatusRequestTimeout:
		class = failure.NetworkTimeout
	case status >= 500:
		class = failure.Upstream5xx
	default:
		class = failure.SchemaInvalid
	}
	return &failure.Error{
		Class:        class,
		RetryAfter:   retryAfter,
		UpstreamCode: status,
		Err:          fmt.Errorf("llm: provider answered %d (code %q, type %q, request %s)", status, code, typ, reqID),
	}
}

func isPolicy(code, typ string) bool {
	for _, s := range []string{code, typ} {
		switch s {
		case "content_policy_violation", "content_filter":
			return true
		}
	}
	return false
}

// parseRetryAfter reads Retry-After as delay-seconds or an HTTP date, falling
// back to the retry-after-ms header some providers send. Unparseable or past
// values give 0, which leaves the delay to the backoff policy.
func parseRetryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if secs, err := strconv.ParseFloat(v, 64); err == nil {
			return clampRetryAfter(secs)
		}
		if t, err := http.ParseTime(v); err == nil {
			if d := t.Sub(now); d > 0 {
				return d
			}
			return 0
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return clampRetryAfter(ms / 1000)
		}
	}
	return 0
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

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
