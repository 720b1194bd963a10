package swarmevents

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"

	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
)

// Keys returns the secret's values that verify (current, then previous
// during a rotation); fresh bypasses a cache (webhook.SecretKeys).
type Keys func(ctx context.Context, fresh bool) ([][]byte, error)

// Claims deduplicates deliveries by id (Deliveries).
type Claims interface {
	Claim(ctx context.Context, id string) (bool, error)
	Release(ctx context.Context, id string) error
}

// Outcomes reads a review's reactions back from Swarm's API because an
// event pointed at it (outcome.Reader.Point): an event is never believed.
type Outcomes interface {
	Point(ctx context.Context, review int64) (written, found bool, err error)
}

// Receiver turns P4 Code Review's deliveries into outcome records.
type Receiver struct {
	Scheme   HMAC // verifies a delivery's signature and reads it
	Keys     Keys
	Claims   Claims
	Outcomes Outcomes
	Log      *slog.Logger
	Now      job.Clock
}

// Answer is the HTTP answer to one delivery: Code and Message on a refusal,
// Result ("recorded", "unchanged", "ignored", "duplicate") otherwise.
type Answer struct {
	Status        int
	Code, Message string
	Result        string
}

// Receive verifies, deduplicates and applies one delivery: a bad signature is
// 401, a retry 200 "duplicate", our failure 503 with the claim released for the
// retry. Signature and body are never logged.
func (r *Receiver) Receive(ctx context.Context, h Header, body []byte) Answer {
	if a, ok := r.verify(ctx, h, body); !ok {
		return a
	}
	d, err := r.Scheme.Parse(h, body)
	if err != nil {
		return Answer{Status: http.StatusBadRequest, Code: "malformed_event", Message: err.Error()}
	}
	log := r.Log.With("delivery_id", d.ID, "event", d.Event, "review", d.Review)
	first, err := r.Claims.Claim(ctx, d.ID)
	if err != nil {
		log.ErrorContext(ctx, "claiming a Swarm event delivery failed", "err", err, "error_class", failure.Classify(err))
		return unavailable()
	}
	if !first {
		log.InfoContext(ctx, "Swarm event delivery already received", "result", "duplicate")
		return Answer{Status: http.StatusOK, Result: "duplicate"}
	}
	result, err := r.apply(ctx, d)
	if err != nil {
		if rerr := r.Claims.Release(ctx, d.ID); rerr != nil {
			err = errors.Join(err, rerr) // the sweeper's read still records it
		}
		log.ErrorContext(ctx, "recording a Swarm event failed; P4 Code Review retries it", "err", err, "error_class", failure.Classify(err))
		return unavailable()
	}
	log.InfoContext(ctx, "Swarm event received", "result", result)
	return Answer{Status: http.StatusOK, Result: result}
}

// verify checks the signature, re-reading the secret once on a mismatch
// (it may have just rotated; webhook.SecretKeys bounds such reads).
func (r *Receiver) verify(ctx context.Context, h Header, body []byte) (Answer, bool) {
	check := func(fresh bool) error {
		keys, err := r.Keys(ctx, fresh)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(keys, func(k []byte) bool { return len(k) > 0 }) {
			return ErrEmptyKey // a misconfigured secret: refused, never a key that verifies everything
		}
		return r.Scheme.Verify(h, body, keys, r.Now.Now())
	}
	err := WithFreshKeys(check)
	switch {
	case err == nil:
		return Answer{}, true
	case errors.Is(err, ErrMissingSignature), errors.Is(err, ErrBadSignature), errors.Is(err, ErrBadTimestamp), errors.Is(err, ErrStaleTimestamp):
		r.Log.WarnContext(ctx, "Swarm event authentication failed", "reason", err.Error())
		return Answer{Status: http.StatusUnauthorized, Code: err.Error(), Message: rejections[err]}, false
	}
	r.Log.ErrorContext(ctx, "loading the Swarm events secret failed", "err", err, "error_class", failure.Classify(err))
	return unavailable(), false
}

// WithFreshKeys runs check with the cached secret and, on ErrBadSignature,
// once more with it re-read: it may have just rotated. Every receiver that
// verifies a caller against a secret (these events, the webhook's HMAC and
// bearer token) retries this one way.
func WithFreshKeys(check func(fresh bool) error) error {
	err := check(false)
	if errors.Is(err, ErrBadSignature) {
		err = check(true)
	}
	return err
}

// ErrEmptyKey is the refusal of an events secret that holds no key: every delivery is refused
// (503, logged as the secret's fault) until it does.
var ErrEmptyKey = errors.New("the Swarm events secret holds an empty key")

var rejections = map[error]string{
	ErrMissingSignature: "the delivery carries no signature",
	ErrBadSignature:     "signature does not match",
	ErrBadTimestamp:     "the delivery's timestamp must be Unix seconds",
	ErrStaleTimestamp:   "the delivery's timestamp is outside the accepted tolerance",
}

// apply reads back the review a comment event names, never trusting the event's
// copy; other events, or reviews without our findings, are ignored.
func (r *Receiver) apply(ctx context.Context, d Delivery) (string, error) {
	if d.Comment == nil || d.Review <= 0 {
		return "ignored", nil
	}
	written, found, err := r.Outcomes.Point(ctx, d.Review)
	switch {
	case err != nil:
		return "", err
	case !found:
		return "ignored", nil
	case written:
		return "recorded", nil
	}
	return "unchanged", nil
}

func unavailable() Answer {
	return Answer{Status: http.StatusServiceUnavailable, Code: "unavailable", Message: "temporarily unavailable; P4 Code Review retries the delivery"}
}
