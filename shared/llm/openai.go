package llm

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
)

// Client speaks OpenAI-compatible Chat Completions (Authorization: Bearer).
// It is safe for concurrent use.
type Client struct {
	base
	state         *endpointState
	grammarSchema json.RawMessage // the schema as FormatJSONObjectSchema sends it
}

// NewOpenAI returns an OpenAI-compatible client. Its structured-output form
// is cfg.ResponseFormat, or with FormatAuto the best the server accepts,
// found on the first calls and remembered per endpoint.
func NewOpenAI(cfg Config, apiKey string) (*Client, error) {
	switch cfg.ResponseFormat {
	case "":
		cfg.ResponseFormat = FormatAuto
	case FormatAuto, FormatJSONSchema, FormatJSONObjectSchema, FormatJSONObject:
	default:
		return nil, failure.Errorf(failure.InternalBug, "llm: config: response format %q is not auto, json_schema, json_object_schema or json_object", cfg.ResponseFormat)
	}
	if cfg.ResponseFormat != FormatJSONObject && len(cfg.Schema) == 0 {
		return nil, failure.Errorf(failure.InternalBug, "llm: config: response format %s needs Schema", cfg.ResponseFormat)
	}
	b, err := newBase(OpenAI, cfg, apiKey, apiPaths[OpenAI])
	if err != nil {
		return nil, err
	}
	return &Client{base: b, state: stateFor(b.url, cfg.Model, cfg.ResponseFormat), grammarSchema: grammarSchema(cfg.Schema)}, nil
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
	// Schema is llama-cpp-python's json_object schema (FormatJSONObjectSchema).
	Schema json.RawMessage `json:"schema,omitempty"`
}

// jsonSchema is sent non-strict: strict mode forbids optional fields and the
// open "meta" the ReviewResult schema has. The parser validates either way.
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

// Complete sends p and returns the model's answer; errors are classed and
// carry an *Error (a cancelled ctx returns its cause unclassed). With
// FormatAuto a refused response format is retried at once with the next form.
func (c *Client) Complete(ctx context.Context, p Prompt) (Completion, error) {
	form := c.state.current()
	for {
		comp, err := c.completeAs(ctx, p, form)
		if err == nil || !refusesFormat(err) {
			return comp, err
		}
		next, ok := c.state.stepDown(form)
		if !ok {
			return comp, err
		}
		c.log.WarnContext(ctx, "llm server refused the response format; using the next form", "refused", form, "next", next,
			"endpoint_host", c.host)
		form = next
	}
}

// completeAs sends p with the structured-output form form.
func (c *Client) completeAs(ctx context.Context, p Prompt, form string) (Completion, error) {
	rf := responseFormat{Type: form}
	switch form {
	case FormatJSONSchema:
		rf.JSONSchema = &jsonSchema{Name: "review_result", Schema: c.cfg.Schema}
	case FormatJSONObjectSchema:
		rf.Type, rf.Schema = FormatJSONObject, c.grammarSchema
	}
	req := chatRequest{
		Model:          c.cfg.Model,
		Messages:       []message{{Role: "system", Content: p.System}, {Role: "user", Content: p.User}},
		MaxTokens:      c.maxTokens(p),
		ResponseFormat: rf,
	}
	c.state.mu.Lock()
	// Prompt tokens at 4 bytes each: precise enough for a timeout.
	timeout := c.state.pace.timeout(c.cfg.Timeout, (len(p.System)+len(p.User))/4, req.MaxTokens)
	c.state.mu.Unlock()
	start := time.Now()
	comp, err := c.call(ctx, p, timeout, req, map[string]string{"Authorization": "Bearer " + c.apiKey}, c.read)
	if err == nil {
		comp.ResponseFormat = form
		c.state.mu.Lock()
		c.state.pace.observe(comp.Usage, time.Since(start))
		c.state.mu.Unlock()
	}
	return comp, err
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
	reqID = cmp.Or(reqID, domain.Clip(cr.ID, 128))
	if len(cr.Choices) == 0 {
		// Some compatible servers answer 200 with an error envelope.
		var ae openAIError
		if json.Unmarshal(a.body, &ae) == nil && (ae.code() != "" || ae.Error.Type != "") {
			return Completion{RequestID: reqID}, openAIStatusError(OpenAI, &http.Response{StatusCode: http.StatusBadRequest, Header: a.resp.Header}, a.body, reqID)
		}
		return Completion{RequestID: reqID}, bad("no choices")
	}
	ch := cr.Choices[0]
	e := &Error{Provider: OpenAI, Status: a.resp.StatusCode, RequestID: reqID, Code: domain.Clip(ch.FinishReason, 64)}
	switch {
	case ch.Message.Refusal != nil && *ch.Message.Refusal != "":
		e.Reason, e.Refusal, e.Detail = ReasonRefusal, sanitizeRefusal(*ch.Message.Refusal), "the model refused"
	case ch.FinishReason == "content_filter":
		e.Reason, e.Detail = ReasonContentFilter, "completion stopped by the provider's content filter"
	case ch.FinishReason == "length":
		e.Reason, e.Detail = ReasonTruncated, fmt.Sprintf("output cut at max_tokens (%d completion tokens)", cr.Usage.CompletionTokens)
	case ch.Message.Content == nil || *ch.Message.Content == "":
		return Completion{RequestID: reqID}, bad(fmt.Sprintf("no message content (finish_reason %q)", domain.Clip(ch.FinishReason, 64)))
	}
	if e.Reason != "" {
		return Completion{RequestID: reqID}, Classed(ClassFor(e.Reason), 0, e)
	}
	return Completion{
		Content:      []byte(*ch.Message.Content),
		RequestID:    reqID,
		Model:        cr.Model,
		FinishReason: ch.FinishReason,
		// prompt_tokens includes the cached ones (automatic for a stable prefix).
		Usage: Usage{InputTokens: cr.Usage.PromptTokens, OutputTokens: cr.Usage.CompletionTokens,
			CachedInputTokens: min(cr.Usage.PromptTokensDetails.CachedTokens, cr.Usage.PromptTokens)},
	}, nil
}
