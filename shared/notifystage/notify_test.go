package notifystage

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/decide"
	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/evidence"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/notify"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/recipients"
	"github.com/criticizer/criticizer/shared/smtpmail"
)

// fakeRows is an in-memory outbox with one row per key.
type fakeRows struct {
	rows  map[string]*outbox.Row
	calls []string
	next  int
}

func (f *fakeRows) row(k delivery.Key) *outbox.Row { return f.rows[k.Canonical().String()] }

func (f *fakeRows) Begin(_ context.Context, ref outbox.Ref, jobID string, now time.Time) (*outbox.Send, error) {
	f.calls = append(f.calls, "begin")
	k, _ := outbox.KeyOf(ref)
	r := f.row(k)
	if r == nil {
		r = &outbox.Row{Changelist: k.Changelist, ReviewVersion: k.ReviewVersion, Recipient: k.Canonical().Recipient, JobID: jobID, Status: outbox.Pending}
		f.rows[k.Canonical().String()] = r
	}
	switch {
	case r.NotifiedAt != "":
		return nil, outbox.ErrAlreadySent
	case r.Status == outbox.Sending:
		c := *r
		return nil, &outbox.InFlightError{Row: &c}
	case r.Status != outbox.Pending:
		return nil, failure.Errorf(failure.NotFound, "failed for good: %w", outbox.ErrFailed)
	}
	f.next++
	r.Status, r.SendStartedAt, r.SendToken = outbox.Sending, job.FormatTime(now), "tok"+string(rune('0'+f.next))
	r.Attempts++
	c := *r
	return &outbox.Send{Token: r.SendToken, Row: &c}, nil
}

func (f *fakeRows) MarkSent(_ context.Context, ref outbox.Ref, nid string, now time.Time) error {
	k, _ := outbox.KeyOf(ref)
	f.calls = append(f.calls, "mark_sent")
	r := f.row(k)
	if r.NotifiedAt == "" {
		r.Status, r.NotificationID, r.NotifiedAt = outbox.Sent, nid, job.FormatTime(now)
	}
	return nil
}

func (f *fakeRows) Release(_ context.Context, ref outbox.Ref, tok string, c failure.Class, msg string, permanent bool, _ time.Time) error {
	k, _ := outbox.KeyOf(ref)
	f.calls = append(f.calls, "release")
	r := f.row(k)
	if r.Status != outbox.Sending || r.SendToken != tok {
		return outbox.ErrConflict
	}
	r.Status, r.LastErrorClass, r.LastError = outbox.Pending, string(c), msg
	if permanent {
		r.Status = outbox.Failed
	}
	return nil
}

func (f *fakeRows) Reset(_ context.Context, ref outbox.Ref, tok string, _ time.Time) error {
	k, _ := outbox.KeyOf(ref)
	f.calls = append(f.calls, "reset")
	r := f.row(k)
	if r.Status != outbox.Sending || r.SendToken != tok {
		return outbox.ErrConflict
	}
	r.Status = outbox.Pending
	return nil
}

type fakeSender struct {
	sent []string
	msgs []*notify.Message
	err  error
}

func (s *fakeSender) Send(_ context.Context, k delivery.Key, m *notify.Message) (string, error) {
	if s.err != nil {
		return "", s.err
	}
	s.sent = append(s.sent, k.Recipient)
	s.msgs = append(s.msgs, m)
	return m.MessageID, nil
}

type fakeLog struct {
	has    map[string]bool
	err    error
	lookup int
}

func (l *fakeLog) Delivered(_ context.Context, id string) (bool, error) {
	l.lookup++
	return l.has[id], l.err
}

var (
	t0  = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	key = delivery.Key{Changelist: 42, Recipient: "Alice@Example.com ", ReviewVersion: 1}
)

func msg() *notify.Message {
	return &notify.Message{MessageID: key.MessageID("example.com"), To: "alice@example.com"}
}

// inFlight is a row whose send started at t0 and was never confirmed.
func inFlight() *fakeRows {
	return &fakeRows{rows: map[string]*outbox.Row{key.Canonical().String(): {
		Changelist: 42, ReviewVersion: 1, Recipient: "alice@example.com", Status: outbox.Sending,
		SendStartedAt: job.FormatTime(t0), SendToken: "old", Attempts: 1}}}
}

func stage(rows *fakeRows, s *fakeSender, dl smtpmail.Evidence, at time.Time) *Notify {
	return &Notify{Outbox: rows, Email: smtpmail.NewChannel(s.Send, dl), Window: 5 * time.Minute, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Now: func() time.Time { return at }}
}

