package llm

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// Wire formats the stand-in speaks.
const (
	FormatOpenAI    = "openai"
	FormatAnthropic = "anthropic"
	FormatBedrock   = "bedrock"
)

// wireRequest is the union of the three request shapes, as far as read.
type wireRequest struct {
	Model          string          `json:"model"`
	Messages       []wireMessage   `json:"messages"`
	System         json.RawMessage `json:"system"` // anthropic: string; bedrock: [{"text":…}]
	Temperature    *float64        `json:"temperature"`
	MaxTokens      int             `json:"max_tokens"`
	ResponseFormat *struct {
		Type       string          `json:"type"`
		JSONSchema json.RawMessage `json:"json_schema"`
	} `json:"response_format"`
	InferenceConfig *struct {
		MaxTokens   int      `json:"maxTokens"`
		Temperature *float64 `json:"temperature"`
	} `json:"inferenceConfig"`
}

// wireMessage's content is a string (openai) or a list of blocks
// (anthropic {"type":"text","text"}, bedrock {"text"}).
type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// blocks reads a content or system field: a string is one text block.
func blocks(raw json.RawMessage) []wireBlock {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []wireBlock{{Text: s}}
	}
	var out []wireBlock
	_ = json.Unmarshal(raw, &out)
	return out
}

func blocksText(raw json.RawMessage) string {
	var b strings.Builder
	for _, bl := range blocks(raw) {
		b.WriteString(bl.Text)
	}
	return b.String()
}

// normalize turns any format's request into the recorded system/user messages.
func (req wireRequest) normalize(rec *Request) {
	rec.Model, rec.Temperature, rec.MaxTokens = req.Model, req.Temperature, req.MaxTokens
	if req.ResponseFormat != nil {
		rec.ResponseFormat = req.ResponseFormat.Type
	}
	if ic := req.InferenceConfig; ic != nil {
		rec.MaxTokens, rec.Temperature = ic.MaxTokens, ic.Temperature
	}
	if sys := blocksText(req.System); sys != "" {
		rec.Messages = append(rec.Messages, Message{Role: "system", Content: sys})
	}
	for _, m := range req.Messages {
		rec.Messages = append(rec.Messages, Message{Role: m.Role, Content: blocksText(m.Content)})
	}
}

