package llm

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
)

// AnthropicVersion is the anthropic-version header sent.
const AnthropicVersion = "2023-06-01"

// AnthropicClient speaks the Anthropic Messages API (x-api-key,
// anthropic-version); no response_format: the prompt asks for JSON. It is
// safe for concurrent use.
type AnthropicClient struct{ base }

// NewAnthropic returns an Anthropic Messages client authenticating with apiKey.
func NewAnthropic(cfg Config, apiKey string) (*AnthropicClient, error) {
	b, err := newBase(Anthropic, cfg, apiKey, apiPaths[Anthropic])
	if err != nil {
		return nil, err
	}
	return &AnthropicClient{b}, nil
}

type anthropicRequest struct {
	Model       string             `json:"model"`
	MaxTokens   int                `json:"max_tokens"`
	System      []anthropicBlock   `json:"system,omitempty"`
	Messages    []anthropicMessage `json:"messages"`
	Temperature float64            `json:"temperature"`
}

type anthropicMessage struct {
	Role    string           `json:"role"`
	Content []anthropicBlock `json:"content"`
}

type anthropicBlock struct {
	Type         string        `json:"type"`
	Text         string        `json:"text,omitempty"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

// cacheControl marks the end of a cacheable prefix (Anthropic prompt caching).
type cacheControl struct {
	Type string `json:"type"`
}

type anthropicResponse struct {
	ID         string           `json:"id"`
	Model      string           `json:"model"`
	Content    []anthropicBlock `json:"content"`
	StopReason string           `json:"stop_reason"`
	Usage      struct {
		InputTokens              int `json:"input_tokens"`
		OutputTokens             int `json:"output_tokens"`
		CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	} `json:"usage"`
}

// anthropicError is {"type":"error","error":{"type","message"},"request_id"}.
type anthropicError struct {
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	RequestID string `json:"request_id"`
}

// Complete sends p and returns the model's answer (see Client.Complete).
func (c *AnthropicClient) Complete(ctx context.Context, p Prompt) (Completion, error) {
	req := anthropicRequest{
		Model:     c.cfg.Model,
		MaxTokens: c.maxTokens(p),
		Messages:  []anthropicMessage{{Role: "user", Content: []anthropicBlock{{Type: "text", Text: p.User}}}},
	}
	if p.System != "" {
		// The static part, identical across chunks: the cacheable prefix.
		req.System = []anthropicBlock{{Type: "text", Text: p.System, CacheControl: &cacheControl{Type: "ephemeral"}}}
	}
	return c.call(ctx, p, c.cfg.Timeout, req, map[string]string{"X-Api-Key": c.apiKey, "Anthropic-Version": AnthropicVersion}, c.read)
}

func (c *AnthropicClient) read(a answer) (Completion, error) {
	reqID, status := a.requestID, a.resp.StatusCode
	if status < 200 || status > 299 {
		return Completion{RequestID: reqID}, anthropicStatusError(a.resp, a.body, reqID)
	}
	var r anthropicResponse
	if err := json.Unmarshal(a.body, &r); err != nil {
		return Completion{RequestID: reqID}, Classed(failure.SchemaInvalid, 0, &Error{Provider: Anthropic,
			Reason: ReasonBadResponse, Status: status, RequestID: reqID, Detail: "not a message: " + errSyntax(err).Error()})
	}
	reqID = cmp.Or(reqID, domain.Clip(r.ID, 128))
	var text strings.Builder
	for _, b := range r.Content {
		if b.Type == "text" {
			text.WriteString(b.Text)
		}
	}
	e := &Error{Provider: Anthropic, Status: status, RequestID: reqID, Code: domain.Clip(r.StopReason, 64)}
	switch {
	case r.StopReason == "refusal":
		e.Reason, e.Refusal, e.Detail = ReasonRefusal, sanitizeRefusal(text.String()), "the model refused"
	case r.StopReason == "max_tokens":
		e.Reason, e.Detail = ReasonTruncated, fmt.Sprintf("output cut at max_tokens (%d output tokens)", r.Usage.OutputTokens)
	case r.StopReason == "tool_use":
		e.Reason, e.Detail = ReasonBadResponse, "the model asked for a tool; none was offered"
	case text.Len() == 0:
		e.Reason, e.Detail = ReasonBadResponse, "no text content block"
	}
	if e.Reason != "" {
		return Completion{RequestID: reqID}, Classed(ClassFor(e.Reason), 0, e)
	}
	return Completion{
		Content: []byte(text.String()), RequestID: reqID, Model: r.Model, FinishReason: r.StopReason,
		// input_tokens counts only what follows the last cache marker.
		Usage: Usage{InputTokens: r.Usage.InputTokens + r.Usage.CacheCreationInputTokens + r.Usage.CacheReadInputTokens,
			OutputTokens: r.Usage.OutputTokens, CachedInputTokens: r.Usage.CacheReadInputTokens,
			CacheWriteInputTokens: r.Usage.CacheCreationInputTokens},
	}, nil
}

// anthropicStatusError classes an Anthropic error answer by error.type:
//
//	rate_limit_error (429)                   RATE_LIMITED, Retry-After kept
//	overloaded_error (529), api_error (500)  UPSTREAM_5XX (transient)
//	timeout_error (504)                      NETWORK_TIMEOUT
//	authentication_error, permission_error   AUTH_DENIED
//	billing_error                            quota: AUTH_DENIED, operator needed
//	request_too_large (413), or a 400 whose  context length: re-chunk smaller
//	  message says the prompt is too long
//	other                                    SCHEMA_INVALID
func anthropicStatusError(resp *http.Response, body []byte, reqID string) error {
	var ae anthropicError
	_ = json.Unmarshal(body, &ae)
	typ, status := domain.Clip(ae.Error.Type, 64), resp.StatusCode
	reqID = cmp.Or(reqID, domain.Clip(ae.RequestID, 128))
	e := &Error{Provider: Anthropic, Status: status, Type: typ, RequestID: reqID}
	retryAfter := parseRetryAfter(resp.Header, time.Now())
	switch {
	case typ == "billing_error":
		e.Reason, e.Detail = ReasonQuota, "the Anthropic account's credit or billing is exhausted; retrying cannot help until an operator acts"
	case typ == "rate_limit_error" || status == http.StatusTooManyRequests:
		e.Reason = ReasonRateLimited
		e.RetryAfterHeader, _ = explicitRetryAfter(resp.Header, time.Now())
	case typ == "overloaded_error" || typ == "api_error" || status == 529 || status == http.StatusInternalServerError:
		e.Reason = ReasonUpstream
	case typ == "timeout_error" || status == http.StatusGatewayTimeout || status == http.StatusBadGateway || status == http.StatusServiceUnavailable:
		e.Reason = ReasonUpstream
		return Classed(failure.NetworkTimeout, retryAfter, e)
	case typ == "authentication_error" || typ == "permission_error" || status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Reason = ReasonAuth
	case typ == "request_too_large" || status == http.StatusRequestEntityTooLarge ||
		(status == http.StatusBadRequest && MentionsContextLength(ae.Error.Message)):
		e.Reason = ReasonContextLength
	case status >= 500:
		e.Reason = ReasonUpstream
	default:
		e.Reason = ReasonBadRequest
	}
	return Classed(ClassFor(e.Reason), retryAfter, e)
}
