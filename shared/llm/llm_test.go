package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/failure"
)

const testKey = "sk-test-0123456789abcdef" // a fixture, not a credential

var testPrompt = Prompt{System: "system rules", User: "SECRET-PROMPT-BODY"}

func newClient(t *testing.T, url string, logs *bytes.Buffer, mut ...func(*Config)) *Client {
	t.Helper()
	cfg := Config{Endpoint: url, Model: "gpt-test", Timeout: 2 * time.Second, ResponseFormat: FormatJSONObject,
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	for _, m := range mut {
		m(&cfg)
	}
	c, err := NewOpenAI(cfg, testKey)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func okBody(content string) string {
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-test-2026",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": content}}},
		"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
	})
	return string(b)
}

func TestCompleteRequestAndResponse(t *testing.T) {
	var got struct {
		path, auth, ctype string
		body              map[string]any
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.path, got.auth, got.ctype = r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Content-Type")
		_ = json.NewDecoder(r.Body).Decode(&got.body)
		w.Header().Set("X-Request-Id", "req_abc")
		io.WriteString(w, okBody(`{"findings":[]}`))
	}))
	defer srv.Close()
	var logs bytes.Buffer
	c := newClient(t, srv.URL+"/", &logs, func(c *Config) { c.MaxTokens = 500 })

	comp, err := c.Complete(context.Background(), testPrompt)
	if err != nil {
		t.Fatal(err)
	}
	if got.path != "/v1/chat/completions" || got.auth != "Bearer "+testKey || got.ctype != "application/json" {
		t.Errorf("request = %+v", got)
	}
	wantBody := `{"max_tokens":500,"messages":[{"content":"system rules","role":"system"},{"content":"SECRET-PROMPT-BODY","role":"user"}],"model":"gpt-test","response_format":{"type":"json_object"},"temperature":0}`
	if b, _ := json.Marshal(got.body); string(b) != wantBody {
		t.Errorf("body\n got %s\nwant %s", b, wantBody)
	}
	if string(comp.Content) != `{"findings":[]}` || comp.RequestID != "req_abc" || comp.Model != "gpt-test-2026" ||
		comp.Usage.InputTokens != 10 || comp.Usage.OutputTokens != 5 || comp.FinishReason != "stop" {
		t.Errorf("completion = %+v", comp)
	}
	for _, leak := range []string{testKey, "SECRET-PROMPT-BODY", "findings"} {
		if strings.Contains(logs.String(), leak) {
			t.Errorf("log leaks %q: %s", leak, logs.String())
		}
	}
	if !strings.Contains(logs.String(), `"content_bytes":15`) {
		t.Errorf("log lacks sizes: %s", logs.String())
	}
}

func TestCompleteErrorClasses(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		headers    map[string]string
		body       string
		class      failure.Class
		retryAfter time.Duration
	}{
		{"429 seconds", 429, map[string]string{"Retry-After": "7"}, `{"error":{"code":"rate_limit_exceeded","type":"requests"}}`, failure.RateLimited, 7 * time.Second},
		{"429 ms header", 429, map[string]string{"Retry-After-Ms": "1500"}, ``, failure.RateLimited, 1500 * time.Millisecond},
		{"429 no header", 429, nil, `not json`, failure.RateLimited, 0},
		{"rate limit code on 400", 400, map[string]string{"Retry-After": "3"}, `{"error":{"code":"rate_limit_exceeded"}}`, failure.RateLimited, 3 * time.Second},
		{"500", 500, nil, `{"error":{"message":"boom","type":"server_error"}}`, failure.Upstream5xx, 0},
		{"internal_error code", 503, nil, `{"error":{"code":"internal_error"}}`, failure.Upstream5xx, 0},
		{"501", 501, nil, ``, failure.Upstream5xx, 0},
		{"502", 502, nil, `<html>bad gateway</html>`, failure.NetworkTimeout, 0},
		{"503", 503, map[string]string{"Retry-After": "2"}, ``, failure.NetworkTimeout, 2 * time.Second},
		{"504", 504, nil, ``, failure.NetworkTimeout, 0},
		{"408", 408, nil, ``, failure.NetworkTimeout, 0},
		{"401", 401, nil, `{"error":{"message":"Incorrect API key provided: sk-test-****cdef","code":"invalid_api_key"}}`, failure.AuthDenied, 0},
		{"403", 403, nil, ``, failure.AuthDenied, 0},
		{"content policy", 400, nil, `{"error":{"code":"content_policy_violation"}}`, failure.PolicyRejected, 0},
		{"content filter", 400, nil, `{"error":{"code":"content_filter","message":"x"}}`, failure.PolicyRejected, 0},
		{"numeric code", 400, nil, `{"error":{"code":400,"type":"invalid_request_error"}}`, failure.InternalBug, 0},
		{"400 other", 400, nil, `{"error":{"code":"context_length_exceeded"}}`, failure.SchemaInvalid, 0},
		{"404", 404, nil, ``, failure.SchemaInvalid, 0},
		{"422", 422, nil, ``, failure.InternalBug, 0},
		{"200 not json", 200, nil, `<html>`, failure.SchemaInvalid, 0},
		{"200 no choices", 200, nil, `{"choices":[]}`, failure.SchemaInvalid, 0},
		{"200 error envelope", 200, nil, `{"error":{"code":"internal_error"}}`, failure.Upstream5xx, 0},
		{"200 null content", 200, nil, `{"choices":[{"message":{"content":null},"finish_reason":"length"}]}`, failure.SchemaInvalid, 0},
		{"200 content filter", 200, nil, `{"choices":[{"message":{"content":""},"finish_reason":"content_filter"}]}`, failure.PolicyRejected, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tt.headers {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			var logs bytes.Buffer
			_, err := newClient(t, srv.URL, &logs).Complete(context.Background(), testPrompt)
			if err == nil {
				t.Fatal("no error")
			}
			if c := failure.Classify(err); c != tt.class {
				t.Errorf("class = %s, want %s (%v)", c, tt.class, err)
			}
			if ra := failure.RetryAfter(err); ra != tt.retryAfter {
				t.Errorf("retry after = %v, want %v", ra, tt.retryAfter)
			}
			if tt.status != 200 && failure.UpstreamCode(err) != tt.status {
				t.Errorf("upstream code = %d", failure.UpstreamCode(err))
			}
			for _, leak := range []string{testKey, "sk-test-", "SECRET-PROMPT-BODY", "cdef"} {
				if strings.Contains(err.Error(), leak) || strings.Contains(logs.String(), leak) {
					t.Errorf("error or log leaks %q: %v / %s", leak, err, logs.String())
				}
			}
		})
	}
}

func TestCompleteTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	var logs bytes.Buffer
	c := newClient(t, srv.URL, &logs, func(c *Config) { c.Timeout = 100 * time.Millisecond })
	start := time.Now()
	_, err := c.Complete(context.Background(), testPrompt)
	if failure.Classify(err) != failure.NetworkTimeout {
		t.Fatalf("err = %v, class %s", err, failure.Classify(err))
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("timeout took %v", d)
	}
}

func TestCompleteConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var logs bytes.Buffer
	_, err = newClient(t, "http://"+addr, &logs).Complete(context.Background(), testPrompt)
	if failure.Classify(err) != failure.NetworkTimeout || strings.Contains(err.Error(), "/v1/chat") {
		t.Fatalf("err = %v, class %s", err, failure.Classify(err))
	}
}

func TestCompleteConnectionReset(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}))
	defer srv.Close()
	var logs bytes.Buffer
	_, err := newClient(t, srv.URL, &logs).Complete(context.Background(), testPrompt)
	if failure.Classify(err) != failure.NetworkTimeout {
		t.Fatalf("err = %v, class %s", err, failure.Classify(err))
	}
}

func TestCompleteCallerCancelKeepsCause(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The server notices a closed connection only once the body is read.
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	defer srv.Close()
	lost := failure.Errorf(failure.LeaseLost, "lease taken over")
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(50*time.Millisecond, func() { cancel(lost) })
	var logs bytes.Buffer
	_, err := newClient(t, srv.URL, &logs).Complete(ctx, testPrompt)
	if !errors.Is(err, lost) || failure.Classify(err) != failure.LeaseLost {
		t.Fatalf("err = %v, class %s", err, failure.Classify(err))
	}
}

