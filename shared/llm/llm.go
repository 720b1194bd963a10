// Package llm owns the conversation with the LLM provider: one call per
// review chunk through one interface (Provider) with three families behind
// it — OpenAI-compatible Chat Completions (OpenAI, Azure OpenAI, vLLM,
// Ollama, DeepSeek gateways), Anthropic Messages, and Amazon Bedrock Converse
// (AWS SDK, IAM). Each has an explicit timeout, a bounded response, and
// every answer mapped onto rule RC-6's error classes plus a Reason, so the
// llm stage can re-chunk instead of failing. It never logs or returns the
// prompt, the content, the API key or the provider's error message.
package llm

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/criticizer/criticizer/shared/failure"
)

const (
	MaxResponseBytes = 4 << 20 // response body read from the provider
	// DefaultMaxTokens is the output budget when Config.MaxTokens is unset
	// (Anthropic and Bedrock require one).
	DefaultMaxTokens = 4096
)

// Provider family names (LLM_PROVIDER).
const (
	OpenAI    = "openai"
	Anthropic = "anthropic"
	Bedrock   = "bedrock"
)

// Response formats for OpenAI-compatible endpoints (LLM_RESPONSE_FORMAT;
// FormatAuto and FormatJSONObjectSchema are in capabilities.go).
const (
	// FormatJSONSchema sends the ReviewResult schema (OpenAI, Azure, vLLM, Ollama).
	FormatJSONSchema = "json_schema"
	// FormatJSONObject (DeepSeek, older servers) enforces valid JSON; the
	// shape only the prompt states (the client never adds to its text: that
	// would be a new prompt_version).
	FormatJSONObject = "json_object"
)

// Provider is what the llm stage needs from a model: one completion.
type Provider interface {
	Complete(ctx context.Context, p Prompt) (Completion, error)
}

// ProviderFunc adapts a function to Provider.
type ProviderFunc func(ctx context.Context, p Prompt) (Completion, error)

// Complete calls f.
func (f ProviderFunc) Complete(ctx context.Context, p Prompt) (Completion, error) { return f(ctx, p) }

// Config is the non-secret configuration of a provider client.
type Config struct {
	// Endpoint is the provider's base URL (an Azure deployment or gateway
	// prefix allowed); the client appends the API path (apiPaths). For
	// bedrock it overrides the SDK's regional endpoint.
	Endpoint string
	Model    string // or Bedrock model id / inference profile
	// Timeout bounds one Complete call, connection to last byte. Required:
	// the stage must never wait on the provider longer than its lease.
	Timeout        time.Duration
	MaxTokens      int             // 0 means DefaultMaxTokens
	ResponseFormat string          // openai only: FormatAuto (default) or a form
	Schema         json.RawMessage // sent with FormatJSONSchema and FormatJSONObjectSchema
	Logger         *slog.Logger    // one record per call; nil means slog.Default()
}

// Prompt is the request (result.Prompt converts to it directly).
type Prompt struct {
	System, User string
	MaxTokens    int // when positive, overrides Config.MaxTokens
}

// Usage is one call's token accounting, normalized: InputTokens counts every
// input token, cached or not (Anthropic's and Bedrock's cache reads and
// writes are added in).
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	// CachedInputTokens were read from the prompt cache, billed at a fraction.
	CachedInputTokens int `json:"cached_input_tokens,omitempty"`
	// CacheWriteInputTokens were written to it, billed at or above the base
	// price; part of the uncached input.
	CacheWriteInputTokens int `json:"cache_write_input_tokens,omitempty"`
}

// UncachedInputTokens is the input billed at (or above) the base price.
func (u Usage) UncachedInputTokens() int { return u.InputTokens - u.CachedInputTokens }

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{InputTokens: u.InputTokens + v.InputTokens, OutputTokens: u.OutputTokens + v.OutputTokens,
		CachedInputTokens:     u.CachedInputTokens + v.CachedInputTokens,
		CacheWriteInputTokens: u.CacheWriteInputTokens + v.CacheWriteInputTokens}
}

// Completion is a successful answer.
type Completion struct {
	Content      []byte // the model's text answer, unparsed
	RequestID    string
	Model        string
	FinishReason string
	Usage        Usage
	RateLimit    RateLimit // what the answer's headers said
	// RateLimited and Waited: the 429s a Limiter waited out, and how long.
	RateLimited    int
	Waited         time.Duration
	ResponseFormat string // openai: the form asked in (formsBestFirst)
}

