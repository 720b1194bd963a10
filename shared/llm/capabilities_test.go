package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/llm/llmtest"
)

// llamaCppRefusal is llama-cpp-python 0.3.36's answer to response_format
// json_schema, as observed here on 2026-12-01 (../shared/reference/
// llm-providers.md): the pydantic error list and a traceback line in
// error.message, status 500 (the install path shortened).
const llamaCppRefusal = `{"error":{"message":"1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', 'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n  File \"/srv/venv/lib/python3.11/site-packages/llama_cpp/server/app.py\", line 376, in create_chat_completion\n    POST /v1/chat/completions","type":"internal_server_error","param":null,"code":null}}`

// formServer answers like a server that accepts only the forms in accept
// (by the wire shape: "json_schema", "json_object+schema", "json_object")
// and records the shape of every request.
type formServer struct {
	accept map[string]bool
	mu     sync.Mutex
	seen   []string
}

func (f *formServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ResponseFormat struct {
			Type   string          `json:"type"`
			Schema json.RawMessage `json:"schema"`
		} `json:"response_format"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	shape := req.ResponseFormat.Type
	if shape == "json_object" && len(req.ResponseFormat.Schema) > 0 {
		shape = "json_object+schema"
	}
	f.mu.Lock()
	f.seen = append(f.seen, shape)
	f.mu.Unlock()
	if !f.accept[shape] {
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, llamaCppRefusal)
		return
	}
	io.WriteString(w, okBody(`{"summary":"ok","findings":[]}`))
}

func (f *formServer) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...)
}

func TestResponseFormatFoundByFallback(t *testing.T) {
	tests := []struct {
		name       string
		configured string
		accept     []string
		want       string   // the form used, "" for an error
		wantFirst  []string // request shapes of the first call
		wantClass  failure.Class
	}{
		{"server takes json_schema", FormatAuto, []string{"json_schema"}, FormatJSONSchema, []string{"json_schema"}, ""},
		{"llama-cpp-python: json_object with schema", FormatAuto, []string{"json_object+schema", "json_object"}, FormatJSONObjectSchema,
			[]string{"json_schema", "json_object+schema"}, ""},
		{"json_object only", FormatAuto, []string{"json_object"}, FormatJSONObject,
			[]string{"json_schema", "json_object+schema", "json_object"}, ""},
		{"nothing accepted: a configuration error, not retried", FormatAuto, nil, "",
			[]string{"json_schema", "json_object+schema", "json_object"}, failure.InternalBug},
		{"configured json_schema is not stepped down", FormatJSONSchema, []string{"json_object"}, "", []string{"json_schema"}, failure.InternalBug},
		{"configured json_object_schema", FormatJSONObjectSchema, []string{"json_object+schema"}, FormatJSONObjectSchema, []string{"json_object+schema"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := &formServer{accept: map[string]bool{}}
			for _, a := range tt.accept {
				fs.accept[a] = true
			}
			srv := httptest.NewServer(fs)
			defer srv.Close()
			var logs bytes.Buffer
			c := newClient(t, srv.URL, &logs, func(c *Config) { c.ResponseFormat = tt.configured; c.Schema = json.RawMessage(`{"type":"object"}`) })
			comp, err := c.Complete(context.Background(), testPrompt)
			if got := fs.requests(); strings.Join(got, ",") != strings.Join(tt.wantFirst, ",") {
				t.Errorf("first call sent %v, want %v", got, tt.wantFirst)
			}
			if tt.want == "" {
				if err == nil || failure.Classify(err) != tt.wantClass || failure.Classify(err).Retryable() {
					t.Fatalf("err = %v (class %s), want %s, not retryable", err, failure.Classify(err), tt.wantClass)
				}
				d, _ := Details(err)
				if d.Reason != ReasonInvalidRequest || d.ServerReason != "body.response_format.type: Input should be 'text' or 'json_object'" {
					t.Errorf("details = %+v, want the server's reason without the input it quotes", d)
				}
				return
			}
			if err != nil || comp.ResponseFormat != tt.want {
				t.Fatalf("Complete = %q, %v; want an answer in %s", comp.ResponseFormat, err, tt.want)
			}
			// Remembered for the endpoint: a new client (a rotated key) goes
			// straight to the form found.
			before := len(fs.requests())
			again := newClient(t, srv.URL, &logs, func(c *Config) { c.ResponseFormat = tt.configured; c.Schema = json.RawMessage(`{"type":"object"}`) })
			if comp, err := again.Complete(context.Background(), testPrompt); err != nil || comp.ResponseFormat != tt.want {
				t.Fatalf("second call = %q, %v", comp.ResponseFormat, err)
			}
			if n := len(fs.requests()) - before; n != 1 {
				t.Errorf("second call sent %d requests, want 1 (the form remembered)", n)
			}
			if caps := again.Capabilities(); caps.ResponseFormat != tt.want || caps.Detected != (tt.configured == FormatAuto) {
				t.Errorf("Capabilities = %+v", caps)
			}
		})
	}
}

func TestInvalidRequestIsAConfigurationError(t *testing.T) {
	tests := []struct {
		name        string
		status      int
		body        string
		class       failure.Class
		reason      Reason
		serverWords string // ServerReason, when invalid
	}{
		{"llama-cpp-python 500 validation", 500, llamaCppRefusal, failure.InternalBug, ReasonInvalidRequest,
			"body.response_format.type: Input should be 'text' or 'json_object'"},
		{"FastAPI 422", 422, `{"detail":[{"type":"missing","loc":["body","messages"],"msg":"Field required","input":{"model":"m"}}]}`,
			failure.InternalBug, ReasonInvalidRequest, "body.messages: Field required"},
		{"OpenAI unsupported parameter", 400, `{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}`,
			failure.InternalBug, ReasonInvalidRequest, "Unsupported parameter: 'max_tokens' is not supported with this model."},
		{"vLLM bad request", 400, `{"object":"error","message":"response_format.json_schema: field required","type":"BadRequestError","param":null,"code":400}`,
			failure.InternalBug, ReasonInvalidRequest, "response_format.json_schema: field required"},
		{"context length stays re-chunkable", 400, `{"error":{"message":"This model's maximum context length is 2048 tokens, however you requested 5000 tokens","type":"invalid_request_error","code":"context_length_exceeded"}}`,
			failure.SchemaInvalid, ReasonContextLength, ""},
		{"llama-cpp context window", 400, `{"error":{"message":"Requested tokens (5000) exceed context window of 2048","type":"internal_server_error"}}`,
			failure.SchemaInvalid, ReasonContextLength, ""},
		{"a plain 500 is upstream", 500, `{"error":{"message":"CUDA out of memory","type":"server_error"}}`, failure.Upstream5xx, ReasonUpstream, ""},
		{"Ollama busy", 503, `{"error":"server busy, please try again.  maximum pending requests exceeded"}`, failure.NetworkTimeout, ReasonBusy, ""},
		{"the input pydantic quotes is not kept", 500, `{"error":{"message":"[{'type': 'string_type', 'loc': ('body', 'messages', 1, 'content'), 'msg': 'Input should be a valid string', 'input': 'PROMPT-TEXT-QUOTED'}]","type":"internal_server_error"}}`,
			failure.InternalBug, ReasonInvalidRequest, "body.messages.1.content: Input should be a valid string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			var logs bytes.Buffer
			_, err := newClient(t, srv.URL, &logs, func(c *Config) { c.ResponseFormat = FormatJSONObject }).Complete(context.Background(), testPrompt)
			d, ok := Details(err)
			if failure.Classify(err) != tt.class || !ok || d.Reason != tt.reason {
				t.Fatalf("err = %v, want %s / %s", err, tt.class, tt.reason)
			}
			if tt.serverWords != "" && d.ServerReason != tt.serverWords {
				t.Errorf("server reason %q, want %q", d.ServerReason, tt.serverWords)
			}
			if strings.Contains(err.Error(), "PROMPT-TEXT-QUOTED") || strings.Contains(logs.String(), "PROMPT-TEXT-QUOTED") {
				t.Errorf("the value the server quoted was kept: %v", err)
			}
		})
	}
}

// A busy server's 503 (Ollama's full queue) is waited out inside the
// attempt with backoff, at most maxBusyRetries times per call.
func TestLimiterBacksOffOnBusy(t *testing.T) {
	busyErr := func() error {
		return Classed(failure.NetworkTimeout, 0, &Error{Provider: OpenAI, Reason: ReasonBusy, Status: 503})
	}
	t.Run("busy twice, then an answer", func(t *testing.T) {
		clock := llmtest.NewVirtualClock()
		start := clock.Now()
		p := &scripted{errs: []error{busyErr(), busyErr()}, ok: Completion{Content: []byte("{}")}}
		l := NewLimiter(LimiterConfig{Clock: clock, MaxConcurrency: 4, Backoff: func(n int) time.Duration { return time.Duration(n) * time.Second }})
		comp, err := l.Wrap("m", p).Complete(context.Background(), prompt)
		if err != nil || p.calls != 3 || comp.RateLimited != 2 {
			t.Fatalf("Complete = %+v, %v after %d calls; want the answer on the third", comp, err, p.calls)
		}
		if waited := clock.Now().Sub(start); waited < 3*time.Second {
			t.Errorf("waited %v, want the backoff of 1s + 2s", waited)
		}
		if c := l.model("m").allowed(); c >= 4 {
			t.Errorf("concurrency %d after 503s, want it lowered", c)
		}
	})
	t.Run("busy for good ends the attempt, retryable", func(t *testing.T) {
		clock := llmtest.NewVirtualClock()
		errs := make([]error, 20)
		for i := range errs {
			errs[i] = busyErr()
		}
		p := &scripted{errs: errs}
		l := NewLimiter(LimiterConfig{Clock: clock, Backoff: func(int) time.Duration { return time.Second }})
		_, err := l.Wrap("m", p).Complete(context.Background(), prompt)
		if !failure.Classify(err).Retryable() || p.calls != maxBusyRetries+1 {
			t.Errorf("err %v after %d calls; want a retryable error after %d", err, p.calls, maxBusyRetries+1)
		}
	})
}

// A slow model's call timeout follows its measured rate; a fast one keeps
// the configured floor.
func TestCallTimeoutFromMeasuredRate(t *testing.T) {
	var p pace
	floor := 8 * time.Second
	if got := p.timeout(floor, 1000, 512); got != floor {
		t.Fatalf("unmeasured: %v, want the floor", got)
	}
	// 2 CPU cores, a small model: 1,000 prompt + 200 output tokens in 12 s.
	p.observe(Usage{InputTokens: 1000, OutputTokens: 200}, 12*time.Second)
	got := p.timeout(floor, 1000, 512)
	// 1000/100 + 400/16.7 = 34 s, twice: about 68 s.
	if got < 60*time.Second || got > 75*time.Second {
		t.Errorf("slow model: timeout %v, want about 68s", got)
	}
	var fast pace
	fast.observe(Usage{InputTokens: 1000, OutputTokens: 200}, 800*time.Millisecond)
	if got := fast.timeout(floor, 1000, 512); got != floor {
		t.Errorf("fast model: timeout %v, want the floor %v", got, floor)
	}
}

func TestContextTokensFromTheServer(t *testing.T) {
	tests := []struct {
		name   string
		paths  map[string]string
		want   int
		source string
	}{
		{"vLLM max_model_len", map[string]string{"/v1/models": `{"data":[{"id":"gpt-test","max_model_len":8192}]}`}, 8192, "/v1/models max_model_len"},
		{"llama-server /props", map[string]string{"/v1/models": `{"data":[{"id":"x"}]}`, "/props": `{"default_generation_settings":{"n_ctx":4096}}`}, 4096, "/props n_ctx"},
		{"nothing reported", map[string]string{"/v1/models": `{"data":[{"id":"gpt-test","owned_by":"me"}]}`}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, ok := tt.paths[r.URL.Path]
				if !ok {
					http.NotFound(w, r)
					return
				}
				io.WriteString(w, body)
			}))
			defer srv.Close()
			var logs bytes.Buffer
			n, src := newClient(t, srv.URL, &logs).ContextTokens(context.Background())
			if n != tt.want || src != tt.source {
				t.Errorf("ContextTokens = %d %q, want %d %q", n, src, tt.want, tt.source)
			}
		})
	}
}

// The json_object schema's patterns carry no escaped dot: llama-cpp-python's
// grammar cannot hold it, and [.] means the same.
func TestGrammarSchemaClassesDots(t *testing.T) {
	in := json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string","pattern":"^a\\.b$"},"v":{"type":"string","pattern":"^[0-9]+\\.[0-9]+$"},"xs":{"type":"array","items":{"type":"string","pattern":"x\\d"}}}}`)
	got := string(grammarSchema(in))
	want := `{"properties":{"pattern":{"pattern":"^a[.]b$","type":"string"},"v":{"pattern":"^[0-9]+[.][0-9]+$","type":"string"},"xs":{"items":{"pattern":"x\\d","type":"string"},"type":"array"}},"type":"object"}`
	if got != want {
		t.Errorf("grammarSchema = %s, want %s", got, want)
	}
}
