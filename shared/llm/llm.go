// Package llm owns the conversation with the LLM provider: one OpenAI-compatible
// Chat Completions call per review, with an explicit timeout, a bounded
// response, and every failure mapped onto the error classes of rule RC-6
// (shared/failure) so the stage runtime can decide between retry and
// dead-letter without looking at HTTP details.
//
// The package knows nothing about reviews: it sends a Prompt and returns the
// model's content bytes. It never logs or returns the prompt, the content or
// the API key; logs carry sizes, hashes, status codes and request ids.
package llm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/criticizer/criticizer/shared/failure"
)

// DefaultMaxResponseBytes bounds the HTTP response body read from the provider.
const DefaultMaxResponseBytes = 4 << 20

// Config is the non-secret configuration of a Client.
type Config struct {
	// Endpoint is the provider's base URL; requests go to
	// Endpoint + "/v1/chat/completions".
	Endpoint string
	// Model is sent as the request's model.
	Model string
	// Timeout bounds one Complete call, connection to last byte. Required:
	// a review stage must never wait on the provider longer than its lease.
	Timeout time.Duration
	// MaxTokens, when positive, is sent as max_tokens.
	MaxTokens int
	// MaxResponseBytes bounds the response body; 0 means DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// HTTPClient sends the requests; nil means a client with no timeout of
	// its own (Timeout applies through the request context).
	HTTPClient *http.Client
	// Logger receives one record per call; nil means slog.Default().
	Logger *slog.Logger
}

// Prompt is the request: a system and a user message. It has the same fields
// as review.Prompt, which converts to it directly.
type Prompt struct {
	System string
	User   string
}

// Usage is the provider's token accounting for one call.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Completion is a successful answer.
type Completion struct {
	// Content is choices[0].message.content, unparsed.
	Content []byte
	// RequestID is the provider's request id (x-request-id header, else the
	// response id), for support tickets and dead-letter context.
	RequestID    string
	Model        string
	FinishReason string
	Usage        Usage
}

// Client calls the provider. It is safe for concurrent use.
type Client struct {
	cfg    Config
	url    string
	apiKey string
	http   *http.Client
	log    *slog.Logger
}

// New returns a Client for cfg authenticating with apiKey. The caller reads
// the key from its secret source (Secrets Manager) and passes it here; the
// Client keeps it only to set the Authorization header.
func New(cfg Config, apiKey string) (*Client, error) {
	if cfg.Timeout <= 0 {
		return nil, failure.Errorf(failure.InternalBug, "llm: config: Timeout must be positive")
	}
	if cfg.Model == "" {
		return nil, failure.Errorf(failure.InternalBug, "llm: config: Model is empty")
	}
	if apiKey == "" {
		return nil, failure.Errorf(failure.AuthDenied, "llm: API key is empty")
	}
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		// Never echo the endpoint: a URL with embedded credentials is a secret.
		return nil, failure.Errorf(failure.InternalBug, "llm: config: Endpoint must be an http(s) URL without credentials")
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	lg := cfg.Logger
	if lg == nil {
		lg = slog.Default()
	}
	return &Client{
		cfg:    cfg,
		url:    strings.TrimRight(cfg.Endpoint, "/") + "/v1/chat/completions",
		apiKey: apiKey,
		http:   hc,
		log:    lg,
	}, nil
}

// String keeps the key out of %v and %+v output.
func (c *Client) String() string { return fmt.Sprintf("llm.Client{model=%s}", c.cfg.Model) }

// LogValue keeps the key out of logs when a Client is logged.
func (c *Client) LogValue() slog.Value {
	return slog.GroupValue(slog.String("model", c.cfg.Model), slog.String("endpoint_host", c.host()))
}

func (c *Client) host() string {
	if u, err := url.Parse(c.url); err == nil {
		return u.Host
	}
	return ""
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
	Type string `json:"type"`
}

type chatResponse struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage Usage `json:"usage"`
}

