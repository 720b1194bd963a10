package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/outbox"
)

// rowFixture is one outbox scenario's rows and clock.
type rowFixture struct {
	scenario
	o  *outbox.Outbox
	t0 time.Time
	k  delivery.Key
}

func (f *rowFixture) row() *outbox.Row {
	f.t.Helper()
	r, err := f.o.Get(f.ctx, outbox.Email(f.k))
	f.ok(err)
	return r
}

// settled checks a reconciler's write: applied or refused as want says.
func (f *rowFixture) settled(what string, want bool) func(bool, error) {
	return func(ok bool, err error) {
		f.t.Helper()
		if err != nil || ok != want {
			f.t.Fatalf("%s: applied %v, %v; want applied %v", what, ok, err, want)
		}
	}
}

func (f *rowFixture) begin(at time.Time) *outbox.Send {
	f.t.Helper()
	s, err := f.o.Begin(f.ctx, outbox.Email(f.k), "job-1", at)
	f.is("begin", nil, err)
	return s
}

// status asserts the row's status and whether it counts as notified.
func (f *rowFixture) status(want outbox.Status, notified bool) {
	f.t.Helper()
	r := f.row()
	if r.Status != want || (r.NotifiedAt != "") != notified {
		f.t.Fatalf("row %s notified_at %q, want %s notified=%v", r.Status, r.NotifiedAt, want, notified)
	}
}

func runOutbox(t *testing.T, rows *outbox.Outbox) {
	for name, run := range map[string]func(f *rowFixture){
		"outbox/begin then mark sent":              beginMark,
		"outbox/one send in flight":                beginInFlight,
		"outbox/release settles only its attempt":  releaseOwn,
		"outbox/permanent release ends the row":    releasePermanent,
		"outbox/reset after settling":              resetSettled,
		"outbox/reconcile: evidence backfills":     reconcileBackfill,
		"outbox/reconcile: no evidence requeues":   reconcileRequeue,
		"outbox/reconcile: a row moved on is kept": reconcileMovedOn,
	} {
		t.Run(name, func(t *testing.T) {
			n := newNames()
			f := &rowFixture{scenario: scenario{t, context.Background()}, o: rows, t0: start(),
				k: delivery.Key{Changelist: changelist(), Recipient: n.id("dev") + "@example.com", ReviewVersion: 1}}
			run(f)
		})
	}
}

func beginMark(f *rowFixture) {
	s := f.begin(f.t0)
	if s.Row.Status != outbox.Sending || s.Row.Attempts != 1 {
		f.t.Fatalf("begun row %s attempts %d", s.Row.Status, s.Row.Attempts)
	}
	f.ok(f.o.MarkSent(f.ctx, outbox.Email(f.k), "msg-1", f.t0))
	f.status(outbox.Sent, true)
	f.answers("begin of a sent row", outbox.ErrAlreadySent)(f.o.Begin(f.ctx, outbox.Email(f.k), "job-2", f.t0.Add(time.Hour)))
	// Marked again (a retry, or a reconciliation): stays sent with its id.
	f.ok(f.o.MarkSent(f.ctx, outbox.Email(f.k), "msg-2", f.t0.Add(time.Minute)))
	if r := f.row(); r.NotificationID != "msg-1" {
		f.t.Fatalf("a sent row's notification id changed to %s", r.NotificationID)
	}
}

func beginInFlight(f *rowFixture) {
	f.begin(f.t0)
	_, err := f.o.Begin(f.ctx, outbox.Email(f.k), "job-1", f.t0.Add(time.Hour))
	var inflight *outbox.InFlightError
	if !errors.As(err, &inflight) || inflight.Row.Status != outbox.Sending {
		f.t.Fatalf("begin while a send is in flight: %v", err)
	}
	if r := f.row(); r.Attempts != 1 {
		f.t.Fatalf("a refused begin counted an attempt: %d", r.Attempts)
	}
}

func releaseOwn(f *rowFixture) {
	first := f.begin(f.t0)
	f.ok(f.o.Release(f.ctx, outbox.Email(f.k), first.Token, failure.RateLimited, "slow down", false, f.t0))
	f.status(outbox.Pending, false)
	second := f.begin(f.t0.Add(time.Minute))
	if r := f.row(); r.Attempts != 2 {
		f.t.Fatalf("attempts %d after two begins", r.Attempts)
	}
	// A late release of the first attempt does not settle the second.
	if err := f.o.Release(f.ctx, outbox.Email(f.k), first.Token, failure.RateLimited, "late", false, f.t0.Add(2*time.Minute)); !errors.Is(err, outbox.ErrConflict) {
		f.t.Fatalf("a stale release: %v, want a conflict", err)
	}
	f.status(outbox.Sending, false)
	f.ok(f.o.MarkSent(f.ctx, outbox.Email(f.k), "msg-2", f.t0.Add(2*time.Minute)))
	// Nor does a release after the send was marked.
	if err := f.o.Release(f.ctx, outbox.Email(f.k), second.Token, failure.RateLimited, "late", false, f.t0.Add(3*time.Minute)); err == nil {
		f.t.Fatal("a sent row was released")
	}
	f.status(outbox.Sent, true)
}

