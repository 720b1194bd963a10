package smtp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	netsmtp "net/smtp"
	"net/textproto"
	"strings"
	"testing"
	"time"
)

func start(t *testing.T, opts Options) *Server {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := NewServer(opts)
	if _, err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func secret(t *testing.T) string {
	t.Helper()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func rawMessage(id, subject string) []byte {
	return []byte("From: a@example.com\r\nTo: b@example.com\r\nMessage-ID: " + id +
		"\r\nSubject: " + subject + "\r\n\r\nFrom the body\r\nline two\r\n")
}

func send(s *Server, auth netsmtp.Auth, id string) error {
	return netsmtp.SendMail(s.Addr(), auth, "a@example.com", []string{"b@example.com"}, rawMessage(id, "hi"))
}

// code returns the SMTP reply code in err, 0 if there is none.
func code(err error) int {
	var te *textproto.Error
	if errors.As(err, &te) {
		return te.Code
	}
	return 0
}

func TestAcceptAndStore(t *testing.T) {
	s := start(t, Options{})
	if err := netsmtp.SendMail(s.Addr(), nil, "a@example.com", []string{"b@example.com", "c@example.com"},
		rawMessage("<m1@example.com>", "=?UTF-8?q?Gr=C3=BC=C3=9Fe?=")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.WaitFor(ctx, 1); err != nil {
		t.Fatal(err)
	}
	m := s.Messages()[0]
	if m.Seq != 1 || m.From != "a@example.com" || strings.Join(m.To, ",") != "b@example.com,c@example.com" {
		t.Errorf("envelope = seq %d from %q to %v", m.Seq, m.From, m.To)
	}
	if m.MessageID != "<m1@example.com>" || m.Subject != "Grüße" || m.Header.Get("To") != "b@example.com" {
		t.Errorf("parsed = id %q subject %q to %q", m.MessageID, m.Subject, m.Header.Get("To"))
	}
	if !bytes.HasSuffix(m.Raw, []byte("\r\nFrom the body\r\nline two\r\n")) {
		t.Errorf("raw = %q", m.Raw)
	}
}

func TestAuth(t *testing.T) {
	pass := secret(t)
	s := start(t, Options{Username: "u", Password: pass})
	tests := []struct {
		name string
		auth netsmtp.Auth
		code int
	}{
		{"no auth", nil, 530},
		{"wrong password", netsmtp.PlainAuth("", "u", secret(t), "127.0.0.1"), 535},
		{"wrong user", netsmtp.PlainAuth("", "v", pass, "127.0.0.1"), 535},
		{"right", netsmtp.PlainAuth("", "u", pass, "127.0.0.1"), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := code(send(s, tt.auth, "<a@x>")); got != tt.code {
				t.Errorf("reply code = %d, want %d", got, tt.code)
			}
		})
	}
	if msgs := s.Messages(); len(msgs) != 1 || msgs[0].Username != "u" {
		t.Errorf("messages = %+v, want one from user u", msgs)
	}
}

func TestFaults(t *testing.T) {
	tests := []struct {
		name   string
		faults []Fault
		codes  []int // reply code per consecutive send, 0 = accepted
	}{
		{"rcpt once", []Fault{{Stage: StageRcpt, Code: 451}}, []int{451, 0}},
		{"count two", []Fault{{Stage: StageMail, Code: 421, Count: 2}}, []int{421, 421, 0}},
		{"until reset", []Fault{{Stage: StageData, Code: 554, Count: -1}}, []int{554, 554, 554}},
		{"queue order per stage", []Fault{{Stage: StageRcpt, Code: 550}, {Stage: StageRcpt, Code: 452}}, []int{550, 452, 0}},
		{"stages independent", []Fault{{Stage: StageData, Code: 552}, {Stage: StageMail, Code: 450}}, []int{450, 552, 0}},
		{"auth", []Fault{{Stage: StageAuth, Code: 454}}, []int{454, 0}},
		{"slow but fine", []Fault{{Stage: StageMail, Delay: 50 * time.Millisecond}}, []int{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pass := secret(t)
			s := start(t, Options{Username: "u", Password: pass})
			for _, f := range tt.faults {
				if err := s.QueueFault(f); err != nil {
					t.Fatal(err)
				}
			}
			accepted := 0
			for i, want := range tt.codes {
				err := send(s, netsmtp.PlainAuth("", "u", pass, "127.0.0.1"), fmt.Sprintf("<%d@x>", i))
				if got := code(err); got != want || (want == 0 && err != nil) {
					t.Errorf("send %d: err %v, want code %d", i, err, want)
				}
				if want == 0 {
					accepted++
				}
			}
			if got := len(s.Messages()); got != accepted {
				t.Errorf("stored %d, want %d", got, accepted)
			}
		})
	}
}

func TestFaultEnhancedCodeAndMessage(t *testing.T) {
	s := start(t, Options{})
	_ = s.QueueFault(Fault{Stage: StageRcpt, Code: 550, Enhanced: "5.1.1", Message: "No such user"})
	err := send(s, nil, "<x@y>")
	var te *textproto.Error
	if !errors.As(err, &te) || te.Code != 550 || te.Msg != "5.1.1 No such user" {
		t.Errorf("err = %#v", err)
	}
}

func TestQueueFaultValidation(t *testing.T) {
	s := NewServer(Options{})
	for _, f := range []Fault{{Stage: "helo", Code: 451}, {Stage: StageRcpt, Code: 250}, {Stage: StageRcpt, Code: 600}, {Stage: StageMail, Delay: -time.Second}} {
		if err := s.QueueFault(f); err == nil {
			t.Errorf("QueueFault(%+v) accepted", f)
		}
	}
	if n := len(s.Faults()); n != 0 {
		t.Errorf("%d invalid faults queued", n)
	}
}

func TestDropAfterData(t *testing.T) {
	s := start(t, Options{})
	_ = s.QueueFault(Fault{Stage: StageData, Drop: true})
	err := send(s, nil, "<maybe@x>")
	if err == nil || code(err) != 0 {
		t.Fatalf("err = %v, want a connection error without a reply code", err)
	}
	// The provider kept it although the client saw a failure.
	if m := s.Messages(); len(m) != 1 || m[0].MessageID != "<maybe@x>" {
		t.Errorf("messages = %+v", m)
	}
	if err := send(s, nil, "<next@x>"); err != nil {
		t.Errorf("server unusable after a drop: %v", err)
	}
}

// A stalled reply to the final dot: the client gives up, the server still
// holds the message and accepts it when the stall ends. Until then the
// message is invisible, which is why one "not found" proves nothing.
func TestStalledDataReplyAcceptsAfterClientGaveUp(t *testing.T) {
	s := start(t, Options{})
	_ = s.QueueFault(Fault{Stage: StageData, Delay: 700 * time.Millisecond})
	c, err := netsmtp.Dial(s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Mail("a@example.com"); err != nil {
		t.Fatal(err)
	}
	if err := c.Rcpt("b@example.com"); err != nil {
		t.Fatal(err)
	}
	w, err := c.Data()
	if err != nil {
		t.Fatal(err)
	}
	_, _ = w.Write(rawMessage("<stalled@x>", "hi"))
	done := make(chan error, 1)
	go func() { done <- w.Close() }() // sends the dot, waits for the reply
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for s.Held() != 1 {
		if ctx.Err() != nil {
			t.Fatal("the DATA transaction was never held")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(s.Messages()); n != 0 {
		t.Fatalf("%d messages visible during the stall, want 0", n)
	}
	c.Close() // the client gives up (a timeout, or its process died)
	if err := s.WaitFor(ctx, 1); err != nil {
		t.Fatalf("the held message was not accepted after the stall: %v", err)
	}
	if m := s.Messages(); m[0].MessageID != "<stalled@x>" || s.Held() != 0 || s.Served()[StageData] != 1 {
		t.Fatalf("messages %+v held %d served %v", m, s.Held(), s.Served())
	}
	<-done
}

func TestWaitForAndReset(t *testing.T) {
	s := start(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := s.WaitFor(ctx, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitFor on an empty server = %v", err)
	}
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		done <- s.WaitFor(ctx, 2)
	}()
	for i := range 2 {
		if err := send(s, nil, fmt.Sprintf("<%d@x>", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Errorf("WaitFor(2) = %v", err)
	}
	_ = s.QueueFault(Fault{Stage: StageMail, Code: 451, Count: -1})
	s.Reset()
	if len(s.Messages()) != 0 || len(s.Faults()) != 0 {
		t.Error("Reset kept state")
	}
	if err := send(s, nil, "<after@x>"); err != nil {
		t.Errorf("send after Reset: %v", err)
	}
	if m := s.Messages(); len(m) != 1 || m[0].Seq != 3 {
		t.Errorf("after Reset: %+v (sequence numbers keep growing, so files never collide)", m)
	}
}

func TestControlAPI(t *testing.T) {
	s := start(t, Options{Control: true})
	base := "http://" + s.ControlAddr()
	post := func(path, body string) int {
		t.Helper()
		resp, err := http.Post(base+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	get := func(path string, v any) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatal(err)
		}
	}

	tests := []struct {
		body string
		want int
	}{
		{`{"stage":"rcpt","code":451}`, http.StatusNoContent},
		{`[{"stage":"mail","delay":"10ms"},{"stage":"data","drop":true}]`, http.StatusNoContent},
		{`{"stage":"helo","code":451}`, http.StatusBadRequest},
		{`[{"stage":"rcpt","code":451},{"stage":"rcpt","code":200}]`, http.StatusBadRequest},
		{`{"stage":"mail","delay":"soon"}`, http.StatusBadRequest},
		{`not json`, http.StatusBadRequest},
	}
	for _, tt := range tests {
		if got := post("/faults", tt.body); got != tt.want {
			t.Errorf("POST /faults %s = %d, want %d", tt.body, got, tt.want)
		}
	}
	var faults []faultJSON
	get("/faults", &faults)
	if len(faults) != 3 || faults[1].Delay != "10ms" || !faults[2].Drop {
		t.Errorf("GET /faults = %+v, want the 3 valid faults", faults)
	}
	if post("/reset", "") != http.StatusNoContent || len(s.Faults()) != 0 {
		t.Error("POST /reset did not clear the faults")
	}

	for _, id := range []string{"<one@x>", "<two@x>"} {
		if err := send(s, nil, id); err != nil {
			t.Fatal(err)
		}
	}
	var all, one, none []messageJSON
	get("/messages", &all)
	get("/messages?message_id=two@x", &one)
	get("/messages?to=nobody@x", &none)
	if len(all) != 2 || len(one) != 1 || one[0].MessageID != "<two@x>" || len(none) != 0 {
		t.Errorf("GET /messages: all %d, by id %+v, by to %d", len(all), one, len(none))
	}
	if !strings.Contains(one[0].Raw, "From the body") || one[0].To[0] != "b@example.com" {
		t.Errorf("message JSON = %+v", one[0])
	}
}
