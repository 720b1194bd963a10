// Package llm owns the conversation with the LLM provider: one call per
// review chunk through one small interface (Provider) with three families
// behind it — OpenAI-compatible Chat Completions (OpenAI, Azure OpenAI, vLLM,
// Ollama, DeepSeek gateways), Anthropic Messages, and Amazon Bedrock Converse
// through the AWS SDK with IAM. Each has an explicit timeout, a bounded
// response, and every answer mapped onto the error classes of rule RC-6
// (shared/failure) plus a Reason (truncated, context length, refusal, quota…)
// so the llm stage can re-chunk instead of failing.
//
// The package knows nothing about reviews: it sends a Prompt and returns the
// model's content bytes. It never logs or returns the prompt, the content,
// the API key or the provider's error message; logs carry sizes, hashes,
// status codes and request ids.
package llm

import (
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

// DefaultMaxResponseBytes bounds the HTTP response body read from the provider.
const DefaultMaxResponseBytes = 4 << 20

// DefaultMaxTokens is the output budget sent when Config.MaxTokens is unset.
// Anthropic and Bedrock require one; a ReviewResult for one chunk fits well
// inside it.
const DefaultMaxTokens = 4096

// Provider family names (LLM_PROVIDER).
const (
	OpenAI    = "openai"
	Anthropic = "anthropic"
	Bedrock   = "bedrock"
)

// Response formats for OpenAI-compatible endpoints (LLM_RESPONSE_FORMAT;
// FormatAuto and FormatJSONObjectSchema are in capabilities.go).
const (
	// FormatJSONSchema sends response_format json_schema with the ReviewResult
	// schema (OpenAI, Azure OpenAI, vLLM, Ollama).
	FormatJSONSchema = "json_schema"
	// FormatJSONObject sends response_format json_object (DeepSeek and older
	// servers): valid JSON is enforced, the shape only by the prompt, whose
	// text states the output contract in every prompt version (1.2.0 carries
	// the schema verbatim). The client never adds to the prompt's text: that
	// would be a new prompt_version.
	FormatJSONObject = "json_object"
)

// Provider is what the llm stage needs from a model: one completion. Each
// family's client, the Limiter's wrapper and the tests' fakes implement it.
type Provider interface {
	Complete(ctx context.Context, p Prompt) (Completion, error)
}

// ProviderFunc adapts a function to Provider.
type ProviderFunc func(ctx context.Context, p Prompt) (Completion, error)

// Complete calls f.
func (f ProviderFunc) Complete(ctx context.Context, p Prompt) (Completion, error) { return f(ctx, p) }

// Config is the non-secret configuration of a provider client.
type Config struct {
	// Endpoint is the provider's BASE URL (scheme and host, optionally a
	// path prefix such as an Azure deployment or a gateway prefix); the
	// client appends the API path: /v1/chat/completions (openai),
	// /v1/messages (anthropic). For bedrock it overrides the SDK's regional
	// endpoint and is usually empty.
	Endpoint string
	// Model is the model (or Bedrock model id / inference profile).
	Model string
	// Timeout bounds one Complete call, connection to last byte. Required:
	// the llm stage must never wait on the provider longer than its lease.
	Timeout time.Duration
	// MaxTokens is the output budget; 0 means DefaultMaxTokens.
	MaxTokens int
	// ResponseFormat is FormatAuto (default), FormatJSONSchema,
	// FormatJSONObjectSchema or FormatJSONObject; openai only.
	ResponseFormat string
	// Schema is the JSON schema sent with FormatJSONSchema and FormatJSONObjectSchema.
	Schema json.RawMessage
	// AnthropicVersion is the anthropic-version header; empty means 2023-06-01.
	AnthropicVersion string
	// MaxResponseBytes bounds the response body; 0 means DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// HTTPClient sends the requests; nil means a client with no timeout of
	// its own (Timeout applies through the request context).
	HTTPClient *http.Client
	// Logger receives one record per call; nil means slog.Default().
	Logger *slog.Logger
}

// Prompt is the request: a system and a user message. It has the same fields
// as result.Prompt, which converts to it directly.
type Prompt struct {
	System string
	User   string
	// MaxTokens, when positive, overrides Config.MaxTokens for this call (the
	// llm stage raises it after a truncated answer).
	MaxTokens int
}

// Usage is the provider's token accounting for one call, normalized across
// families: InputTokens counts every input token, cached or not (OpenAI's
// prompt_tokens already does; Anthropic's and Bedrock's input tokens exclude
// the cache reads and writes, which are added in).
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	// CachedInputTokens were read from the provider's prompt cache, billed at
	// a fraction of the base price (OpenAI prompt_tokens_details.cached_tokens,
	// Anthropic cache_read_input_tokens, Bedrock cacheReadInputTokens).
	CachedInputTokens int `json:"cached_input_tokens,omitempty"`
	// CacheWriteInputTokens were written to the cache (Anthropic
	// cache_creation_input_tokens, Bedrock cacheWriteInputTokens), billed at
	// or above the base price; they are part of the uncached input.
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
	// Content is the model's text answer, unparsed.
	Content []byte
	// RequestID is the provider's request id, for support tickets and
	// dead-letter context.
	RequestID    string
	Model        string
	FinishReason string
	Usage        Usage
	// RateLimit is what the answer's headers said about the limits.
	RateLimit RateLimit
	// RateLimited and Waited are what a Limiter met on the way to this
	// answer: the provider's 429s it waited out, and the time it waited.
	RateLimited int
	Waited      time.Duration
	// ResponseFormat is the structured-output form the answer was asked in
	// (openai: one of formsBestFirst; empty for the other families).
	ResponseFormat string
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
	// build returns the client; nil until the family's package registers
	// it (Register).
	build func(cfg Config, cred Credentials) (Provider, error)
}

