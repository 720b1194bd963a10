package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/criticizer/criticizer/shared/failure"
)

// Client speaks OpenAI-compatible Chat Completions (POST
// {Endpoint}/v1/chat/completions, Authorization: Bearer). It is safe for
// concurrent use.
type Client struct{ base }

// NewOpenAI returns an OpenAI-compatible client authenticating with apiKey.
func NewOpenAI(cfg Config, apiKey string) (*Client, error) {
	switch cfg.ResponseFormat {
	case "":
		cfg.ResponseFormat = FormatJSONSchema
	case FormatJSONSchema, FormatJSONObject:
	default:
		return nil, failure.Errorf(failure.InternalBug, "llm: config: response format %q is not json_schema or json_object", cfg.ResponseFormat)
	}
	if cfg.ResponseFormat == FormatJSONSchema && len(cfg.Schema) == 0 {
		return nil, failure.Errorf(failure.InternalBug, "llm: config: json_schema response format needs Schema")
	}
	b, err := newBase(OpenAI, cfg, apiKey, apiPaths[OpenAI])
	if err != nil {
		return nil, err
	}
	return &Client{b}, nil
}

// String keeps the key out of %v and %+v output.
func (c *Client) String() string {
	return fmt.Sprintf("llm.Client{provider=openai model=%s}", c.cfg.Model)
}

// LogValue keeps the key out of logs when a Client is logged.
func (c *Client) LogValue() slog.Value {
	return slog.GroupValue(slog.String("provider", OpenAI), slog.String("model", c.cfg.Model), slog.String("endpoint_host", c.host()))
}

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatRequest struct {
	Model          string         `json:"model"`
	Messages       []message      `json:"messages"`
	Temperature    float64        `json:"temperature"` // always sent: 0 is the point
	MaxTokens      int            `json:"max_tokens,omitempty"`
	ResponseFormat responseFormat `json:"response_format"`
}

type responseFormat struct {
	Type       string      `json:"type"`
	JSONSchema *jsonSchema `json:"json_schema,omitempty"`
}

// jsonSchema is sent non-strict: strict mode requires every property to be
// required and forbids open objects, and the ReviewResult schema has optional
// fields and an open "meta". The parser validates either way.
type jsonSchema struct {
	Name   string          `json:"name"`
	Strict bool            `json:"strict"`
	Schema json.RawMessage `json:"schema"`
}

type chatResponse struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
			Refusal *string `json:"refusal"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		PromptTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
}

// Complete sends p and returns the model's answer. Errors are classed with
// shared/failure and carry an *Error; a cancelled ctx returns its cause
// unclassed, so a lost lease stays a lost lease.
func (c *Client) Complete(ctx context.Context, p Prompt) (Completion, error) {
	rf := responseFormat{Type: c.cfg.ResponseFormat}
	if rf.Type == FormatJSONSchema {
		rf.JSONSchema = &jsonSchema{Name: "review_result", Schema: c.cfg.Schema}
	}
	req := chatRequest{
		Model:          c.cfg.Model,
		Messages:       []message{{Role: "system", Content: p.System}, {Role: "user", Content: p.User}},
		MaxTokens:      c.maxTokens(p),
		ResponseFormat: rf,
	}
	return c.complete(ctx, p, func(ctx context.Context) (Completion, int, error) {
		a, err := c.post(ctx, req, map[string]string{"Authorization": "Bearer " + c.apiKey})
		if err != nil {
			return Completion{RequestID: a.requestID}, statusOf(a), err
		}
		comp, err := c.read(a)
		comp, err = withRateLimit(a, comp, err)
		return comp, a.resp.StatusCode, err
	})
}

func statusOf(a answer) int {
	if a.resp == nil {
		return 0
	}
	return a.resp.StatusCode
}

func (c *Client) read(a answer) (Completion, error) {
	reqID := a.requestID
	bad := func(detail string) error {
		return Classed(failure.SchemaInvalid, 0, &Error{Provider: OpenAI, Reason: ReasonBadResponse,
			Status: a.resp.StatusCode, RequestID: reqID, Detail: detail})
	}
	if a.resp.StatusCode < 200 || a.resp.StatusCode > 299 {
		return Completion{RequestID: reqID}, openAIStatusError(OpenAI, a.resp, a.body, reqID)
	}
	var cr chatResponse
	if err := json.Unmarshal(a.body, &cr); err != nil {
		return Completion{RequestID: reqID}, bad("not a chat completion: " + errSyntax(err).Error())
	}
	if reqID == "" {
		reqID = Clip(cr.ID, 128)
	}
	if len(cr.Choices) == 0 {
		// Some compatible servers answer 200 with an error envelope.
		var ae openAIError
		if json.Unmarshal(a.body, &ae) == nil && (ae.code() != "" || ae.typ() != "") {
			return Completion{RequestID: reqID}, openAIStatusError(OpenAI, &http.Response{StatusCode: http.StatusBadRequest, Header: a.resp.Header}, a.body, reqID)
		}
		return Completion{RequestID: reqID}, bad("no choices")
	}
	ch := cr.Choices[0]
	e := &Error{Provider: OpenAI, Status: a.resp.StatusCode, RequestID: reqID, Code: Clip(ch.FinishReason, 64)}
	switch {
	case ch.Message.Refusal != nil && *ch.Message.Refusal != "":
		e.Reason, e.Refusal, e.Detail = ReasonRefusal, sanitizeRefusal(*ch.Message.Refusal), "the model refused"
		return Completion{RequestID: reqID}, Classed(failure.PolicyRejected, 0, e)
	case ch.FinishReason == "content_filter":
		e.Reason, e.Detail = ReasonContentFilter, "completion stopped by the provider's content filter"
		return Completion{RequestID: reqID}, Classed(failure.PolicyRejected, 0, e)
	case ch.FinishReason == "length":
		e.Reason, e.Detail = ReasonTruncated, fmt.Sprintf("output cut at max_tokens (%d completion tokens)", cr.Usage.CompletionTokens)
		return Completion{RequestID: reqID}, Classed(failure.SchemaInvalid, 0, e)
	case ch.Message.Content == nil || *ch.Message.Content == "":
		return Completion{RequestID: reqID}, bad(fmt.Sprintf("no message content (finish_reason %q)", Clip(ch.FinishReason, 64)))
	}
	return Completion{
		Content:      []byte(*ch.Message.Content),
		RequestID:    reqID,
		Model:        cr.Model,
		FinishReason: ch.FinishReason,
		// prompt_tokens includes the cached ones; caching is automatic for a
		// stable prefix of 1,024 tokens or more (the system message first).
		Usage: Usage{InputTokens: cr.Usage.PromptTokens, OutputTokens: cr.Usage.CompletionTokens,
			CachedInputTokens: min(cr.Usage.PromptTokensDetails.CachedTokens, cr.Usage.PromptTokens)},
	}, nil
}