func TestSettleBeforeResend(t *testing.T) {
	tests := []struct {
		name      string
		log       smtpmail.Evidence
		at        time.Time
		wantSent  int
		wantClass failure.Class
		wantRetry time.Duration // minimum Retry-After
		wantRow   outbox.Status
	}{
		// A send that may still complete at the provider is retried later,
		// never resent: the lookup's "not found" is not proof yet.
		{name: "not found inside the window: retry after the window", log: &fakeLog{}, at: t0.Add(time.Minute),
			wantClass: failure.Conflict, wantRetry: 4 * time.Minute, wantRow: outbox.Sending},
		{name: "not found after the window: reset and send once", log: &fakeLog{}, at: t0.Add(6 * time.Minute), wantSent: 1, wantRow: outbox.Sent},
		{name: "found: backfilled, not sent", log: &fakeLog{has: map[string]bool{key.MessageID("example.com"): true}}, at: t0.Add(time.Minute), wantRow: outbox.Sent},
		// No way to check: an operator decides. A blind resend fails here.
		{name: "no provider evidence: DELIVERY_UNCONFIRMED", log: nil, at: t0.Add(time.Hour), wantClass: failure.DeliveryUnconfirmed, wantRow: outbox.Sending},
		{name: "lookup failed: retryable, not sent", log: &fakeLog{err: failure.Errorf(failure.NetworkTimeout, "lookup")}, at: t0.Add(time.Hour),
			wantClass: failure.NetworkTimeout, wantRow: outbox.Sending},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, sender := inFlight(), &fakeSender{}
			var dl smtpmail.Evidence
			if tt.log != nil {
				dl = tt.log
			}
			did, err := stage(rows, sender, dl, tt.at).deliver(context.Background(), "j1", key, msg())
			if got := failure.Classify(err); got != tt.wantClass {
				t.Fatalf("error %v (class %q), want class %q", err, got, tt.wantClass)
			}
			if failure.RetryAfter(err) < tt.wantRetry {
				t.Errorf("retry after %s, want at least %s (the rest of the window)", failure.RetryAfter(err), tt.wantRetry)
			}
			if len(sender.sent) != tt.wantSent || did != (tt.wantSent > 0) {
				t.Errorf("sent %v (reported %v), want %d sends", sender.sent, did, tt.wantSent)
			}
			if r := rows.row(key); r.Status != tt.wantRow {
				t.Errorf("row %s, want %s", r.Status, tt.wantRow)
			}
		})
	}
}

func TestDelivery(t *testing.T) {
	t.Run("new row: created and marked sending in one write, sent, marked sent", func(t *testing.T) {
		rows, sender := &fakeRows{rows: map[string]*outbox.Row{}}, &fakeSender{}
		if _, err := stage(rows, sender, &fakeLog{}, t0).deliver(context.Background(), "j1", key, msg()); err != nil {
			t.Fatal(err)
		}
		if strings.Join(rows.calls, ",") != "begin,mark_sent" || len(sender.sent) != 1 {
			t.Fatalf("calls %v, sent %v: want begin, send, mark_sent", rows.calls, sender.sent)
		}
	})
	t.Run("sent row: nothing", func(t *testing.T) {
		rows, sender := &fakeRows{rows: map[string]*outbox.Row{key.Canonical().String(): {Status: outbox.Sent, NotifiedAt: "x"}}}, &fakeSender{}
		if did, err := stage(rows, sender, nil, t0).deliver(context.Background(), "j1", key, msg()); err != nil || did || len(sender.sent) != 0 {
			t.Fatalf("did %v, err %v, sent %v", did, err, sender.sent)
		}
	})
	t.Run("refused send: released with its class and reply code, never the reply text", func(t *testing.T) {
		rows := &fakeRows{rows: map[string]*outbox.Row{}}
		sender := &fakeSender{err: &failure.Error{Class: failure.Upstream5xx, UpstreamCode: 451, UpstreamStatus: "4.3.0", Err: errors.New("451 4.3.0 try later: password hunter2")}}
		_, err := stage(rows, sender, &fakeLog{}, t0).deliver(context.Background(), "j1", key, msg())
		r := rows.row(key)
		if failure.Classify(err) != failure.Upstream5xx || r.Status != outbox.Pending || r.LastError != "UPSTREAM_5XX (reply 451 4.3.0)" {
			t.Fatalf("err %v, row %+v: want pending again, the reply scrubbed", err, r)
		}
	})
	t.Run("outcome unknown: the row stays sending", func(t *testing.T) {
		rows := &fakeRows{rows: map[string]*outbox.Row{}}
		sender := &fakeSender{err: failure.Wrap(failure.NetworkTimeout, delivery.ErrOutcomeUnknown)}
		_, err := stage(rows, sender, &fakeLog{}, t0).deliver(context.Background(), "j1", key, msg())
		if !errors.Is(err, delivery.ErrOutcomeUnknown) || rows.row(key).Status != outbox.Sending {
			t.Fatalf("err %v, row %s: want the row left sending for reconciliation", err, rows.row(key).Status)
		}
	})
	t.Run("lease lost before the send: released, nothing sent", func(t *testing.T) {
		rows, sender := &fakeRows{rows: map[string]*outbox.Row{}}, &fakeSender{}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := stage(rows, sender, &fakeLog{}, t0).deliver(ctx, "j1", key, msg())
		if failure.Classify(err) != failure.LeaseLost || len(sender.sent) != 0 || rows.row(key).Status != outbox.Pending {
			t.Fatalf("err %v, sent %v, row %s", err, sender.sent, rows.row(key).Status)
		}
	})
}

