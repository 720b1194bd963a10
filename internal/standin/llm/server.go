// Package llm is the LLM provider's stand-in for tests and local runs: a
// loopback HTTP server speaking OpenAI-compatible Chat Completions,
// Anthropic Messages and Amazon Bedrock Converse (SigV4 scheme checked, not
// the signature). It answers review prompts with deterministic, schema-valid
// ReviewResult JSON from the diffs, injects the provider answers of
// docs/reference/llm-providers.md (429s, 5xx, refusals, truncation, Bedrock
// exceptions, malformed output, delays), records what reached "the LLM",
// and models a provider's economics (limits.go: latency, rate limits with
// each provider's headers, prompt caching).
//
// It reads the prompt by its documented markers (CHANGED_FILES_JSON:,
// DIFFS:, FILE: headers), not by importing the prompt builder, so a drift in
// the prompt format fails the end-to-end tests.
package llm

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// maxRequestBytes bounds a request body; real providers refuse far less.
const maxRequestBytes = 16 << 20

// Options configure a Server.
type Options struct {
	// APIKey, when set, is the only key accepted; else any non-empty one.
	APIKey string
	// Model is reported in responses when the request names none.
	Model string
	// PromptVersion and SchemaVersion, when set, are echoed instead of the
	// prompt's (to test version rejection).
	PromptVersion, SchemaVersion string
	Logger                       *slog.Logger  // one record per request; nil discards
	Latency                      time.Duration // every completion's generation time
	// TokensPerMinute and RequestsPerMinute are enforced as providers do:
	// continuously refilled buckets, a request charged its input tokens plus
	// max_tokens, a 429 in its format's shape when it does not fit, and each
	// provider's rate-limit headers on every answer.
	TokensPerMinute, RequestsPerMinute int
	// RateLimitBurst is how much of a minute's limit a bucket holds: a
	// minute by default (Anthropic's documented bucket), shorter as OpenAI
	// enforces over shorter periods.
	RateLimitBurst time.Duration
}

// Fault is a scripted answer served to the next Count completion requests
// (default 1) instead of, or before, the normal review. Faults queue in order
// and apply to whichever wire format the request uses; fields a format does
// not have are ignored by it.
//
//	{"status":429,"retry_after":"2","count":2}          429 with Retry-After: 2, twice
//	{"status":500,"body":{"error":{...}}}               500 with that body
//	{"status":429,"error_type":"ModelNotReadyException"} Bedrock: that exception; Anthropic: error.type
//	{"malformed":true}                                  200 whose content is prose-wrapped, truncated JSON
//	{"content":"{...}"}                                 200 whose content is exactly this string
//	{"finish_reason":"length"}                          200 with this finish/stop reason; a truncation
//	                                                    reason (length, max_tokens) also cuts the content mid-JSON
//	{"refusal":"I can't help with that."}               200 refusal (OpenAI message.refusal; Anthropic stop_reason refusal)
//	{"headers":{"x-ratelimit-reset-tokens":"1s"}}       extra response headers
//	{"delay_ms":3000}                                   wait, then answer normally (or as the other fields say)
//	{"status":500,"match":"//depot/a.c"}                only for requests whose user message contains match
type Fault struct {
	Status       int               `json:"status,omitempty"`
	RetryAfter   string            `json:"retry_after,omitempty"`
	Count        int               `json:"count,omitempty"`
	Body         json.RawMessage   `json:"body,omitempty"`
	ErrorType    string            `json:"error_type,omitempty"`
	Malformed    bool              `json:"malformed,omitempty"`
	Content      *string           `json:"content,omitempty"`
	FinishReason string            `json:"finish_reason,omitempty"`
	Refusal      string            `json:"refusal,omitempty"`
	Headers      map[string]string `json:"headers,omitempty"`
	DelayMS      int               `json:"delay_ms,omitempty"`
	Match        string            `json:"match,omitempty"` // only requests whose user message contains it
}