// complete answers one completion request and records it with its outcome.
func (s *Server) complete(w http.ResponseWriter, r *http.Request, format string) {
	body, readErr := io.ReadAll(io.LimitReader(r.Body, maxRequestBytes+1))
	rec := Request{
		Time: time.Now().UTC(), Format: format, Method: r.Method, Path: r.URL.Path,
		Header: r.Header.Clone(), BodyBytes: len(body), Authorization: "absent",
	}
	rec.Header.Del("Authorization")
	rec.Header.Del("X-Api-Key")
	key, hasKey := credentials(r, format, &rec)
	var req wireRequest
	jsonErr := json.Unmarshal(body, &req)
	if jsonErr == nil {
		req.normalize(&rec)
		if format == FormatBedrock {
			rec.Model = r.PathValue("model")
		}
	}
	record := func(status int, fault string) {
		rec.Status, rec.Fault = status, fault
		s.mu.Lock()
		s.requests = append(s.requests, rec)
		s.mu.Unlock()
		s.log.Info("llm standin request", slog.String("format", format), slog.Int("status", status),
			slog.Int("body_bytes", len(body)), slog.String("authorization", rec.Authorization))
	}
	if status, msg := s.refuse(r, format, key, hasKey, readErr, jsonErr, &rec, &req); status != 0 {
		writeFormatError(w, format, status, "", msg, "")
		record(status, "")
		return
	}

	text, marker := promptText(req)
	pt := tokens(len(text))
	s.mu.Lock()
	s.seq++
	seq := s.seq
	adm := s.admit(format, pt+rec.MaxTokens, time.Now())
	s.mu.Unlock()
	reqID := fmt.Sprintf("req_standin_%d", seq)
	w.Header().Set(map[string]string{FormatOpenAI: "X-Request-Id", FormatAnthropic: "Request-Id", FormatBedrock: "X-Amzn-Requestid"}[format], reqID)
	if adm.limited != "" {
		rec.RateLimited = adm.limited
		writeRateLimited(w, format, adm, reqID)
		record(http.StatusTooManyRequests, "")
		return
	}
	rec.ChargedTokens = adm.charged
	for k, v := range adm.headers {
		w.Header()[k] = v
	}
	fault := s.nextFault(userMessage(rec.Messages))
	for k, v := range fault.Headers {
		w.Header().Set(k, v)
	}

	if !wait(r.Context(), time.Duration(fault.DelayMS)*time.Millisecond+s.opts.Latency) {
		record(499, fault.String()) // client gave up; nginx's convention
		return
	}
	if fault.RetryAfter != "" {
		w.Header().Set("Retry-After", fault.RetryAfter)
	}
	model := cmp.Or(rec.Model, s.opts.Model)
	a := reply{seq: seq, reqID: reqID, model: model, finish: fault.FinishReason, promptTokens: pt}
	switch {
	case fault.Body != nil || (fault.Status != 0 && fault.Status != http.StatusOK):
		st := cmp.Or(fault.Status, http.StatusOK)
		if fault.Body != nil {
			if format == FormatBedrock && fault.ErrorType != "" {
				w.Header().Set("X-Amzn-Errortype", fault.ErrorType)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(st)
			w.Write(fault.Body)
		} else {
			writeFormatError(w, format, st, fault.ErrorType, http.StatusText(st), reqID)
		}
		record(st, fault.String())
		return
	case fault.Refusal != "":
		a.refusal = fault.Refusal
	case fault.Malformed:
		a.content = "Sure! Here is my review of the changelist:\n```json\n{\"schema_version\": \"1.0\", \"findings\": [{\"id\": \"F1\", "
	case fault.Content != nil:
		a.content = *fault.Content
	default:
		res := Review(userMessage(rec.Messages), s.opts.PromptVersion, s.opts.SchemaVersion)
		content, _ := json.Marshal(res) // plain structs always marshal
		a.content = string(content)
	}
	if a.finish == "length" || a.finish == "max_tokens" {
		a.content = a.content[:len(a.content)/2] // cut mid-JSON, as a real token limit does
	}
	s.mu.Lock()
	a.cache = s.cache(format, model, text, marker, time.Now())
	s.mu.Unlock()
	rec.InputTokens, rec.CachedTokens, rec.CacheWriteTokens = pt, a.cache.read, a.cache.write
	rec.OutputTokens = tokens(len(a.content) + len(a.refusal))
	a.write(w, format)
	record(http.StatusOK, fault.String()) // "" without a fault
}

// credentials are the request's key as its format carries it (with whether
// it has one), recording only a digest of it (SigV4: the scheme and
// credential scope, not the signature: no secret to check).
func credentials(r *http.Request, format string, rec *Request) (key string, hasKey bool) {
	switch format {
	case FormatOpenAI:
		scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
		key = strings.TrimSpace(token)
		hasKey = ok && strings.EqualFold(scheme, "Bearer") && key != ""
	case FormatAnthropic:
		key = strings.TrimSpace(r.Header.Get("X-Api-Key"))
		hasKey = key != ""
	case FormatBedrock:
		if cred, ok := strings.CutPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential="); ok {
			cred, _, _ = strings.Cut(cred, "/")
			rec.Authorization, hasKey = "sigv4 "+cred, true
		}
	}
	if hasKey && format != FormatBedrock {
		sum := sha256.Sum256([]byte(key))
		rec.Authorization = "present sha256:" + hex.EncodeToString(sum[:6])
	}
	return key, hasKey
}

// refuse is the status and message a provider refuses the request with
// before any work (0: none).
func (s *Server) refuse(r *http.Request, format, key string, hasKey bool, readErr, jsonErr error, rec *Request, req *wireRequest) (int, string) {
	switch {
	case !hasKey:
		return http.StatusUnauthorized, "missing credentials"
	case format != FormatBedrock && s.opts.APIKey != "" && subtle.ConstantTimeCompare([]byte(key), []byte(s.opts.APIKey)) != 1:
		// Real providers quote part of the key here; so does the stand-in,
		// so tests prove the client never repeats the message.
		return http.StatusUnauthorized, "Incorrect API key provided: " + quoteKey(key)
	case format == FormatAnthropic && r.Header.Get("Anthropic-Version") == "":
		return http.StatusBadRequest, "anthropic-version header is required"
	case readErr != nil || rec.BodyBytes > maxRequestBytes:
		return http.StatusRequestEntityTooLarge, "request body too large"
	case jsonErr != nil:
		return http.StatusBadRequest, "request body is not JSON"
	case format == FormatAnthropic && req.MaxTokens <= 0:
		return http.StatusBadRequest, "max_tokens: field required"
	case userMessage(rec.Messages) == "":
		return http.StatusBadRequest, "a user message is required"
	}
	return 0, ""
}

