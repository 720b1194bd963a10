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

// post sends body as JSON with headers and reads a bounded answer. A
// transport failure or an over-long body is returned classed.
func (b *base) post(ctx context.Context, body any, headers map[string]string) (answer, error) {
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
		return answer{}, TransportError(ctx, callTimeout(ctx, b.cfg.Timeout), err)
	}
	defer resp.Body.Close()
	a := answer{resp: resp, requestID: requestID(resp.Header)}
	a.body, err = io.ReadAll(io.LimitReader(resp.Body, b.cfg.MaxResponseBytes+1))
	if err != nil {
		return a, TransportError(ctx, callTimeout(ctx, b.cfg.Timeout), err)
	}
	if int64(len(a.body)) > b.cfg.MaxResponseBytes {
		return a, Classed(failure.SchemaInvalid, 0, &Error{Provider: b.provider, Reason: ReasonBadResponse,
			Status: resp.StatusCode, RequestID: a.requestID, Detail: "response body over the size limit"})
	}
	return a, nil
}

// withRateLimit attaches what a's headers say about the limits to the
// completion or to the error's details.
func withRateLimit(a answer, comp Completion, err error) (Completion, error) {
	if a.resp == nil {
		return comp, err
	}
	rl := ParseRateLimit(a.resp.Header, time.Now())
	comp.RateLimit = rl
	if e, ok := Details(err); ok {
		e.RateLimit = rl
	}
	return comp, err
}

// complete runs one call with the configured timeout and the log record around do.
func (b *base) complete(ctx context.Context, p Prompt, do func(ctx context.Context) (Completion, int, error)) (Completion, error) {
	return b.completeWithin(ctx, p, b.cfg.Timeout, do)
}

// completeWithin is complete with the call's own timeout (one measured
// from the endpoint's pace).
func (b *base) completeWithin(ctx context.Context, p Prompt, timeout time.Duration, do func(ctx context.Context) (Completion, int, error)) (Completion, error) {
	ctx, cancel := context.WithTimeout(context.WithValue(ctx, timeoutKey{}, timeout), timeout)
	defer cancel()
	start := time.Now()
	comp, status, err := do(ctx)
	LogCall(ctx, b.log, b.provider, b.cfg.Model, p, start, comp, status, err)
	if err != nil {
		return Completion{}, err
	}
	return comp, nil
}

type timeoutKey struct{}

// callTimeout is the timeout the running call was given, for its error.
func callTimeout(ctx context.Context, configured time.Duration) time.Duration {
	if d, ok := ctx.Value(timeoutKey{}).(time.Duration); ok {
		return d
	}
	return configured
}