// String names the fault for the request record; "" for the zero Fault.
func (f Fault) String() string {
	var parts []string
	for _, p := range []struct {
		on   bool
		name string
	}{{f.Status != 0, "status=" + strconv.Itoa(f.Status)}, {f.Body != nil, "body"}, {f.Malformed, "malformed"},
		{f.Content != nil, "content"}, {f.DelayMS > 0, "delay_ms=" + strconv.Itoa(f.DelayMS)},
		{f.ErrorType != "", "error_type=" + f.ErrorType}, {f.FinishReason != "", "finish_reason=" + f.FinishReason},
		{f.Refusal != "", "refusal"}} {
		if p.on {
			parts = append(parts, p.name)
		}
	}
	return strings.Join(parts, ",")
}

// Message is one chat message as received.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is one recorded request. Authorization keeps no credential:
// "absent", "present sha256:<prefix>" of the key, or "sigv4 <access key id>".
type Request struct {
	Time           time.Time   `json:"time"`
	Format         string      `json:"format"`
	MaxTokens      int         `json:"max_tokens,omitempty"`
	Method         string      `json:"method"`
	Path           string      `json:"path"`
	Header         http.Header `json:"header"`
	Authorization  string      `json:"authorization"`
	Model          string      `json:"model,omitempty"`
	Temperature    *float64    `json:"temperature,omitempty"`
	ResponseFormat string      `json:"response_format,omitempty"`
	Messages       []Message   `json:"messages"`
	BodyBytes      int         `json:"body_bytes"`
	Status         int         `json:"status"`
	Fault          string      `json:"fault,omitempty"`
	// Usage as answered (200 only); the cache's tokens are part of input.
	InputTokens      int    `json:"input_tokens,omitempty"`
	CachedTokens     int    `json:"cached_tokens,omitempty"`
	CacheWriteTokens int    `json:"cache_write_tokens,omitempty"`
	OutputTokens     int    `json:"output_tokens,omitempty"`
	ChargedTokens    int    `json:"charged_tokens,omitempty"` // against TokensPerMinute
	RateLimited      string `json:"rate_limited,omitempty"`   // the limit a 429 enforced
}

// Server is the stand-in. The zero value is not usable; call NewServer.
type Server struct {
	opts Options
	log  *slog.Logger

	mu        sync.Mutex
	faults    []Fault
	requests  []Request
	seq       int
	tpm, rpm  limitBucket
	cacheSeen map[uint64]time.Time // prompt-cache entries by prefix hash, with their expiry

	srv *http.Server
	url string
}

// NewServer returns a stopped Server; Start or Handler puts it to work.
func NewServer(opts Options) *Server {
	opts.Model = cmp.Or(opts.Model, "standin-reviewer-1")
	s := &Server{opts: opts, log: cmp.Or(opts.Logger, slog.New(slog.DiscardHandler)), cacheSeen: map[uint64]time.Time{}}
	s.SetLimits(opts.TokensPerMinute, opts.RequestsPerMinute, opts.RateLimitBurst)
	return s
}

// Start serves on addr, a loopback address ("127.0.0.1:0" when empty),
// until Close, and returns the base URL.
func (s *Server) Start(addr string) (string, error) {
	addr = cmp.Or(addr, "127.0.0.1:0")
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("llm standin: address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return "", fmt.Errorf("llm standin: address %q is not a loopback address", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("llm standin: listen: %w", err)
	}
	s.mu.Lock()
	if s.srv != nil {
		s.mu.Unlock()
		ln.Close()
		return "", errors.New("llm standin: already started")
	}
	s.srv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	s.url = "http://" + ln.Addr().String()
	srv := s.srv
	s.mu.Unlock()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("llm standin stopped", slog.String("error", err.Error()))
		}
	}()
	return s.url, nil
}

// URL is the base URL Start returned, or "" before Start.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.url
}

