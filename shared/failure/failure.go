// Package failure owns error classification: rules CL-1..CL-3
// (docs/guarantees.md) as stable classes, whether each is retryable, and an
// upstream's Retry-After. Packages wrap their errors with a class (Wrap);
// the stage runtime classifies once, at its edge (Classify).
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
	"time"
)

// Class is a stable, machine-readable error class. It appears in dead-letter
// payloads, logs and metrics; never rename one.
type Class string

const (
	NetworkTimeout Class = "NETWORK_TIMEOUT" // DNS/socket timeout, TCP reset, 502/503/504
	RateLimited    Class = "RATE_LIMITED"    // 429, provider rate_limit_exceeded, quota windows
	Upstream5xx    Class = "UPSTREAM_5XX"    // LLM internal_error, provider 500
	Conflict       Class = "CONFLICT"        // duplicate write race, optimistic-lock conflict
	SchemaInvalid  Class = "SCHEMA_INVALID"  // malformed payload, schema mismatch, missing fields
	AuthDenied     Class = "AUTH_DENIED"     // invalid key, expired token, 401/403
	NotFound       Class = "NOT_FOUND"       // 404 for an immutable input, deleted destination
	PolicyRejected Class = "POLICY_REJECTED" // moderation block, allow-list deny, business rule
	InternalBug    Class = "INTERNAL_BUG"    // nil dereference, invariant violation, bad config
	LeaseLost      Class = "LEASE_LOST"      // another worker owns the stage now; stop quietly
	// DeliveryUnconfirmed: a send may have happened, with no lookup to tell;
	// an operator decides (at-most-once wins for e-mail).
	DeliveryUnconfirmed Class = "DELIVERY_UNCONFIRMED"
	// SecurityFailure: a security safeguard cannot hold (the p4 server's key
	// changed, protections cannot prove changes are seen whole). Pages.
	SecurityFailure Class = "SECURITY_FAILURE"
	// ShelfNotPromoted: on a commit server, a shelved change whose shelf was
	// made on an edge server and never promoted to the commit server.
	ShelfNotPromoted Class = "SHELF_NOT_PROMOTED"
)

// Retryable reports whether rule CL-2 allows automatic retries for c.
func (c Class) Retryable() bool {
	switch c {
	case NetworkTimeout, RateLimited, Upstream5xx, Conflict:
		return true
	}
	return false
}

// Error is an error with a class and, optionally, an upstream's Retry-After
// and status code. UpstreamStatus is a structured status beside it (SMTP's
// RFC 3463 enhanced code): machine-made, so safe to store.
type Error struct {
	Class          Class
	RetryAfter     time.Duration
	UpstreamCode   int
	UpstreamStatus string
	Err            error
}

func (e *Error) Error() string {
	if e.Err == nil {
		return string(e.Class)
	}
	return fmt.Sprintf("%s: %v", e.Class, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Wrap attaches class c to err. A nil err yields nil.
func Wrap(c Class, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Class: c, Err: err}
}

// Errorf formats a new error of class c; %w verbs wrap as with fmt.Errorf.
func Errorf(c Class, format string, args ...any) error {
	return &Error{Class: c, Err: fmt.Errorf(format, args...)}
}

// Upstream builds the error for an upstream HTTP-style answer, classed by
// its status code.
func Upstream(status int, retryAfter time.Duration, err error) error {
	var c Class
	switch {
	case status == 429:
		c = RateLimited
	case status == 401 || status == 403:
		c = AuthDenied
	case status == 404 || status == 410:
		c = NotFound
	case status == 408 || status == 502 || status == 503 || status == 504:
		c = NetworkTimeout
	case status >= 500:
		c = Upstream5xx
	case status == 409:
		c = Conflict
	default:
		c = SchemaInvalid
	}
	return &Error{Class: c, RetryAfter: retryAfter, UpstreamCode: status, Err: err}
}

// Classify returns the outermost *Error's class in err's chain, else one
// from well-known transport errors, else InternalBug.
func Classify(err error) Class {
	if err == nil {
		return ""
	}
	var fe *Error
	if errors.As(err, &fe) {
		return fe.Class
	}
	var (
		ne     net.Error
		dnsErr *net.DNSError
		opErr  *net.OpError
		urlErr *url.Error
	)
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ETIMEDOUT),
		errors.As(err, &ne) && ne.Timeout(), errors.As(err, &dnsErr), errors.As(err, &opErr),
		// An HTTP request that met a closed connection ("Post …: EOF").
		errors.As(err, &urlErr) && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)):
		return NetworkTimeout
	}
	return InternalBug
}

// outer is the outermost *Error in err's chain, or a zero one.
func outer(err error) *Error {
	var fe *Error
	if errors.As(err, &fe) {
		return fe
	}
	return &Error{}
}

// RetryAfter returns the upstream-requested delay carried by err, if any.
func RetryAfter(err error) time.Duration { return outer(err).RetryAfter }

// UpstreamStatus returns the structured upstream status carried by err, if any.
func UpstreamStatus(err error) string { return outer(err).UpstreamStatus }

// UpstreamCode returns the upstream status code carried by err, if any.
func UpstreamCode(err error) int { return outer(err).UpstreamCode }