func TestCompleteResponseTooLarge(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, okBody(strings.Repeat("x", MaxResponseBytes)))
	}))
	defer srv.Close()
	var logs bytes.Buffer
	_, err := newClient(t, srv.URL, &logs).Complete(context.Background(), testPrompt)
	if failure.Classify(err) != failure.SchemaInvalid {
		t.Fatalf("err = %v", err)
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config
		key   string
		class failure.Class
	}{
		{"ok", Config{Endpoint: "https://llm.example", Model: "m", Timeout: time.Second, ResponseFormat: FormatJSONObject}, "k", ""},
		{"base url with prefix", Config{Endpoint: "https://gw.example/openai", Model: "m", Timeout: time.Second, ResponseFormat: FormatJSONObject}, "k", ""},
		{"api path in endpoint", Config{Endpoint: "https://llm.example/v1/chat/completions", Model: "m", Timeout: time.Second, ResponseFormat: FormatJSONObject}, "k", failure.InternalBug},
		{"trailing v1", Config{Endpoint: "https://llm.example/v1/", Model: "m", Timeout: time.Second, ResponseFormat: FormatJSONObject}, "k", failure.InternalBug},
		{"json_schema without schema", Config{Endpoint: "https://llm.example", Model: "m", Timeout: time.Second}, "k", failure.InternalBug},
		{"no timeout", Config{Endpoint: "https://llm.example", Model: "m"}, "k", failure.InternalBug},
		{"no model", Config{Endpoint: "https://llm.example", Timeout: time.Second}, "k", failure.InternalBug},
		{"no key", Config{Endpoint: "https://llm.example", Model: "m", Timeout: time.Second, ResponseFormat: FormatJSONObject}, "", failure.AuthDenied},
		{"bad scheme", Config{Endpoint: "ftp://llm.example", Model: "m", Timeout: time.Second}, "k", failure.InternalBug},
		{"credentials in url", Config{Endpoint: "https://user:pw@llm.example", Model: "m", Timeout: time.Second}, "k", failure.InternalBug},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(OpenAI, tt.cfg, Credentials{APIKey: tt.key})
			if got := failure.Classify(err); got != tt.class {
				t.Fatalf("class = %q, want %q (%v)", got, tt.class, err)
			}
			if err != nil && strings.Contains(err.Error(), "pw") {
				t.Errorf("error leaks endpoint credentials: %v", err)
			}
			if c != nil {
				if s := fmt.Sprintf("%v %+v", c, c); strings.Contains(s, tt.key) && tt.key != "" {
					t.Errorf("formatting leaks the key: %s", s)
				}
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		h    map[string]string
		want time.Duration
	}{
		{map[string]string{"Retry-After": "2"}, 2 * time.Second},
		{map[string]string{"Retry-After": " 0.5 "}, 500 * time.Millisecond},
		{map[string]string{"Retry-After": now.Add(30 * time.Second).Format(http.TimeFormat)}, 30 * time.Second},
		{map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{map[string]string{"Retry-After": "-3"}, 0},
		{map[string]string{"Retry-After": "NaN"}, 0},
		{map[string]string{"Retry-After": "soon"}, 0},
		{map[string]string{"Retry-After": "1e300"}, maxRetryAfter},
		{map[string]string{"Retry-After-Ms": "250"}, 250 * time.Millisecond},
		{map[string]string{"X-Ratelimit-Reset-Requests": "12ms"}, 12 * time.Millisecond},
		{map[string]string{"X-Ratelimit-Reset-Tokens": "6m0s", "X-Ratelimit-Reset-Requests": "1s"}, 6 * time.Minute},
		{map[string]string{"X-Ratelimit-Reset-Tokens": "soon"}, 0},
		{map[string]string{"Retry-After": "3", "X-Ratelimit-Reset-Tokens": "6m0s"}, 3 * time.Second},
		{nil, 0},
	}
	for _, tt := range tests {
		h := http.Header{}
		for k, v := range tt.h {
			h.Set(k, v)
		}
		if got := parseRetryAfter(h, now); got != tt.want {
			t.Errorf("parseRetryAfter(%v) = %v, want %v", tt.h, got, tt.want)
		}
	}
}

// A provider name picks its family; one not linked into the binary (the
// bedrock family lives in its own package) or not known says so, not a
// nil client.
func TestNewByFamily(t *testing.T) {
	cfg := Config{Endpoint: "https://llm.example", Model: "m", Timeout: time.Second, ResponseFormat: FormatJSONObject}
	tests := []struct {
		provider string
		want     string // the client's type, or a word of the error
	}{
		{"", "*llm.Client"},
		{OpenAI, "*llm.Client"},
		{Anthropic, "*llm.AnthropicClient"},
		{Bedrock, "not linked"},
		{"gemini", "is not openai"},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			c, err := New(tt.provider, cfg, Credentials{APIKey: "k"})
			got := fmt.Sprintf("%T", c)
			if err != nil {
				got = err.Error()
				if failure.Classify(err) != failure.InternalBug {
					t.Errorf("class = %s, want INTERNAL_BUG", failure.Classify(err))
				}
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("New(%q) = %s, want %s", tt.provider, got, tt.want)
			}
		})
	}
	if f, _ := FamilyOf(Bedrock); !f.AWS {
		t.Error("bedrock is not an AWS family: it would be asked for an API key")
	}
}

// A client printed or logged names its family and model, never its key.
func TestClientPrintsWithoutKey(t *testing.T) {
	cfg := Config{Endpoint: "https://llm.example", Model: "m", Timeout: time.Second, ResponseFormat: FormatJSONObject}
	for _, provider := range []string{OpenAI, Anthropic} {
		c, err := New(provider, cfg, Credentials{APIKey: "sk-secret-key"})
		if err != nil {
			t.Fatal(err)
		}
		var logs strings.Builder
		slog.New(slog.NewTextHandler(&logs, nil)).Info("client", "c", c)
		for _, s := range []string{fmt.Sprintf("%v %+v %s", c, c, c), logs.String()} {
			if strings.Contains(s, "sk-secret") || !strings.Contains(s, provider) {
				t.Errorf("%s client shows as %q", provider, s)
			}
		}
	}
}