// Credentials are what a client authenticates with: the API key (read by
// the caller from Secrets Manager) or the AWS configuration (region and the
// role's credentials), as its Family says.
type Credentials struct {
	APIKey string
	AWS    aws.Config
}

// families are the provider families by name: adding a provider is its
// client and a row here (docs/development.md, "Add an LLM provider").
var families = map[string]*Family{
	OpenAI:    {build: func(cfg Config, c Credentials) (Provider, error) { return NewOpenAI(cfg, c.APIKey) }},
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
	if provider == "" {
		provider = OpenAI
	}
	f, ok := families[provider]
	if !ok {
		return Family{}, false
	}
	return *f, true
}

// Register sets how a family declared in families is built, for a family
// in its own package (called from its init).
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
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	return base{cfg: cfg, provider: provider, url: strings.TrimRight(u.String(), "/") + path,
		apiKey: apiKey, http: hc, log: cfg.Logger}, nil
}

// WithDefaults checks what every family requires (a timeout, a model) and
// fills in MaxTokens and Logger.
func (cfg Config) WithDefaults() (Config, error) {
	if cfg.Timeout <= 0 {
		return cfg, failure.Errorf(failure.InternalBug, "llm: config: Timeout must be positive")
	}
	if cfg.Model == "" {
		return cfg, failure.Errorf(failure.InternalBug, "llm: config: Model is empty")
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = DefaultMaxTokens
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return cfg, nil
}

// apiPaths are what each family appends to the base URL.
var apiPaths = map[string]string{OpenAI: "/v1/chat/completions", Anthropic: "/v1/messages"}

// ValidateEndpoint checks that endpoint is a base URL for provider: http(s),
// no credentials, no query, and not already ending in the API path the
// client appends (an endpoint of ".../v1/chat/completions" would be doubled).
// Errors never echo the endpoint: a URL with credentials is a secret.
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
	return slog.GroupValue(slog.String("provider", b.provider), slog.String("model", b.cfg.Model), slog.String("endpoint_host", b.host()))
}

func (b *base) host() string {
	if u, err := url.Parse(b.url); err == nil {
		return u.Host
	}
	return ""
}

func (b *base) maxTokens(p Prompt) int {
	if p.MaxTokens > 0 {
		return p.MaxTokens
	}
	return b.cfg.MaxTokens
}

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

// TransportError classes a failure to get a full response. A caller's
// cancellation is returned as its cause, unclassed; everything else (our
// timeout, DNS, refused or reset connections) is NETWORK_TIMEOUT.
func TransportError(ctx context.Context, timeout time.Duration, err error) error {
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
		return failure.Errorf(failure.NetworkTimeout, "llm: no complete response within %s: %w", timeout, err)
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
