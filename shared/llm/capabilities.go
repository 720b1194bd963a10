package llm

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Structured-output forms of an OpenAI-compatible server, best first
// (LLM_RESPONSE_FORMAT; FormatAuto finds the best one the server takes).
const (
	// FormatAuto starts at FormatJSONSchema and steps down the first time
	// the server refuses a form as an invalid request naming the response
	// format (llama-cpp-python: HTTP 500 "Input should be 'text' or
	// 'json_object'", ../shared/reference/llm-providers.md).
	FormatAuto = "auto"
	// FormatJSONObjectSchema sends {"type": "json_object", "schema": …}:
	// llama-cpp-python's server constrains the output to the schema with a
	// grammar (its ResponseFormat model has a schema field).
	FormatJSONObjectSchema = "json_object_schema"
)

// formsBestFirst is the order FormatAuto tries.
var formsBestFirst = []string{FormatJSONSchema, FormatJSONObjectSchema, FormatJSONObject}

// Capabilities are what was found about an endpoint, not assumed
// (docs/design.md, "Capabilities are found, not assumed").
type Capabilities struct {
	ResponseFormat string `json:"response_format"` // in use now (one of formsBestFirst)
	Detected       bool   `json:"detected"`        // found from answers (FormatAuto), not configured
	// ContextTokens is the window the server reports (0: none; configure
	// llmContextTokens), ContextSource where ("/props n_ctx", …).
	ContextTokens int    `json:"context_tokens,omitempty"`
	ContextSource string `json:"context_source,omitempty"`
}

// endpointState is what one cold start remembers per endpoint and model (the
// accepted form, the answer rates), shared so a client rebuilt for a rotated
// key keeps what the old one found.
type endpointState struct {
	mu       sync.Mutex
	form     string // the form in use
	detected bool
	pace     pace
}

var endpoints sync.Map // url, model and configured form → *endpointState

func stateFor(url, model, configured string) *endpointState {
	key := url + "\x00" + model + "\x00" + configured
	if s, ok := endpoints.Load(key); ok {
		return s.(*endpointState)
	}
	s := &endpointState{form: configured, detected: configured == FormatAuto}
	if configured == FormatAuto {
		s.form = formsBestFirst[0]
	}
	actual, _ := endpoints.LoadOrStore(key, s)
	return actual.(*endpointState)
}

func (s *endpointState) current() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.form
}

// stepDown moves from the refused form to the next, once for all concurrent
// refusals of it; false when no form is left.
func (s *endpointState) stepDown(refused string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.detected {
		return s.form, false
	}
	if s.form == refused {
		i := slices.Index(formsBestFirst, refused)
		if i < 0 || i+1 == len(formsBestFirst) {
			return s.form, false
		}
		s.form = formsBestFirst[i+1]
		return s.form, true
	}
	return s.form, true // another call already stepped down
}

// refusesFormat: the server refused the request's response_format as invalid.
func refusesFormat(err error) bool {
	e, ok := Details(err)
	return ok && e.Reason == ReasonInvalidRequest && e.namesFormat
}

// Capabilities is what the client knows now, without asking the server.
func (c *Client) Capabilities() Capabilities {
	c.state.mu.Lock()
	defer c.state.mu.Unlock()
	return Capabilities{ResponseFormat: c.state.form, Detected: c.state.detected}
}

// ContextTokens reads the model's context window the server reports: vLLM's
// /v1/models max_model_len, context_length or n_ctx there (LM Studio,
// llama.cpp forks), else llama-server's /props n_ctx; 0 when none says
// (OpenAI, Ollama, llama-cpp-python 0.3.36). Errors report nothing.
func (c *Client) ContextTokens(ctx context.Context) (int, string) {
	ctx, cancel := context.WithTimeout(ctx, min(c.cfg.Timeout, 5*time.Second))
	defer cancel()
	root := strings.TrimSuffix(c.url, apiPaths[OpenAI])
	var models struct {
		Data []map[string]json.RawMessage `json:"data"`
	}
	if c.getJSON(ctx, root+"/v1/models", &models) {
		for _, m := range models.Data {
			var id string
			_ = json.Unmarshal(m["id"], &id)
			if id != c.cfg.Model && len(models.Data) > 1 {
				continue
			}
			for _, field := range []string{"max_model_len", "context_length", "n_ctx", "context_window"} {
				var n int
				if json.Unmarshal(m[field], &n) == nil && n > 0 {
					return n, "/v1/models " + field
				}
			}
		}
	}
	var props struct {
		NCtx     int `json:"n_ctx"`
		Settings struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
	if c.getJSON(ctx, root+"/props", &props) {
		if n := max(props.NCtx, props.Settings.NCtx); n > 0 {
			return n, "/props n_ctx"
		}
	}
	return 0, ""
}

// getJSON GETs url with the key and decodes a 200 JSON answer into v.
func (c *Client) getJSON(ctx context.Context, url string, v any) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	req.Header.Set("Authorization", "Bearer "+c.apiKey)
	resp, err := c.http.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v) == nil
}

// grammarSchema writes every "\." in schema's "pattern" keywords as "[.]",
// for FormatJSONObjectSchema: llama-cpp-python 0.3.36's llama.cpp grammar
// parser refuses the escape ("unknown escape", "failed to parse grammar")
// and drops the connection; "[.]" parses (both observed here on 2026-12-01).
func grammarSchema(schema json.RawMessage) json.RawMessage {
	var v any
	if json.Unmarshal(schema, &v) != nil {
		return schema
	}
	out, err := json.Marshal(classDots(v))
	if err != nil {
		return schema
	}
	return out
}

// classDots rewrites every schema's "pattern" in v ("properties" keys are names).
func classDots(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, sub := range t {
			switch {
			case k == "pattern":
				if p, ok := sub.(string); ok {
					t[k] = strings.ReplaceAll(p, `\.`, "[.]")
				}
			case k == "properties":
				if props, ok := sub.(map[string]any); ok {
					for name, ps := range props {
						props[name] = classDots(ps)
					}
				}
			default:
				t[k] = classDots(sub)
			}
		}
	case []any:
		for i := range t {
			t[i] = classDots(t[i])
		}
	}
	return v
}