// Family is one provider family (an LLM_PROVIDER value): how its client
// authenticates and is built.
type Family struct {
	// AWS says the client signs with the function's IAM role (an AWS
	// service: the SDK resolves the regional endpoint, LLM_ENDPOINT only
	// overrides it); otherwise it sends an API key read from LLM_SECRET_ID
	// to the required LLM_ENDPOINT.
	AWS bool
	// For an AWS family, what infra grants its callers: the service's VPC
	// interface endpoint (Endpoint), the IAM action a model call needs
	// (Invoke) and the ARNs of a model it is granted on (ModelARNs, as
	// CloudFormation ${AWS::…} templates).
	Endpoint, Invoke string
	ModelARNs        func(model string) []string
	// ResponseFormat: the family takes LLM_RESPONSE_FORMAT (the structured
	// output forms of an OpenAI-compatible server); synth refuses it for others.
	ResponseFormat bool
	// build returns the client; nil until the family's package registers
	// it (Register).
	build func(cfg Config, cred Credentials) (Provider, error)
}

// Credentials are the API key (from Secrets Manager) or the AWS
// configuration, as the Family says.
type Credentials struct {
	APIKey string
	AWS    aws.Config
}

// families are the provider families by name: adding a provider is its
// client and a row here (docs/development.md, "Add an LLM provider").
var families = map[string]*Family{
	OpenAI:    {ResponseFormat: true, build: func(cfg Config, c Credentials) (Provider, error) { return NewOpenAI(cfg, c.APIKey) }},
	Anthropic: {build: func(cfg Config, c Credentials) (Provider, error) { return NewAnthropic(cfg, c.APIKey) }},
	// Built by shared/llm/bedrock, which registers itself: only binaries
	// that import it link the Bedrock SDK.
	// Converse is authorized as bedrock:InvokeModel.
	Bedrock: {AWS: true, Endpoint: "bedrock-runtime", Invoke: "bedrock:InvokeModel", ModelARNs: bedrockModelARNs},
}

// bedrockModelARNs: the foundation model (in any region, for inference
// profiles that route across regions) and, for a geographic inference
// profile id ("eu.…"), the profile itself.
func bedrockModelARNs(model string) []string {
	base, profile := model, false
	for _, geo := range []string{"us.", "eu.", "apac.", "us-gov.", "global."} {
		if rest, ok := strings.CutPrefix(model, geo); ok {
			base, profile = rest, true
		}
	}
	out := []string{"arn:${AWS::Partition}:bedrock:*::foundation-model/" + base}
	if profile {
		out = append(out, "arn:${AWS::Partition}:bedrock:${AWS::Region}:${AWS::AccountId}:inference-profile/"+model)
	}
	return out
}

// FamilyOf is provider's family ("" is openai, the default).
func FamilyOf(provider string) (Family, bool) {
	provider = cmp.Or(provider, OpenAI)
	f, ok := families[provider]
	if !ok {
		return Family{}, false
	}
	return *f, true
}

// Register sets how a family declared in families is built (from its init).
func Register(provider string, build func(cfg Config, cred Credentials) (Provider, error)) {
	families[provider].build = build
}

// New returns the client for cfg's provider family.
func New(provider string, cfg Config, cred Credentials) (Provider, error) {
	f, ok := FamilyOf(provider)
	switch {
	case !ok:
		return nil, failure.Errorf(failure.InternalBug, "llm: config: provider %q is not openai, anthropic or bedrock", provider)
	case f.build == nil:
		return nil, failure.Errorf(failure.InternalBug, "llm: provider %q is not linked into this binary (import shared/llm/%s)", provider, provider)
	}
	return f.build(cfg, cred)
}

// base is what the HTTP clients share.
type base struct {
	cfg      Config
	provider string
	url      string
	host     string // the endpoint's, for logs
	apiKey   string
	http     *http.Client
	log      *slog.Logger
}

func newBase(provider string, cfg Config, apiKey, path string) (base, error) {
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return base{}, err
	}
	if apiKey == "" {
		return base{}, failure.Errorf(failure.AuthDenied, "llm: API key is empty")
	}
	u, err := ValidateEndpoint(provider, cfg.Endpoint)
	if err != nil {
		return base{}, err
	}
	// No timeout of its own: Timeout applies through the request context.
	return base{cfg: cfg, provider: provider, url: strings.TrimRight(u.String(), "/") + path, host: u.Host,
		apiKey: apiKey, http: &http.Client{}, log: cfg.Logger}, nil
}