func releasePermanent(f *rowFixture) {
	s := f.begin(f.t0)
	f.ok(f.o.Release(f.ctx, outbox.Email(f.k), s.Token, failure.SchemaInvalid, "mailbox does not exist", true, f.t0))
	f.status(outbox.Failed, false)
	if _, err := f.o.Begin(f.ctx, outbox.Email(f.k), "job-1", f.t0.Add(time.Minute)); err == nil || failure.Classify(err) != failure.NotFound {
		f.t.Fatalf("begin of a row that failed for good: %v", err)
	}
}

func resetSettled(f *rowFixture) {
	s := f.begin(f.t0)
	f.is("a reset naming another attempt", outbox.ErrConflict, f.o.Reset(f.ctx, outbox.Email(f.k), "another-token", f.t0))
	f.status(outbox.Sending, false)
	f.ok(f.o.Reset(f.ctx, outbox.Email(f.k), s.Token, f.t0))
	f.status(outbox.Pending, false)
	f.begin(f.t0.Add(time.Minute))
}

// inDoubt begins a send and marks it reconciling, as the reconciler does
// with a send stuck past the provider's window.
func (f *rowFixture) inDoubt() outbox.Ref {
	f.t.Helper()
	f.begin(f.t0)
	ref := outbox.Email(f.k)
	f.settled("mark reconciling", true)(f.o.MarkReconciling(f.ctx, ref, outbox.Sending, "stuck", f.t0.Add(time.Hour)))
	f.status(outbox.Reconciling, false)
	if _, err := f.o.Begin(f.ctx, outbox.Email(f.k), "job-1", f.t0.Add(time.Hour)); err == nil {
		f.t.Fatal("a row in doubt was begun again")
	}
	return ref
}

func reconcileBackfill(f *rowFixture) {
	ref := f.inDoubt()
	f.settled("backfill", true)(f.o.Backfill(f.ctx, ref, "ses:evidence", f.t0.Add(2*time.Hour)))
	f.status(outbox.Sent, true)
	if r := f.row(); r.NotificationID != "ses:evidence" {
		f.t.Fatalf("backfilled notification id %q", r.NotificationID)
	}
	f.answers("begin after backfill", outbox.ErrAlreadySent)(f.o.Begin(f.ctx, outbox.Email(f.k), "job-1", f.t0.Add(3*time.Hour)))
}

// reconcileRequeue: a row in doubt with no evidence is sent again, once;
// its sent markers go with it, or the resend would be refused as sent.
func reconcileRequeue(f *rowFixture) {
	f.begin(f.t0)
	f.ok(f.o.MarkSent(f.ctx, outbox.Email(f.k), "msg-1", f.t0))
	ref := outbox.Email(f.k)
	// Sent with no evidence at the provider: in doubt.
	f.settled("mark reconciling", true)(f.o.MarkReconciling(f.ctx, ref, outbox.Sent, "no evidence", f.t0.Add(time.Hour)))
	f.settled("requeue", true)(f.o.RequeueReconciled(f.ctx, ref, f.t0.Add(2*time.Hour)))
	f.status(outbox.Pending, false)
	f.begin(f.t0.Add(3 * time.Hour))
	// In doubt a second time: the reconciler leaves it to an operator.
	f.settled("mark reconciling", true)(f.o.MarkReconciling(f.ctx, ref, outbox.Sending, "stuck again", f.t0.Add(4*time.Hour)))
	f.settled("a second automatic requeue", false)(f.o.RequeueReconciled(f.ctx, ref, f.t0.Add(5*time.Hour)))
	f.status(outbox.Reconciling, false)
	// The operator's word settles it.
	f.ok(f.o.Resolve(f.ctx, ref, false, "checked the provider", f.t0.Add(6*time.Hour)))
	f.status(outbox.Pending, false)
}

func reconcileMovedOn(f *rowFixture) {
	s := f.begin(f.t0)
	ref := outbox.Email(f.k)
	// Only a row in doubt is settled: a send in flight is not backfilled
	// as sent, nor a pending row (never sent) marked so.
	f.settled("backfill of a row that is not reconciling", false)(f.o.Backfill(f.ctx, ref, "ses:evidence", f.t0))
	f.status(outbox.Sending, false)
	f.ok(f.o.Release(f.ctx, outbox.Email(f.k), s.Token, failure.RateLimited, "slow down", false, f.t0))
	f.settled("backfill of a pending row", false)(f.o.Backfill(f.ctx, ref, "ses:evidence", f.t0))
	f.status(outbox.Pending, false)
	f.begin(f.t0)
	f.ok(f.o.MarkSent(f.ctx, outbox.Email(f.k), "msg-1", f.t0))
	// The reconciler saw the row sending; it was marked sent since.
	f.settled("mark reconciling of a row that moved on", false)(f.o.MarkReconciling(f.ctx, ref, outbox.Sending, "stuck", f.t0.Add(time.Hour)))
	f.settled("requeue of a row not reconciling", false)(f.o.RequeueReconciled(f.ctx, ref, f.t0.Add(time.Hour)))
	if err := f.o.Resolve(f.ctx, ref, false, "x", f.t0.Add(time.Hour)); err == nil {
		f.t.Fatal("resolve of a row not reconciling was applied")
	}
	f.status(outbox.Sent, true)
}