// The SMTP completion window must outlast the longest send the client can
// make (it gives up after MaxSendDuration; the server may still finish the
// transaction it holds), with margin, and the client must fit in the default
// notify function timeout (the lease).
func TestSMTPWindowCoversTheClientTimeouts(t *testing.T) {
	send := smtpmail.MaxSendDuration(smtpmail.DefaultTimeout)
	if w := evidence.DefaultWindow("smtp"); w < send+time.Minute {
		t.Errorf("SMTP completion window %s, want ≥ %s (the longest send) + 1 min margin", w, send)
	}
	if lease := 60 * time.Second; send >= lease {
		t.Errorf("one SMTP send may take %s, not below the default notify timeout %s", send, lease)
	}
}

// TestNotifyNeverMailsOutsideThePolicy: the policy is checked again before
// every send (it may have tightened since fetch; a replayed job carries its
// old list): an outside address is skipped and recorded, the others are
// e-mailed, and a job with nobody left ends POLICY_REJECTED.
func TestNotifyNeverMailsOutsideThePolicy(t *testing.T) {
	policy, err := recipients.Parse([]string{"example.com"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	arts := artifacts.New(artifacts.NewMemoryBucket(), "red")
	ctx := context.Background()
	if err := arts.PutJSON(ctx, "jobs/j/result.json", domain.ReviewResult{SchemaVersion: "1", PromptVersion: "p1", Findings: []domain.Finding{}}); err != nil {
		t.Fatal(err)
	}
	if err := arts.PutJSON(ctx, "jobs/j/changeset.json", domain.Changeset{Changelist: 42, User: "alice", Status: "submitted", Description: "d\n"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		rcpts     []string
		wantSent  []string
		wantClass failure.Class
	}{
		{"mixed: the outside one is skipped", []string{"eve@attacker.example", "alice@example.com"}, []string{"alice@example.com"}, ""},
		{"nobody allowed: POLICY_REJECTED", []string{"eve@attacker.example"}, nil, failure.PolicyRejected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			rows, sender := &fakeRows{rows: map[string]*outbox.Row{}}, &fakeSender{}
			n := stage(rows, sender, &fakeLog{}, t0)
			n.Artifacts, n.From, n.Log = arts, "criticizer@example.com", slog.New(slog.NewJSONHandler(&logs, nil))
			n.Recipients = &recipients.Gate{Policy: policy, Log: n.Log, Stage: "notify"}
			j := &job.Job{ID: "j", Changelist: 42, ReviewVersion: 1, Recipients: tt.rcpts,
				Artifacts: job.Artifacts{Result: "jobs/j/result.json", Redacted: "jobs/j/changeset.json"}}
			if err := decideJob(&decide.Decider{Artifacts: arts}, j); err != nil {
				t.Fatal(err)
			}
			res, err := n.Process(ctx, j)
			if failure.Classify(err) != tt.wantClass {
				t.Fatalf("err = %v, want class %q", err, tt.wantClass)
			}
			if !slices.Equal(sender.sent, tt.wantSent) {
				t.Errorf("sent to %q, want %q", sender.sent, tt.wantSent)
			}
			if err == nil && !strings.Contains(res.Detail, "eve@attacker.example (domain_not_allowed)") {
				t.Errorf("history detail %q does not record the refusal", res.Detail)
			}
			if !strings.Contains(logs.String(), `"event":"recipient_rejected"`) {
				t.Errorf("no security event: %s", logs.String())
			}
			if rows.row(delivery.Key{Changelist: 42, Recipient: "eve@attacker.example", ReviewVersion: 1}) != nil {
				t.Error("an outbox row was written for a refused recipient")
			}
		})
	}
}