// quoteKey is how providers quote a rejected key: a prefix and the last four
// (docs/reference/llm-providers.md: a 401's message "quotes part of the key").
func quoteKey(k string) string {
	if len(k) <= 8 {
		return "****"
	}
	return k[:3] + "****" + k[len(k)-4:]
}

// reply is one 200 answer before it is put in a wire format.
type reply struct {
	seq                   int
	reqID, model, content string
	finish, refusal       string
	promptTokens          int
	cache                 cacheUse
}

func (a reply) write(w http.ResponseWriter, format string) {
	pt, ct := a.promptTokens, tokens(len(a.content)+len(a.refusal))
	uncached := pt - a.cache.read - a.cache.write // Anthropic's and Bedrock's input_tokens
	text := cmp.Or(a.refusal, a.content)          // Anthropic's and Bedrock's
	switch format {
	case FormatOpenAI:
		msg := map[string]any{"role": "assistant", "content": a.content, "refusal": nil}
		if a.refusal != "" {
			msg["content"], msg["refusal"] = nil, a.refusal
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"id": fmt.Sprintf("chatcmpl-standin-%d", a.seq), "object": "chat.completion",
			"created": time.Now().Unix(), "model": a.model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": cmp.Or(a.finish, "stop")}},
			"usage": map[string]any{"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct,
				"prompt_tokens_details": map[string]int{"cached_tokens": a.cache.read}},
		})
	case FormatAnthropic:
		stop := cmp.Or(a.finish, "end_turn")
		if a.refusal != "" {
			stop = "refusal"
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"id": fmt.Sprintf("msg_standin_%d", a.seq), "type": "message", "role": "assistant", "model": a.model,
			"content":     []any{map[string]any{"type": "text", "text": text}},
			"stop_reason": stop, "stop_sequence": nil,
			"usage": map[string]int{"input_tokens": uncached, "output_tokens": ct,
				"cache_creation_input_tokens": a.cache.write, "cache_read_input_tokens": a.cache.read},
		})
	case FormatBedrock:
		writeJSON(w, http.StatusOK, map[string]any{
			"output":     map[string]any{"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"text": text}}}},
			"stopReason": cmp.Or(a.finish, "end_turn"),
			"usage": map[string]int{"inputTokens": uncached, "outputTokens": ct, "totalTokens": pt + ct,
				"cacheReadInputTokens": a.cache.read, "cacheWriteInputTokens": a.cache.write},
			"metrics": map[string]int{"latencyMs": 1},
		})
	}
}

// writeFormatError writes status in format's error shape, errType (default:
// the status's) the Anthropic error.type or Bedrock exception
// (docs/reference/llm-providers.md: the OpenAI table, Anthropic's
// {"type":"error",…,"request_id"} and Bedrock's exceptions).
func writeFormatError(w http.ResponseWriter, format string, status int, errType, msg, reqID string) {
	switch format {
	case FormatOpenAI:
		if status == http.StatusUnauthorized {
			writeError(w, status, "invalid_api_key", "invalid_request_error", msg)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(defaultErrorBody(status))
	case FormatAnthropic:
		errType = cmp.Or(errType, map[int]string{400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
			404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}[status], "api_error")
		writeJSON(w, status, map[string]any{"type": "error",
			"error": map[string]any{"type": errType, "message": msg}, "request_id": reqID})
	case FormatBedrock:
		errType = cmp.Or(errType, map[int]string{400: "ValidationException", 401: "UnrecognizedClientException", 403: "AccessDeniedException",
			404: "ResourceNotFoundException", 424: "ModelErrorException", 429: "ThrottlingException",
			500: "InternalServerException", 503: "ServiceUnavailableException"}[status], "InternalServerException")
		w.Header().Set("X-Amzn-Errortype", errType)
		writeJSON(w, status, map[string]any{"message": msg})
	}
}

// wait waits d, or less if ctx ends first: then it answers false.
func wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	select {
	case <-time.After(d):
		return true
	case <-ctx.Done():
		return false
	}
}
