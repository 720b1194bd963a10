package failure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"
)

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// One row per example in the spec's failure classification table.
func TestClassifySpecTable(t *testing.T) {
	tests := []struct {
		category string
		err      error
		want     Class
	}{
		// Network transient → retryable
		{"DNS timeout", &net.DNSError{Err: "timeout", Name: "llm.example.com", IsTimeout: true}, NetworkTimeout},
		{"socket timeout", fmt.Errorf("read: %w", timeoutErr{}), NetworkTimeout},
		{"HTTP connection closed before the answer", &url.Error{Op: "Post", URL: "https://swarm.example.com/api/v9/comments", Err: io.EOF}, NetworkTimeout},
		{"HTTP answer cut short", &url.Error{Op: "Get", URL: "https://llm.example.com/v1", Err: io.ErrUnexpectedEOF}, NetworkTimeout},
		{"bare EOF outside a request is still a bug", io.EOF, InternalBug},
		{"TCP reset", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, NetworkTimeout},
		{"connection refused", fmt.Errorf("dial: %w", syscall.ECONNREFUSED), NetworkTimeout},
		{"deadline", fmt.Errorf("call: %w", context.DeadlineExceeded), NetworkTimeout},
		{"502 from upstream", Upstream(502, 0, errors.New("bad gateway")), NetworkTimeout},
		{"503 from upstream", Upstream(503, 0, errors.New("unavailable")), NetworkTimeout},
		{"504 from upstream", Upstream(504, 0, errors.New("gateway timeout")), NetworkTimeout},
		// Rate limiting → retryable, Retry-After kept
		{"HTTP 429", Upstream(429, 7*time.Second, errors.New("slow down")), RateLimited},
		{"provider rate_limit_exceeded", Errorf(RateLimited, "rate_limit_exceeded"), RateLimited},
		// Upstream internal errors → retryable
		{"LLM internal_error", Upstream(500, 0, errors.New("internal_error")), Upstream5xx},
		{"webhook provider 5xx", Upstream(507, 0, errors.New("insufficient storage")), Upstream5xx},
		// Idempotency / optimistic-lock conflicts → retryable
		{"version conflict", Upstream(409, 0, errors.New("conflict")), Conflict},
		{"duplicate write race", Wrap(Conflict, errors.New("TransactionConflict")), Conflict},
		// Validation and schema → non-retryable
		{"malformed JSON payload", Wrap(SchemaInvalid, errors.New("unexpected EOF")), SchemaInvalid},
		{"schema mismatch 400", Upstream(400, 0, errors.New("bad request")), SchemaInvalid},
		// Authentication / authorization → non-retryable
		{"invalid API key", Upstream(401, 0, errors.New("unauthorized")), AuthDenied},
		{"permission denied", Upstream(403, 0, errors.New("forbidden")), AuthDenied},
		// Not found / permanent → non-retryable
		{"404 immutable input", Upstream(404, 0, errors.New("no such changelist")), NotFound},
		{"deleted destination", Upstream(410, 0, errors.New("gone")), NotFound},
		// Content policy → non-retryable
		{"moderation block", Wrap(PolicyRejected, errors.New("content_filter")), PolicyRejected},
		// Configuration / runtime bug → non-retryable
		{"invariant violation", Errorf(InternalBug, "job reached notify without artifacts"), InternalBug},
		{"unclassified error is a bug", errors.New("nil pointer dereference"), InternalBug},
	}
	for _, tt := range tests {
		t.Run(tt.category, func(t *testing.T) {
			if got := Classify(tt.err); got != tt.want {
				t.Fatalf("Classify(%v) = %s, want %s", tt.err, got, tt.want)
			}
		})
	}
}

func TestRetryable(t *testing.T) {
	retryable := map[Class]bool{NetworkTimeout: true, RateLimited: true, Upstream5xx: true, Conflict: true,
		SchemaInvalid: false, AuthDenied: false, NotFound: false, PolicyRejected: false, InternalBug: false, LeaseLost: false, DeliveryUnconfirmed: false,
		SecurityFailure: false, ShelfNotPromoted: false}
	for c, want := range retryable {
		if c.Retryable() != want {
			t.Errorf("%s.Retryable() = %v, want %v", c, c.Retryable(), want)
		}
	}
}

// The outermost class wins: a stage re-classifying a wrapped error (e.g. a
// retryable error found to be permanent) is honoured.
func TestOutermostClassWins(t *testing.T) {
	inner := Upstream(503, 0, errors.New("unavailable"))
	outer := Wrap(PolicyRejected, fmt.Errorf("giving up: %w", inner))
	if Classify(outer) != PolicyRejected {
		t.Fatalf("Classify = %s", Classify(outer))
	}
	if RetryAfter(Upstream(429, 3*time.Second, nil)) != 3*time.Second || UpstreamCode(fmt.Errorf("x: %w", inner)) != 503 {
		t.Fatal("Retry-After or upstream code lost through wrapping")
	}
	if Wrap(NotFound, nil) != nil || Classify(nil) != "" {
		t.Fatal("nil handling")
	}
}
