// Package outboxtest is the conformance suite every delivery channel passes, as
// one driver suite runs over every driver: each channel's test runs
// RunChannelSuite over its provider's stand-in, through outbox.Deliver and real
// rows on the in-memory table. It checks what a user would notice: one delivery
// however often retried, a crash between send and mark settled by lookup and
// never sent twice, permanent refusals told from transient ones, no upstream
// text in a row.
package outboxtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
)

// Harness is one channel over its provider, for the suite.
type Harness[M any] struct {
	Channel delivery.Channel[M]
	// Delivery is the i-th distinct delivery: its row and its message.
	Delivery func(i int) (outbox.Ref, M)
	// Delivered is how many of delivery i the provider holds: what the
	// user sees (e-mails in the mailbox, comments on the review).
	Delivered func(t *testing.T, i int) int
	// Refuse makes the provider refuse the next send, for good (a 5xx, a
	// 401) or for now (a 4xx, a 429), its reply carrying text.
	Refuse func(t *testing.T, permanent bool, text string)
	// Window is the channel's completion window (0: a send is final when
	// Send returns).
	Window time.Duration
	// KeepPending is the channel's Protocol.KeepPending: a refusal never
	// fails its row for good (the digest).
	KeepPending bool
}

// RunChannelSuite runs the conformance suite over the channel newHarness
// returns, a fresh one (and provider) per case.
func RunChannelSuite[M any](t *testing.T, newHarness func(t *testing.T) Harness[M]) {
	cases := []struct {
		name string
		run  func(*testing.T, *run[M])
	}{
		{"delivered once under retries", onceUnderRetries[M]},
		{"a crash after the send is settled by lookup, not sent twice", crashAfterSend[M]},
		{"a crash before the send is sent once after the window", crashBeforeSend[M]},
		{"a permanent refusal fails the row for good", func(t *testing.T, r *run[M]) { refusal(t, r, true) }},
		{"a transient refusal is sent on retry", func(t *testing.T, r *run[M]) { refusal(t, r, false) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, start(t, newHarness(t))) })
	}
}

func onceUnderRetries[M any](t *testing.T, r *run[M]) {
	if sent, err := r.deliver(t, 0); !sent || err != nil {
		t.Fatalf("first attempt: sent %v, %v; want sent", sent, err)
	}
	for range 2 {
		if sent, err := r.deliver(t, 0); sent || err != nil {
			t.Fatalf("retry: sent %v, %v; want skipped, its row sent", sent, err)
		}
	}
	r.want(t, 0, 1, outbox.Sent)
}

func crashAfterSend[M any](t *testing.T, r *run[M]) {
	r.rows.crash = true
	if sent, err := r.deliver(t, 0); !sent || err == nil {
		t.Fatalf("crashed attempt: sent %v, %v; want sent and the mark lost", sent, err)
	}
	r.rows.crash = false
	r.now = r.now.Add(r.h.Window + time.Second) // past the window: only the lookup holds a resend back
	// A channel whose send is idempotent at the provider (a task change)
	// may send again; what the user sees is the same.
	for range 2 {
		if _, err := r.deliver(t, 0); err != nil {
			t.Fatalf("retry after the crash: %v; want settled as sent", err)
		}
	}
	r.want(t, 0, 1, outbox.Sent)
}

func crashBeforeSend[M any](t *testing.T, r *run[M]) {
	ref, _ := r.h.Delivery(0)
	if _, err := r.rows.Begin(context.Background(), ref, "job-1", r.now); err != nil {
		t.Fatal(err)
	}
	if r.h.Window > 0 {
		if sent, err := r.deliver(t, 0); sent || !errors.Is(err, outbox.ErrInFlight) {
			t.Fatalf("within the window: sent %v, %v; want it left in flight", sent, err)
		}
		r.want(t, 0, 0, outbox.Sending)
	}
	r.now = r.now.Add(r.h.Window + time.Second)
	if sent, err := r.deliver(t, 0); !sent || err != nil {
		t.Fatalf("after the window: sent %v, %v; want sent", sent, err)
	}
	r.want(t, 0, 1, outbox.Sent)
}

// refusal: the provider refuses with text in its reply; the row is failed
// for good or pending by the refusal's class, and keeps none of the text.
func refusal[M any](t *testing.T, r *run[M], permanent bool) {
	secret := "upstream-" + fmt.Sprint(time.Now().UnixNano())
	r.h.Refuse(t, permanent, secret)
	sent, err := r.deliver(t, 0)
	if sent || err == nil {
		t.Fatalf("refused send: sent %v, %v; want an error", sent, err)
	}
	if v := r.h.Channel.Classify(err); v.MaybeSent || v.Class.Retryable() == permanent {
		t.Fatalf("refusal classified %+v (%v); want permanent=%v, certainly not sent", v, err, permanent)
	}
	status := outbox.Pending
	if permanent && !r.h.KeepPending {
		status = outbox.Failed
	}
	row := r.want(t, 0, 0, status)
	if s := fmt.Sprintf("%+v", *row); strings.Contains(s, secret) {
		t.Fatalf("the row keeps the provider's reply text: %s", s)
	}
	if status == outbox.Failed {
		if _, err := r.deliver(t, 0); !errors.Is(err, outbox.ErrFailed) {
			t.Fatalf("retry of a row failed for good: %v; want ErrFailed, nothing sent", err)
		}
		r.want(t, 0, 0, outbox.Failed)
		return
	}
	if sent, err := r.deliver(t, 0); !sent || err != nil {
		t.Fatalf("retry: sent %v, %v; want sent", sent, err)
	}
	r.want(t, 0, 1, outbox.Sent)
}

// run is one case: the harness, its rows and the clock.
type run[M any] struct {
	h    Harness[M]
	o    *outbox.Outbox
	rows *crashing
	now  time.Time
}

func start[M any](t *testing.T, h Harness[M]) *run[M] {
	t.Helper()
	o := outbox.New(dynamotest.New(), dynamotest.Table).WithActor("conformance")
	return &run[M]{h: h, o: o, rows: &crashing{Rows: o}, now: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)}
}

func (r *run[M]) deliver(t *testing.T, i int) (bool, error) {
	t.Helper()
	ref, m := r.h.Delivery(i)
	p := outbox.Protocol{Ref: ref, JobID: "job-1", KeepPending: r.h.KeepPending, Name: ref.String(), Window: r.h.Window,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return r.now }}
	return outbox.Deliver(context.Background(), p, r.rows, r.h.Channel, m)
}

// want checks that the provider holds n of delivery i and its row is in
// status, and returns the row.
func (r *run[M]) want(t *testing.T, i, n int, status outbox.Status) *outbox.Row {
	t.Helper()
	if got := r.h.Delivered(t, i); got != n {
		t.Fatalf("the provider holds %d of delivery %d, want %d", got, i, n)
	}
	ref, _ := r.h.Delivery(i)
	row, err := r.o.Get(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	if row.Status != status {
		t.Fatalf("row %s is %s, want %s", ref, row.Status, status)
	}
	return row
}

// crashing loses the row's mark while crash holds: the function died after
// the provider accepted the send.
type crashing struct {
	outbox.Rows
	crash bool
}

func (c *crashing) MarkSent(ctx context.Context, k outbox.Ref, evidence string, now time.Time) error {
	if c.crash {
		return failure.Errorf(failure.NetworkTimeout, "function timed out")
	}
	return c.Rows.MarkSent(ctx, k, evidence, now)
}
