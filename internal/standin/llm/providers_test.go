package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/criticizer/criticizer/internal/standin/llm"
	"github.com/criticizer/criticizer/shared/failure"
	llmclient "github.com/criticizer/criticizer/shared/llm"
	"github.com/criticizer/criticizer/shared/llm/bedrock"
	"github.com/criticizer/criticizer/shared/result"
)

// providerClient builds the real client for format against the stand-in at url.
func providerClient(t *testing.T, format, url string, logs *bytes.Buffer) llmclient.Provider {
	t.Helper()
	cfg := llmclient.Config{Endpoint: url, Model: "review-model", Timeout: 5 * time.Second, Schema: result.SchemaJSON(),
		Logger: slog.New(slog.NewJSONHandler(logs, nil))}
	switch format {
	case llm.FormatBedrock:
		cfg.Model = "anthropic.claude-3-5-sonnet-20240620-v1:0"
		c, err := bedrock.New(cfg, aws.Config{Region: "us-east-1",
			Credentials: credentials.NewStaticCredentialsProvider("AKIDSTANDINFIXTURE", "fixture-secret", "")})
		if err != nil {
			t.Fatal(err)
		}
		return c
	case llm.FormatAnthropic:
		c, err := llmclient.NewAnthropic(cfg, key)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c, err := llmclient.NewOpenAI(cfg, key)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestProviderAnswers runs every row of the reference's provider table
// (docs/reference/llm-providers.md) through the real client against the
// stand-in speaking that provider's wire format.
func TestProviderAnswers(t *testing.T) {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	tests := []struct {
		format     string
		row        string
		fault      *llm.Fault
		class      failure.Class // "" = success
		reason     llmclient.Reason
		retryAfter time.Duration
		refusal    string
	}{
		// OpenAI Chat Completions and compatibles (Azure, vLLM, Ollama, DeepSeek).
		{llm.FormatOpenAI, "200 stop", nil, "", "", 0, ""},
		{llm.FormatOpenAI, "200 refusal", &llm.Fault{Refusal: "I can't help with reviewing this code."}, failure.PolicyRejected, llmclient.ReasonRefusal, 0, "I can't help with reviewing this code."},
		{llm.FormatOpenAI, "200 finish length", &llm.Fault{FinishReason: "length"}, failure.SchemaInvalid, llmclient.ReasonTruncated, 0, ""},
		{llm.FormatOpenAI, "200 content_filter (Azure)", &llm.Fault{FinishReason: "content_filter"}, failure.PolicyRejected, llmclient.ReasonContentFilter, 0, ""},
		{llm.FormatOpenAI, "400 content_filter type null (Azure)", &llm.Fault{Status: 400, Body: raw(`{"error":{"code":"content_filter","type":null,"message":"The response was filtered","param":"prompt"}}`)}, failure.PolicyRejected, llmclient.ReasonContentFilter, 0, ""},
		{llm.FormatOpenAI, "400 context_length_exceeded", &llm.Fault{Status: 400, Body: raw(`{"error":{"code":"context_length_exceeded","type":"invalid_request_error","param":"messages","message":"This model's maximum context length is 128000 tokens."}}`)}, failure.SchemaInvalid, llmclient.ReasonContextLength, 0, ""},
		{llm.FormatOpenAI, "400 DeepSeek context look-alike", &llm.Fault{Status: 400, Body: raw(`{"error":{"code":"invalid_request_error","type":"invalid_request_error","param":null,"message":"This model's maximum context length is 65536 tokens. However, you requested 70000 tokens."}}`)}, failure.SchemaInvalid, llmclient.ReasonContextLength, 0, ""},
		{llm.FormatOpenAI, "401 invalid_api_key quoting the key", &llm.Fault{Status: 401, Body: raw(`{"error":{"code":"invalid_api_key","type":"invalid_request_error","message":"Incorrect API key provided: sk-sta****7f3a. You can find your API key at https://platform.openai.com/account/api-keys."}}`)}, failure.AuthDenied, llmclient.ReasonAuth, 0, ""},
		{llm.FormatOpenAI, "429 tokens, only x-ratelimit-reset", &llm.Fault{Status: 429, Headers: map[string]string{"x-ratelimit-reset-requests": "12ms", "x-ratelimit-reset-tokens": "6m0s"}, Body: raw(`{"error":{"code":null,"type":"tokens","message":"Rate limit reached"}}`)}, failure.RateLimited, llmclient.ReasonRateLimited, 6 * time.Minute, ""},
		{llm.FormatOpenAI, "429 requests, x-ratelimit-reset 1s", &llm.Fault{Status: 429, Headers: map[string]string{"x-ratelimit-reset-requests": "1s"}, Body: raw(`{"error":{"code":null,"type":"requests","message":"Rate limit reached"}}`)}, failure.RateLimited, llmclient.ReasonRateLimited, time.Second, ""},
		{llm.FormatOpenAI, "429 insufficient_quota", &llm.Fault{Status: 429, Body: raw(`{"error":{"code":"insufficient_quota","type":"insufficient_quota","message":"You exceeded your current quota"}}`)}, failure.AuthDenied, llmclient.ReasonQuota, 0, ""},
		{llm.FormatOpenAI, "500 server_error", &llm.Fault{Status: 500, Body: raw(`{"error":{"code":"internal_error","type":"server_error","message":"The server had an error"}}`)}, failure.Upstream5xx, llmclient.ReasonUpstream, 0, ""},

		// Anthropic Messages.
		{llm.FormatAnthropic, "200 end_turn", nil, "", "", 0, ""},
		{llm.FormatAnthropic, "200 stop_reason max_tokens", &llm.Fault{FinishReason: "max_tokens"}, failure.SchemaInvalid, llmclient.ReasonTruncated, 0, ""},
		{llm.FormatAnthropic, "200 stop_reason refusal", &llm.Fault{Refusal: "I won't review this."}, failure.PolicyRejected, llmclient.ReasonRefusal, 0, "I won't review this."},
		{llm.FormatAnthropic, "529 overloaded_error", &llm.Fault{Status: 529}, failure.Upstream5xx, llmclient.ReasonUpstream, 0, ""},
		{llm.FormatAnthropic, "500 api_error", &llm.Fault{Status: 500}, failure.Upstream5xx, llmclient.ReasonUpstream, 0, ""},
		{llm.FormatAnthropic, "429 rate_limit_error", &llm.Fault{Status: 429, RetryAfter: "4"}, failure.RateLimited, llmclient.ReasonRateLimited, 4 * time.Second, ""},
		{llm.FormatAnthropic, "400 prompt is too long", &llm.Fault{Status: 400, Body: raw(`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"},"request_id":"req_x"}`)}, failure.SchemaInvalid, llmclient.ReasonContextLength, 0, ""},
		{llm.FormatAnthropic, "401 authentication_error", &llm.Fault{Status: 401}, failure.AuthDenied, llmclient.ReasonAuth, 0, ""},

		// Amazon Bedrock Converse.
		{llm.FormatBedrock, "200 end_turn", nil, "", "", 0, ""},
		{llm.FormatBedrock, "200 stopReason max_tokens", &llm.Fault{FinishReason: "max_tokens"}, failure.SchemaInvalid, llmclient.ReasonTruncated, 0, ""},
		{llm.FormatBedrock, "200 guardrail_intervened", &llm.Fault{FinishReason: "guardrail_intervened"}, failure.PolicyRejected, llmclient.ReasonContentFilter, 0, ""},
		{llm.FormatBedrock, "200 content_filtered", &llm.Fault{FinishReason: "content_filtered"}, failure.PolicyRejected, llmclient.ReasonContentFilter, 0, ""},
		{llm.FormatBedrock, "ThrottlingException", &llm.Fault{Status: 429, ErrorType: "ThrottlingException"}, failure.RateLimited, llmclient.ReasonRateLimited, 0, ""},
		{llm.FormatBedrock, "ModelNotReadyException", &llm.Fault{Status: 429, ErrorType: "ModelNotReadyException"}, failure.Upstream5xx, llmclient.ReasonUpstream, 0, ""},
		{llm.FormatBedrock, "ServiceUnavailableException", &llm.Fault{Status: 503, ErrorType: "ServiceUnavailableException"}, failure.Upstream5xx, llmclient.ReasonUpstream, 0, ""},
		{llm.FormatBedrock, "AccessDeniedException", &llm.Fault{Status: 403, ErrorType: "AccessDeniedException"}, failure.AuthDenied, llmclient.ReasonAuth, 0, ""},
		{llm.FormatBedrock, "ValidationException input too long", &llm.Fault{Status: 400, ErrorType: "ValidationException", Body: raw(`{"message":"Input is too long for requested model."}`)}, failure.SchemaInvalid, llmclient.ReasonContextLength, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.format+"/"+tt.row, func(t *testing.T) {
			srv, url := start(t, llm.Options{APIKey: key})
			if tt.fault != nil {
				srv.QueueFault(*tt.fault)
			}
			var logs bytes.Buffer
			c := providerClient(t, tt.format, url, &logs)
			p := reviewPrompt(changeset())
			comp, err := c.Complete(context.Background(), p)
			reqs := srv.Requests()
			if len(reqs) != 1 || reqs[0].Format != tt.format {
				t.Fatalf("stand-in saw %d requests (%+v)", len(reqs), reqs)
			}
			wantID := "req_standin_1"
			if tt.class == "" {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				if _, _, perr := result.Parse(comp.Content, changeset().ChangedFiles(), result.Options{}); perr != nil {
					t.Errorf("answer does not parse: %v", perr)
				}
				if comp.RequestID != wantID || comp.Usage.InputTokens == 0 || comp.Usage.OutputTokens == 0 {
					t.Errorf("completion = %+v", comp)
				}
				return
			}
			if got := failure.Classify(err); got != tt.class {
				t.Fatalf("class = %s, want %s (%v)", got, tt.class, err)
			}
			e, ok := llmclient.Details(err)
			if !ok || e.Reason != tt.reason {
				t.Fatalf("details = %+v, want reason %s", e, tt.reason)
			}
			if e.RequestID != wantID && e.RequestID != "req_x" {
				t.Errorf("request id = %q, want the provider's header", e.RequestID)
			}
			if e.Refusal != tt.refusal {
				t.Errorf("refusal = %q, want %q", e.Refusal, tt.refusal)
			}
			if got := failure.RetryAfter(err); got != tt.retryAfter {
				t.Errorf("retry after = %v, want %v", got, tt.retryAfter)
			}
			if want := tt.reason == llmclient.ReasonTruncated || tt.reason == llmclient.ReasonContextLength; llmclient.NeedsSmallerInput(err) != want {
				t.Errorf("NeedsSmallerInput = %v", !want)
			}
			if tt.reason == llmclient.ReasonQuota && failure.Classify(err).Retryable() {
				t.Error("insufficient_quota must not be retried")
			}
			for _, leak := range []string{"sk-sta", "7f3a", key, "fixture-secret", "CHANGED_FILES_JSON", "strcpy"} {
				if strings.Contains(err.Error(), leak) || strings.Contains(logs.String(), leak) {
					t.Errorf("error or log leaks %q: %v\n%s", leak, err, logs.String())
				}
			}
		})
	}
}

// TestProviderRequestShapes checks what each family puts on the wire.
func TestProviderRequestShapes(t *testing.T) {
	for _, format := range []string{llm.FormatOpenAI, llm.FormatAnthropic, llm.FormatBedrock} {
		t.Run(format, func(t *testing.T) {
			srv, url := start(t, llm.Options{APIKey: key})
			var logs bytes.Buffer
			p := reviewPrompt(changeset())
			if _, err := providerClient(t, format, url, &logs).Complete(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			r := srv.Requests()[0]
			if len(r.Messages) != 2 || r.Messages[0].Role != "system" || r.Messages[1].Content != p.User ||
				r.Temperature == nil || *r.Temperature != 0 || r.MaxTokens != llmclient.DefaultMaxTokens {
				t.Errorf("request = %+v", r)
			}
			switch format {
			case llm.FormatOpenAI:
				if r.Path != "/v1/chat/completions" || r.ResponseFormat != "json_schema" || !strings.HasPrefix(r.Authorization, "present") {
					t.Errorf("openai request = %s %s %s", r.Path, r.ResponseFormat, r.Authorization)
				}
			case llm.FormatAnthropic:
				if r.Path != "/v1/messages" || r.Header.Get("Anthropic-Version") != "2023-06-01" || !strings.HasPrefix(r.Authorization, "present") ||
					r.Header.Get("X-Api-Key") != "" {
					t.Errorf("anthropic request = %s %v %s", r.Path, r.Header, r.Authorization)
				}
			case llm.FormatBedrock:
				if !strings.HasSuffix(r.Path, "/converse") || r.Authorization != "sigv4 AKIDSTANDINFIXTURE" || r.Model != "anthropic.claude-3-5-sonnet-20240620-v1:0" {
					t.Errorf("bedrock request = %s %s %s", r.Path, r.Authorization, r.Model)
				}
			}
		})
	}
}
