package outbox

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
)

// memRecord is one row with the outbox's transitions, for the protocol alone.
type memRecord struct{ row Row }

func (m *memRecord) Begin(_ context.Context, _ Ref, _ string, now time.Time) (*Send, error) {
	switch {
	case m.row.NotifiedAt != "":
		return nil, ErrAlreadySent
	case m.row.Status == Sending:
		r := m.row
		return nil, &InFlightError{Row: &r}
	case m.row.Status == Failed:
		return nil, failure.Wrap(failure.NotFound, failedRow(m.row.LastErrorClass))
	}
	m.row.Status, m.row.SendToken, m.row.SendStartedAt = Sending, "tok", job.FormatTime(now)
	return &Send{Token: "tok"}, nil
}

func (m *memRecord) MarkSent(_ context.Context, _ Ref, id string, now time.Time) error {
	m.row.Status, m.row.NotificationID, m.row.NotifiedAt = Sent, id, job.FormatTime(now)
	return nil
}

func (m *memRecord) Release(_ context.Context, _ Ref, _ string, c failure.Class, _ string, permanent bool, _ time.Time) error {
	m.row.Status, m.row.LastErrorClass = Pending, string(c)
	if permanent {
		m.row.Status = Failed
	}
	return nil
}

func (m *memRecord) Reset(context.Context, Ref, string, time.Time) error {
	m.row.Status = Pending
	return nil
}

// fakeChannel sends a string, answering sendErr; its lookup answers found.
type fakeChannel struct {
	sends, lookups int
	sendErr        error
	found          bool
}

func (f *fakeChannel) Send(context.Context, string) (string, error) {
	f.sends++
	return "id-1", f.sendErr
}

func (f *fakeChannel) Lookup(context.Context, string, int64) (string, bool, error) {
	f.lookups++
	return "id-0", f.found, nil
}

func (f *fakeChannel) Classify(err error) delivery.Verdict {
	return delivery.Verdict{Class: failure.Classify(err), MaybeSent: errors.Is(err, delivery.ErrOutcomeUnknown)}
}

// The one protocol, whatever the channel: send then mark; a send that may
// have happened stays sending and is looked up, never repeated blind; a
// refusal releases the row, failed for good when its class says so.
func TestDeliverSendsOnceAndLooksUpBeforeAnyResend(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	inFlight := Row{Status: Sending, SendToken: "old", SendStartedAt: job.FormatTime(t0)}
	tests := []struct {
		name       string
		row        Row
		ch         fakeChannel
		at         time.Time
		wantStatus Status
		wantSends  int
		wantLookup int
		wantClass  failure.Class
	}{
		{name: "new: sent and marked", wantStatus: Sent, wantSends: 1},
		{name: "sent earlier: skipped", row: Row{Status: Sent, NotifiedAt: "x"}, wantStatus: Sent},
		{name: "answer lost: stays sending", ch: fakeChannel{sendErr: failure.Wrap(failure.NetworkTimeout, delivery.ErrOutcomeUnknown)},
			wantStatus: Sending, wantSends: 1, wantClass: failure.NetworkTimeout},
		{name: "refused for good: failed", ch: fakeChannel{sendErr: failure.Errorf(failure.AuthDenied, "401")},
			wantStatus: Failed, wantSends: 1, wantClass: failure.AuthDenied},
		{name: "refused, retryable: pending", ch: fakeChannel{sendErr: failure.Errorf(failure.RateLimited, "429")},
			wantStatus: Pending, wantSends: 1, wantClass: failure.RateLimited},
		{name: "in flight, found: backfilled, not sent", row: inFlight, ch: fakeChannel{found: true}, at: t0.Add(time.Minute),
			wantStatus: Sent, wantLookup: 1},
		{name: "in flight, not found in the window: waits", row: inFlight, at: t0.Add(time.Minute),
			wantStatus: Sending, wantLookup: 1, wantClass: failure.Conflict},
		{name: "in flight, not found after the window: sent once", row: inFlight, at: t0.Add(10 * time.Minute),
			wantStatus: Sent, wantSends: 1, wantLookup: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, ch := &memRecord{row: tt.row}, tt.ch
			at := tt.at
			if at.IsZero() {
				at = t0
			}
			p := Protocol{Ref: Item{Channel: "test", ID: "d"}, Name: "d", Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Window: 5 * time.Minute, Now: func() time.Time { return at }}
			did, err := Deliver(context.Background(), p, rec, delivery.Channel[string](&ch), "m")
			if got := failure.Classify(err); (err != nil || tt.wantClass != "") && got != tt.wantClass {
				t.Fatalf("error %v (class %s), want class %q", err, got, tt.wantClass)
			}
			if rec.row.Status != tt.wantStatus || ch.sends != tt.wantSends || ch.lookups != tt.wantLookup {
				t.Errorf("row %s, %d sends, %d lookups; want %s, %d, %d", rec.row.Status, ch.sends, ch.lookups, tt.wantStatus, tt.wantSends, tt.wantLookup)
			}
			if did != (tt.wantSends > 0 && err == nil) {
				t.Errorf("reported sent now = %v", did)
			}
		})
	}
}