// Complete sends p and returns the model's answer. Errors are classed with
// shared/failure (see classify); a cancelled ctx returns its cause unclassed,
// so a lost lease stays a lost lease.
func (c *Client) Complete(ctx context.Context, p Prompt) (Completion, error) {
	body, err := json.Marshal(chatRequest{
		Model:          c.cfg.Model,
		Messages:       []message{{Role: "system", Content: p.System}, {Role: "user", Content: p.User}},
		Temperature:    0,
		MaxTokens:      c.cfg.MaxTokens,
		ResponseFormat: responseFormat{Type: "json_object"},
	})
	if err != nil {
		return Completion{}, failure.Errorf(failure.InternalBug, "llm: encode request: %w", err)
	}

	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return Completion{}, failure.Errorf(failure.InternalBug, "llm: build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.apiKey)

	start := time.Now()
	attrs := []slog.Attr{
		slog.String("model", c.cfg.Model),
		slog.Int("prompt_bytes", len(p.System)+len(p.User)),
		slog.String("prompt_sha256", shortHash([]byte(p.System+"\x00"+p.User))),
	}
	comp, status, err := c.do(ctx, req)
	attrs = append(attrs,
		slog.Int("status", status),
		slog.Duration("duration", time.Since(start)),
		slog.String("request_id", comp.RequestID))
	if err != nil {
		c.log.LogAttrs(ctx, slog.LevelWarn, "llm completion failed",
			append(attrs, slog.String("error_class", string(failure.Classify(err))), slog.String("error", err.Error()))...)
		return Completion{}, err
	}
	c.log.LogAttrs(ctx, slog.LevelInfo, "llm completion",
		append(attrs,
			slog.Int("content_bytes", len(comp.Content)),
			slog.String("content_sha256", shortHash(comp.Content)),
			slog.String("finish_reason", comp.FinishReason),
			slog.Int("prompt_tokens", comp.Usage.PromptTokens),
			slog.Int("completion_tokens", comp.Usage.CompletionTokens))...)
	return comp, nil
}

func (c *Client) do(ctx context.Context, req *http.Request) (Completion, int, error) {
	resp, err := c.http.Do(req)
	if err != nil {
		return Completion{}, 0, c.transportError(ctx, err)
	}
	defer resp.Body.Close()
	reqID := resp.Header.Get("X-Request-Id")

	raw, err := io.ReadAll(io.LimitReader(resp.Body, c.cfg.MaxResponseBytes+1))
	if err != nil {
		return Completion{RequestID: reqID}, resp.StatusCode, c.transportError(ctx, err)
	}
	if int64(len(raw)) > c.cfg.MaxResponseBytes {
		return Completion{RequestID: reqID}, resp.StatusCode, failure.Errorf(failure.SchemaInvalid,
			"llm: response body over %d bytes (status %d, request %s)", c.cfg.MaxResponseBytes, resp.StatusCode, reqID)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return Completion{RequestID: reqID}, resp.StatusCode, statusError(resp, raw, reqID)
	}

	var cr chatResponse
	if err := json.Unmarshal(raw, &cr); err != nil {
		return Completion{RequestID: reqID}, resp.StatusCode, failure.Errorf(failure.SchemaInvalid,
			"llm: response is not a chat completion (request %s): %w", reqID, errSyntax(err))
	}
	if reqID == "" {
		reqID = cr.ID
	}
	if len(cr.Choices) == 0 {
		// Some compatible servers answer 200 with an error envelope.
		var ae apiError
		if json.Unmarshal(raw, &ae) == nil && (ae.code() != "" || ae.Error.Type != "") {
			return Completion{RequestID: reqID}, resp.StatusCode, statusError(resp, raw, reqID)
		}
		return Completion{RequestID: reqID}, resp.StatusCode, failure.Errorf(failure.SchemaInvalid,
			"llm: response has no choices (request %s)", reqID)
	}
	ch := cr.Choices[0]
	if ch.FinishReason == "content_filter" {
		return Completion{RequestID: reqID}, resp.StatusCode, failure.Errorf(failure.PolicyRejected,
			"llm: completion stopped by the provider's content filter (request %s)", reqID)
	}
	if ch.Message.Content == nil || *ch.Message.Content == "" {
		return Completion{RequestID: reqID}, resp.StatusCode, failure.Errorf(failure.SchemaInvalid,
			"llm: response has no message content (finish_reason %q, request %s)", ch.FinishReason, reqID)
	}
	return Completion{
		Content:      []byte(*ch.Message.Content),
		RequestID:    reqID,
		Model:        cr.Model,
		FinishReason: ch.FinishReason,
		Usage:        cr.Usage,
	}, resp.StatusCode, nil
}

// transportError classes a failure to get a full response. A caller's
// cancellation is returned as its cause, unclassed; everything else (our
// timeout, DNS, refused or reset connections) is NETWORK_TIMEOUT.
func (c *Client) transportError(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return fmt.Errorf("llm: request cancelled: %w", context.Cause(ctx))
	}
	// *url.Error repeats the URL; drop it so no endpoint detail leaks and
	// keep the underlying error for errors.Is checks.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return failure.Errorf(failure.NetworkTimeout, "llm: no complete response within %s: %w", c.cfg.Timeout, err)
	}
	return failure.Errorf(failure.NetworkTimeout, "llm: transport: %w", err)
}

// errSyntax reduces a JSON error to its position: the decoder's message can
// quote response bytes.
func errSyntax(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("invalid JSON at byte offset %d", se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("unexpected %s for field %s", te.Value, te.Field)
	}
	return errors.New("invalid JSON")
}

func shortHash(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:8])
}
