package smtpmail

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/criticizer/criticizer/internal/standin/smtp"
	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/letter"
	"github.com/criticizer/criticizer/shared/notify"
)

var testKey = delivery.Key{Changelist: 12345, Recipient: "alice@example.com", ReviewVersion: 1}

// testContent is a review with findings, composed the way the notify stage
// composes it.
func testContent() (letter.Content, notify.Envelope) {
	return letter.Content{
			Author: "alice", Description: "Fix login bug", JobID: "job-0001",
			Review: domain.ReviewResult{SchemaVersion: "1.0", PromptVersion: "1.2.0", Summary: "One issue.",
				Findings: []domain.Finding{{ID: "F1", Severity: "high", Category: "security", Title: "SQL built from input",
					File: "//depot/app/a.go", Line: 42, Message: "The query concatenates user input."}}},
		},
		notify.Envelope{From: "Criticizer <criticizer@example.com>", HTML: true, Date: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)}
}

// randomSecret makes a per-test credential: the spec forbids credentials
// hard-coded in tests, and a random one also proves nothing matches by luck.
func randomSecret(t *testing.T) string {
	t.Helper()
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

type harness struct {
	srv  *smtp.Server
	cfg  Config
	logs *bytes.Buffer
	log  *slog.Logger
}

func newHarness(t *testing.T, user, pass string) *harness {
	t.Helper()
	logs := &bytes.Buffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv := smtp.NewServer(smtp.Options{Username: user, Password: pass, Logger: log})
	addr, err := srv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	host, port, _ := net.SplitHostPort(addr)
	p, _ := strconv.Atoi(port)
	return &harness{srv: srv, logs: logs, log: log, cfg: Config{
		Host: host, Port: p, TLS: TLSNone, Username: user, Password: pass,
		From: "bounces@example.com", Timeout: 5 * time.Second, HELO: "criticizer.test",
	}}
}

func (h *harness) sender(t *testing.T) *Sender {
	t.Helper()
	s, err := New(h.cfg, h.log)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func composeTest(t *testing.T) *notify.Message {
	t.Helper()
	c, env := testContent()
	m, err := notify.Compose(testKey, c, env)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSMTPSenderSuccess(t *testing.T) {
	user, pass := "criticizer", randomSecret(t)
	h := newHarness(t, user, pass)
	m := composeTest(t)

	id, err := h.sender(t).Send(context.Background(), testKey, m)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if id != m.MessageID {
		t.Errorf("notification id = %q, want the Message-ID %q", id, m.MessageID)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.srv.WaitFor(ctx, 1); err != nil {
		t.Fatal(err)
	}
	got := h.srv.Messages()[0]
	want, _ := m.Bytes()
	if !bytes.Equal(got.Raw, want) {
		t.Errorf("bytes on the wire differ from Message.Bytes():\n%s\n----\n%s", got.Raw, want)
	}
	if got.MessageID != m.MessageID || got.From != "bounces@example.com" ||
		len(got.To) != 1 || got.To[0] != testKey.Recipient || got.Username != user {
		t.Errorf("stored message = id %q from %q to %v user %q", got.MessageID, got.From, got.To, got.Username)
	}
	// A second send of the same intent is byte-identical: the provider-side
	// duplicate is recognisable by Message-ID alone.
	if _, err := h.sender(t).Send(context.Background(), testKey, m); err != nil {
		t.Fatal(err)
	}
	if again := h.srv.Messages()[1]; !bytes.Equal(again.Raw, got.Raw) {
		t.Error("resend differs from the first send")
	}
	assertNoLeak(t, h.logs.String(), pass, m.Text)
}

func TestSMTPSenderErrors(t *testing.T) {
	tests := []struct {
		name      string
		fault     *smtp.Fault
		wrongPass bool
		noAuth    bool
		timeout   time.Duration
		class     failure.Class
		code      int
		unknown   bool // delivery.ErrOutcomeUnknown in the chain
		stored    int  // messages the server kept
	}{
		{name: "auth failure", wrongPass: true, class: failure.AuthDenied, code: 535},
		{name: "auth required", noAuth: true, class: failure.AuthDenied, code: 530},
		{name: "451 transient at rcpt", fault: &smtp.Fault{Stage: smtp.StageRcpt, Code: 451, Enhanced: "4.3.0"}, class: failure.Upstream5xx, code: 451},
		{name: "421 at mail", fault: &smtp.Fault{Stage: smtp.StageMail, Code: 421}, class: failure.Upstream5xx, code: 421},
		{name: "452 at data", fault: &smtp.Fault{Stage: smtp.StageData, Code: 452}, class: failure.Upstream5xx, code: 452},
		{name: "454 temporary auth failure", fault: &smtp.Fault{Stage: smtp.StageAuth, Code: 454, Enhanced: "4.7.0"}, class: failure.Upstream5xx, code: 454},
		{name: "550 no such user", fault: &smtp.Fault{Stage: smtp.StageRcpt, Code: 550, Enhanced: "5.1.1", Message: "No such user"}, class: failure.NotFound, code: 550},
		{name: "553 bad mailbox", fault: &smtp.Fault{Stage: smtp.StageRcpt, Code: 553, Enhanced: "5.1.3"}, class: failure.NotFound, code: 553},
		{name: "550 relay denied is policy", fault: &smtp.Fault{Stage: smtp.StageRcpt, Code: 550, Enhanced: "5.7.1"}, class: failure.PolicyRejected, code: 550},
		{name: "554 policy at data", fault: &smtp.Fault{Stage: smtp.StageData, Code: 554, Enhanced: "5.7.1", Message: "Spam"}, class: failure.PolicyRejected, code: 554},
		{name: "timeout", fault: &smtp.Fault{Stage: smtp.StageMail, Delay: 3 * time.Second}, timeout: 300 * time.Millisecond, class: failure.NetworkTimeout},
		{name: "dropped before data reply", fault: &smtp.Fault{Stage: smtp.StageData, Drop: true}, class: failure.NetworkTimeout, unknown: true, stored: 1},
		{name: "timeout awaiting data reply", fault: &smtp.Fault{Stage: smtp.StageData, Delay: 3 * time.Second}, timeout: 300 * time.Millisecond, class: failure.NetworkTimeout, unknown: true},
		{name: "dropped at rcpt", fault: &smtp.Fault{Stage: smtp.StageRcpt, Drop: true}, class: failure.NetworkTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pass := randomSecret(t)
			h := newHarness(t, "criticizer", pass)
			switch {
			case tt.wrongPass:
				h.cfg.Password = randomSecret(t)
			case tt.noAuth:
				h.cfg.Username, h.cfg.Password = "", ""
			}
			if tt.timeout > 0 {
				h.cfg.Timeout = tt.timeout
			}
			if tt.fault != nil {
				if err := h.srv.QueueFault(*tt.fault); err != nil {
					t.Fatal(err)
				}
			}
			m := composeTest(t)
			start := time.Now()
			id, err := h.sender(t).Send(context.Background(), testKey, m)
			if err == nil {
				t.Fatalf("Send succeeded with id %q", id)
			}
			t.Logf("err: %v", err)
			if tt.timeout > 0 && time.Since(start) > 2*time.Second {
				t.Errorf("timed-out send took %v", time.Since(start))
			}
			if got := failure.Classify(err); got != tt.class {
				t.Errorf("class = %s, want %s (err: %v)", got, tt.class, err)
			}
			if got := failure.UpstreamCode(err); got != tt.code {
				t.Errorf("upstream code = %d, want %d", got, tt.code)
			}
			if tt.fault != nil && tt.fault.Enhanced != "" {
				if got := failure.UpstreamStatus(err); got != tt.fault.Enhanced {
					t.Errorf("upstream status = %q, want the enhanced code %q", got, tt.fault.Enhanced)
				}
			}
			if got := errors.Is(err, delivery.ErrOutcomeUnknown); got != tt.unknown {
				t.Errorf("outcome unknown = %v, want %v", got, tt.unknown)
			}
			if got := len(h.srv.Messages()); got != tt.stored {
				t.Errorf("server stored %d messages, want %d", got, tt.stored)
			}
			if tt.stored > 0 && h.srv.Messages()[0].MessageID != m.MessageID {
				t.Error("the possibly-sent message is not findable by its Message-ID")
			}
			assertNoLeak(t, h.logs.String()+err.Error(), pass, m.Text)
			assertNoLeak(t, h.logs.String()+err.Error(), h.cfg.Password, "")
		})
	}
}

func TestSMTPSenderConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // nothing listens there now
	s, err := New(Config{Host: "127.0.0.1", Port: port, TLS: TLSNone, Timeout: time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Send(context.Background(), testKey, composeTest(t))
	if got := failure.Classify(err); got != failure.NetworkTimeout || !got.Retryable() {
		t.Errorf("class = %s, want retryable NETWORK_TIMEOUT (err: %v)", got, err)
	}
}

func TestSMTPSenderGuards(t *testing.T) {
	h := newHarness(t, "", "")
	s := h.sender(t)
	m := composeTest(t)
	other := delivery.Key{Changelist: testKey.Changelist, Recipient: testKey.Recipient, ReviewVersion: testKey.ReviewVersion + 1}
	if _, err := s.Send(context.Background(), other, m); failure.Classify(err) != failure.InternalBug {
		t.Errorf("key mismatch: err = %v, want INTERNAL_BUG", err)
	}
	if _, err := s.Send(context.Background(), testKey, nil); failure.Classify(err) != failure.InternalBug {
		t.Errorf("nil message: err = %v, want INTERNAL_BUG", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Send(ctx, testKey, m); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: err = %v", err)
	}
	if n := len(h.srv.Messages()); n != 0 {
		t.Errorf("guards let %d messages through", n)
	}
}

func TestNewSMTPSenderConfig(t *testing.T) {
	pass := randomSecret(t)
	tests := []struct {
		name     string
		cfg      Config
		wantErr  bool
		wantPort int
	}{
		{"starttls default port", Config{Host: "smtp.example.com"}, false, 587},
		{"implicit tls", Config{Host: "smtp.example.com", TLS: TLSImplicit}, false, 465},
		{"none", Config{Host: "localhost", TLS: TLSNone}, false, 25},
		{"explicit port kept", Config{Host: "h", Port: 2525, TLS: TLSNone}, false, 2525},
		{"no host", Config{}, true, 0},
		{"bad mode", Config{Host: "h", TLS: "ssl"}, true, 0},
		{"bad port", Config{Host: "h", Port: 70000}, true, 0},
		{"user without password", Config{Host: "h", Username: "u"}, true, 0},
		{"user and password", Config{Host: "h", Username: "u", Password: pass}, false, 587},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(tt.cfg, nil)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil {
				if failure.Classify(err) != failure.InternalBug {
					t.Errorf("config error class = %s, want INTERNAL_BUG", failure.Classify(err))
				}
				return
			}
			if s.cfg.Port != tt.wantPort {
				t.Errorf("port = %d, want %d", s.cfg.Port, tt.wantPort)
			}
		})
	}
}

func TestSMTPConfigMasksPassword(t *testing.T) {
	pass := randomSecret(t)
	cfg := Config{Host: "smtp.example.com", Username: "u", Password: pass}
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("config", "smtp", cfg)
	slog.New(slog.NewTextHandler(&logs, nil)).Info("config", "smtp", cfg)
	out := fmt.Sprintf("%v %+v %#v %s", cfg, cfg, cfg, cfg) + logs.String()
	assertNoLeak(t, out, pass, "")
	if !strings.Contains(out, redacted) {
		t.Errorf("masked output does not mark the password as redacted: %s", out)
	}
}

func assertNoLeak(t *testing.T, out, password, body string) {
	t.Helper()
	if password != "" && strings.Contains(out, password) {
		t.Errorf("output leaks the SMTP password:\n%s", out)
	}
	if body != "" && strings.Contains(out, strings.SplitN(body, "\n", 2)[0]) {
		t.Errorf("output leaks the e-mail body:\n%s", out)
	}
}