// Close stops the server, ending requests in flight.
func (s *Server) Close() error {
	s.mu.Lock()
	srv := s.srv
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		return srv.Close()
	}
	return nil
}

// QueueFault appends f to the fault queue.
func (s *Server) QueueFault(f Fault) {
	f.Count = max(f.Count, 1)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, f)
}

// Requests returns a copy of the recorded completion requests, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request{}, s.requests...)
}

// Reset clears queued faults and recorded requests.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults, s.requests = nil, nil
}

// Handler serves the provider API and the control API:
//
//	POST /v1/chat/completions       OpenAI-compatible Chat Completions
//	POST /v1/messages               Anthropic Messages
//	POST /model/{model}/converse    Amazon Bedrock Converse (point the SDK's BaseEndpoint here)
//	POST /_standin/faults      queue a Fault (object) or Faults (array)
//	GET  /_standin/requests    recorded requests as JSON
//	POST /_standin/reset       clear faults and requests
//	GET  /_standin/health      200 "ok"
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "invalid_request_error", "use POST")
			return
		}
		s.complete(w, r, FormatOpenAI)
	})
	mux.HandleFunc("POST /v1/messages", func(w http.ResponseWriter, r *http.Request) { s.complete(w, r, FormatAnthropic) })
	mux.HandleFunc("POST /model/{model}/converse", func(w http.ResponseWriter, r *http.Request) { s.complete(w, r, FormatBedrock) })
	mux.HandleFunc("POST /_standin/faults", s.queueFaults)
	mux.HandleFunc("GET /_standin/requests", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, s.Requests()) })
	mux.HandleFunc("POST /_standin/reset", func(w http.ResponseWriter, r *http.Request) {
		s.Reset()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /_standin/health", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", "invalid_request_error", "unknown path")
	})
	return mux
}

func (s *Server) queueFaults(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		writeError(w, http.StatusBadRequest, "bad_fault", "invalid_request_error", "unreadable body")
		return
	}
	var faults []Fault
	if trimmed := strings.TrimSpace(string(body)); strings.HasPrefix(trimmed, "[") {
		err = json.Unmarshal(body, &faults)
	} else {
		var f Fault
		err = json.Unmarshal(body, &f)
		faults = []Fault{f}
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "bad_fault", "invalid_request_error", "fault is not valid JSON: "+err.Error())
		return
	}
	for _, f := range faults {
		s.QueueFault(f)
	}
	writeJSON(w, http.StatusOK, map[string]int{"queued": len(faults)})
}

// nextFault pops one use of the first queued fault that applies to a
// request with this user message; none is the zero Fault.
func (s *Server) nextFault(user string) Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.faults {
		if f.Match != "" && !strings.Contains(user, f.Match) {
			continue
		}
		s.faults[i].Count--
		if s.faults[i].Count <= 0 {
			s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
		}
		return f
	}
	return Fault{}
}

func userMessage(msgs []Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return msgs[i].Content
		}
	}
	return ""
}

// defaultErrorBody is OpenAI's body for status, with the code the client
// classifies on.
func defaultErrorBody(status int) []byte {
	code, typ := "invalid_request_error", "invalid_request_error"
	switch {
	case status == http.StatusTooManyRequests:
		code, typ = "rate_limit_exceeded", "requests"
	case status == http.StatusUnauthorized:
		code = "invalid_api_key"
	case status == http.StatusForbidden:
		code = "permission_denied"
	case status == http.StatusInternalServerError:
		code, typ = "internal_error", "server_error"
	case status >= 500:
		code, typ = "service_unavailable", "server_error"
	}
	b, _ := json.Marshal(errorEnvelope(code, typ, http.StatusText(status)))
	return b
}

func errorEnvelope(code, typ, msg string) map[string]any {
	return map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": code, "param": nil}}
}

func writeError(w http.ResponseWriter, status int, code, typ, msg string) {
	writeJSON(w, status, errorEnvelope(code, typ, msg))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