// WithDefaults checks a timeout and a model and fills in MaxTokens and Logger.
func (cfg Config) WithDefaults() (Config, error) {
	if cfg.Timeout <= 0 {
		return cfg, failure.Errorf(failure.InternalBug, "llm: config: Timeout must be positive")
	}
	if cfg.Model == "" {
		return cfg, failure.Errorf(failure.InternalBug, "llm: config: Model is empty")
	}
	cfg.MaxTokens = cmp.Or(max(cfg.MaxTokens, 0), DefaultMaxTokens)
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	return cfg, nil
}

// apiPaths are what each family appends to the base URL.
var apiPaths = map[string]string{OpenAI: "/v1/chat/completions", Anthropic: "/v1/messages"}

// ValidateEndpoint checks endpoint is a base URL: http(s), no credentials or
// query, not ending in the API path the client appends. Errors never echo
// it: a URL with credentials is a secret.
func ValidateEndpoint(provider, endpoint string) (*url.URL, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" {
		return nil, failure.Errorf(failure.InternalBug, "llm: config: LLM_ENDPOINT must be an http(s) base URL without credentials or query")
	}
	p := strings.TrimRight(u.Path, "/")
	for _, suffix := range []string{"/chat/completions", "/messages", "/converse"} {
		if strings.HasSuffix(p, suffix) {
			return nil, failure.Errorf(failure.InternalBug,
				"llm: config: LLM_ENDPOINT is a base URL; drop the API path %q (the %s client appends %s)", suffix, provider, apiPaths[provider])
		}
	}
	if provider == OpenAI && strings.HasSuffix(p, "/v1") {
		return nil, failure.Errorf(failure.InternalBug, "llm: config: LLM_ENDPOINT is a base URL; drop the trailing /v1 (the client appends /v1/chat/completions)")
	}
	return u, nil
}

// String keeps the key out of %v and %+v output.
func (b *base) String() string {
	return fmt.Sprintf("llm %s client{model=%s}", b.provider, b.cfg.Model)
}

// LogValue keeps the key out of logs when a client is logged.
func (b *base) LogValue() slog.Value {
	return slog.GroupValue(slog.String("provider", b.provider), slog.String("model", b.cfg.Model), slog.String("endpoint_host", b.host))
}

func (b *base) maxTokens(p Prompt) int { return cmp.Or(max(p.MaxTokens, 0), b.cfg.MaxTokens) }

// LogCall writes the one record per call. Never the prompt, content or key.
func LogCall(ctx context.Context, lg *slog.Logger, provider, model string, p Prompt, start time.Time, comp Completion, status int, err error) {
	attrs := []slog.Attr{
		slog.String("provider", provider),
		slog.String("model", model),
		slog.Int("prompt_bytes", len(p.System)+len(p.User)),
		slog.String("prompt_sha256", shortHash([]byte(p.System+"\x00"+p.User))),
		slog.Int("status", status),
		slog.Duration("duration", time.Since(start)),
		slog.String("request_id", comp.RequestID),
	}
	if err != nil {
		if e, ok := Details(err); ok {
			attrs = append(attrs, slog.String("request_id_error", e.RequestID), slog.String("reason", string(e.Reason)))
		}
		lg.LogAttrs(ctx, slog.LevelWarn, "llm completion failed",
			append(attrs, slog.String("error_class", string(failure.Classify(err))), slog.String("error", err.Error()))...)
		return
	}
	lg.LogAttrs(ctx, slog.LevelInfo, "llm completion",
		append(attrs,
			slog.Int("content_bytes", len(comp.Content)),
			slog.String("content_sha256", shortHash(comp.Content)),
			slog.String("finish_reason", comp.FinishReason),
			slog.Int("input_tokens", comp.Usage.InputTokens),
			slog.Int("cached_input_tokens", comp.Usage.CachedInputTokens),
			slog.Int("output_tokens", comp.Usage.OutputTokens))...)
}

// TransportError classes a failure to get a full response: NETWORK_TIMEOUT,
// except a caller's cancellation, returned as its cause, unclassed.
func TransportError(ctx context.Context, timeout time.Duration, err error) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return fmt.Errorf("llm: request cancelled: %w", context.Cause(ctx))
	}
	// *url.Error repeats the URL: keep only the underlying error.
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return failure.Errorf(failure.NetworkTimeout, "llm: no complete response within %s: %w", timeout, err)
	}
	return failure.Errorf(failure.NetworkTimeout, "llm: transport: %w", err)
}

// errSyntax reduces a JSON error to its position (the message may quote bytes).
func errSyntax(err error) error {
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		return fmt.Errorf("invalid JSON at byte offset %d", se.Offset)
	}
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		return fmt.Errorf("unexpected %s for field %s", te.Value, te.Field)
	}
	return errors.New("invalid JSON")
}

func shortHash(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:8])
}
