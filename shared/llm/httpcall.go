package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/criticizer/criticizer/shared/failure"
)

// answer is one HTTP exchange's outcome, before the family reads it.
type answer struct {
	resp      *http.Response
	body      []byte
	requestID string
}

// call posts body within timeout, reads the answer with the family's read
// and logs the call.
func (b *base) call(ctx context.Context, p Prompt, timeout time.Duration, body any, headers map[string]string,
	read func(answer) (Completion, error)) (Completion, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	a, err := b.post(ctx, timeout, body, headers)
	comp, status := Completion{RequestID: a.requestID}, 0
	if a.resp != nil {
		status = a.resp.StatusCode
	}
	if err == nil {
		comp, err = read(a)
		// What the headers say about the limits, on the answer or the error.
		comp.RateLimit = ParseRateLimit(a.resp.Header, time.Now())
		if e, ok := Details(err); ok {
			e.RateLimit = comp.RateLimit
		}
	}
	LogCall(ctx, b.log, b.provider, b.cfg.Model, p, start, comp, status, err)
	if err != nil {
		return Completion{}, err
	}
	return comp, nil
}

// post sends body and reads a bounded answer.
func (b *base) post(ctx context.Context, timeout time.Duration, body any, headers map[string]string) (answer, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return answer{}, failure.Errorf(failure.InternalBug, "llm: encode request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.url, bytes.NewReader(raw))
	if err != nil {
		return answer{}, failure.Errorf(failure.InternalBug, "llm: build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := b.http.Do(req)
	if err != nil {
		return answer{}, TransportError(ctx, timeout, err)
	}
	defer resp.Body.Close()
	a := answer{resp: resp, requestID: requestID(resp.Header)}
	a.body, err = io.ReadAll(io.LimitReader(resp.Body, b.cfg.MaxResponseBytes+1))
	if err != nil {
		return a, TransportError(ctx, timeout, err)
	}
	if int64(len(a.body)) > b.cfg.MaxResponseBytes {
		return a, Classed(failure.SchemaInvalid, 0, &Error{Provider: b.provider, Reason: ReasonBadResponse,
			Status: resp.StatusCode, RequestID: a.requestID, Detail: "response body over the size limit"})
	}
	return a, nil
}
