package p4

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/failure"
)

// credSource is a CredentialSource whose current value a test rotates.
type credSource struct {
	mu    sync.Mutex
	cur   Credential
	next  *Credential // what a fresh read returns (a rotation)
	reads int
}

func (c *credSource) Get(_ context.Context, fresh bool) (Credential, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads++
	if fresh && c.next != nil {
		c.cur, c.next = *c.next, nil
		return c.cur, true, nil
	}
	return c.cur, false, nil
}

func passwordDepot(t *testing.T) string {
	t.Helper()
	d := fixtureDepot(t)
	if err := os.WriteFile(filepath.Join(d, "server.json"), []byte(`{"password":"service-pw-1"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return d
}

func issuedTickets(t *testing.T, depotDir string) []string {
	t.Helper()
	entries, _ := os.ReadDir(filepath.Join(depotDir, ".state", "tickets"))
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// TestPasswordLoginRenewedAtEveryExpiry: one warm runner logs in once,
// with an all-hosts ticket that survives a change of outbound address, and
// logs in again at each expiry: twice in one process, each command
// succeeding after one re-login.
func TestPasswordLoginRenewedAtEveryExpiry(t *testing.T) {
	depotDir := passwordDepot(t)
	tickets := filepath.Join(t.TempDir(), "tickets")
	r, logs := newTestRunner(t, depotDir, func(c *Config) { c.Tickets = tickets })
	r.SetCredentials(&credSource{cur: Credential{Password: "service-pw-1"}})
	ctx := context.Background()

	for range 3 {
		if _, err := r.Run(ctx, "describe", "-s", "12345"); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(issuedTickets(t, depotDir)); n != 1 {
		t.Errorf("%d logins for three commands, want 1", n)
	}
	if b, _ := os.ReadFile(tickets); !strings.Contains(string(b), "=criticizer:") {
		t.Errorf("tickets file %q holds no ticket", b)
	}
	if strings.Contains(logs.String(), "service-pw-1") {
		t.Error("the password reached a log line")
	}
	// The function's outbound address changes: an all-hosts ticket holds.
	setClientAddress(t, depotDir, "10.0.7.9")
	if _, err := r.Run(ctx, "describe", "-s", "12345"); err != nil || len(issuedTickets(t, depotDir)) != 1 {
		t.Fatalf("after an address change: %v, %d tickets; want the same ticket to work", err, len(issuedTickets(t, depotDir)))
	}
	for i := 1; i <= 2; i++ {
		expireTickets(t, depotDir)
		if _, err := r.Run(ctx, "describe", "-s", "12345"); err != nil {
			t.Fatalf("after expiry %d: %v", i, err)
		}
		if n := strings.Count(logs.String(), `"event":"p4_relogin"`); n != i {
			t.Errorf("after expiry %d: %d re-logins logged", i, n)
		}
	}
}

// expireTickets makes every ticket the stand-in issued expired.
func expireTickets(t *testing.T, depotDir string) {
	t.Helper()
	dir := filepath.Join(depotDir, ".state", "tickets")
	for _, name := range issuedTickets(t, depotDir) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		_, host, _ := strings.Cut(string(b), " ")
		os.WriteFile(filepath.Join(dir, name), []byte("1 "+host), 0o644)
	}
}

func setClientAddress(t *testing.T, depotDir, addr string) {
	t.Helper()
	os.MkdirAll(filepath.Join(depotDir, ".state"), 0o755)
	if err := os.WriteFile(filepath.Join(depotDir, ".state", "client_address"), []byte(addr), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestHostLockedTicketsWhereAllHostsAreDisabled: a server that refuses
// "login -a" gets a host-locked login; when the address changes the ticket
// is refused and one re-login per command mends it.
func TestHostLockedTicketsWhereAllHostsAreDisabled(t *testing.T) {
	depotDir := fixtureDepot(t)
	os.WriteFile(filepath.Join(depotDir, "server.json"), []byte(`{"password":"service-pw-1","no_hostless_tickets":true}`), 0o644)
	r, logs := newTestRunner(t, depotDir, func(c *Config) { c.Tickets = filepath.Join(t.TempDir(), "tickets") })
	r.SetCredentials(&credSource{cur: Credential{Password: "service-pw-1"}})
	ctx := context.Background()
	if _, err := r.Run(ctx, "describe", "-s", "12345"); err != nil {
		t.Fatal(err)
	}
	setClientAddress(t, depotDir, "10.0.7.9")
	if _, err := r.Run(ctx, "describe", "-s", "12345"); err != nil {
		t.Fatalf("after an address change: %v", err)
	}
	if n := len(issuedTickets(t, depotDir)); n != 2 {
		t.Errorf("%d tickets, want 2 (a new host-locked ticket for the new address)", n)
	}
	if !strings.Contains(logs.String(), `"event":"p4_hostless_tickets_disabled"`) {
		t.Error("the fallback to host-locked tickets is not logged")
	}
}

func TestWrongPasswordIsAuthDenied(t *testing.T) {
	r, _ := newTestRunner(t, passwordDepot(t), nil)
	r.SetCredentials(&credSource{cur: Credential{Password: "wrong-pw"}})
	_, err := r.Run(context.Background(), "describe", "-s", "12345")
	if failure.Classify(err) != failure.AuthDenied || strings.Contains(err.Error(), "wrong-pw") {
		t.Errorf("err = %v", err)
	}
}

func TestTicketCredentialAndRotation(t *testing.T) {
	depotDir := passwordDepot(t)
	// A long-lived ticket the server knows (as "p4 login -a -p" would give).
	good := strings.Repeat("AB", 16)
	os.MkdirAll(filepath.Join(depotDir, ".state", "tickets"), 0o755)
	os.WriteFile(filepath.Join(depotDir, ".state", "tickets", good), []byte("99999999999999"), 0o644)

	src := &credSource{cur: Credential{Ticket: strings.Repeat("CD", 16)}, next: &Credential{Ticket: good}}
	r, _ := newTestRunner(t, depotDir, nil)
	r.SetCredentials(src)
	// The cached ticket is stale; the rejection reads the secret afresh
	// (rotated) and the command succeeds.
	if _, err := r.Run(context.Background(), "describe", "-s", "12345"); err != nil {
		t.Fatal(err)
	}
	if src.reads != 2 {
		t.Errorf("%d secret reads, want 2", src.reads)
	}
	if n := len(issuedTickets(t, depotDir)); n != 1 {
		t.Errorf("a ticket credential logged in (%d tickets)", n)
	}
}

// TestCredentialsNeverInArgv shows what the child receives: the ticket in
// the environment, the password only on stdin of "login", never in argv.
func TestCredentialsNeverInArgv(t *testing.T) {
	ticket := strings.Repeat("EF", 16)
	r, err := NewRunner(Config{Path: envDumpPath, Port: "ssl:perforce:1666", User: "svc", Charset: "utf8",
		Trust: "/tmp/x/trust", TrustFingerprint: strings.TrimSuffix(strings.Repeat("AB:", 20), ":")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.SetCredentials(&credSource{cur: Credential{Ticket: ticket}})
	recs, err := r.Run(context.Background(), "describe", "-s", "1")
	if err != nil {
		t.Fatal(err)
	}
	got := recs[0]
	if got["env.P4PASSWD"] != ticket || strings.Contains(got["args"], ticket) {
		t.Errorf("ticket: env %q, args %q", got["env.P4PASSWD"], got["args"])
	}
	if got["env.P4CHARSET"] != "utf8" || got["env.P4TRUST"] != "/tmp/x/trust" {
		t.Errorf("env = %v", got)
	}
}

func TestTrustFingerprint(t *testing.T) {
	depotDir := fixtureDepot(t)
	fp := strings.TrimSuffix(strings.Repeat("1F:", 20), ":")
	os.WriteFile(filepath.Join(depotDir, "server.json"), []byte(`{"fingerprint":"`+fp+`"}`), 0o644)
	trust := filepath.Join(t.TempDir(), "trust")

	r, _ := newTestRunner(t, depotDir, func(c *Config) { c.Trust = trust })
	if _, err := r.Run(context.Background(), "describe", "-s", "12345"); failure.Classify(err) != failure.NetworkTimeout {
		t.Errorf("untrusted server: %v", err)
	}
	r, _ = newTestRunner(t, depotDir, func(c *Config) { c.Trust = trust; c.TrustFingerprint = fp })
	if _, err := r.Run(context.Background(), "describe", "-s", "12345"); err != nil {
		t.Errorf("trusted server: %v", err)
	}
	// The server now presents another key than the pinned one: a possible
	// interception, a security failure with its event, never a retryable
	// network timeout.
	other := strings.TrimSuffix(strings.Repeat("2E:", 20), ":")
	os.WriteFile(filepath.Join(depotDir, "server.json"), []byte(`{"fingerprint":"`+other+`"}`), 0o644)
	r, logs := newTestRunner(t, depotDir, func(c *Config) { c.Trust = trust; c.TrustFingerprint = fp })
	_, err := r.Run(context.Background(), "describe", "-s", "12345")
	if failure.Classify(err) != failure.SecurityFailure || failure.Classify(err).Retryable() || !strings.Contains(err.Error(), "IDENTIFICATION HAS CHANGED") {
		t.Errorf("key mismatch: %v, want SECURITY_FAILURE", err)
	}
	if !strings.Contains(logs.String(), `"event":"p4_trust_mismatch","security_event":true`) {
		t.Errorf("no security event: %s", logs.String())
	}
}

func TestParseCredential(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Credential
		ok   bool
	}{
		{`{"password":"pw"}`, Credential{Password: "pw"}, true},
		{`{"ticket":"T"}`, Credential{Ticket: "T"}, true},
		{`{"password":"pw","ticket":"T"}`, Credential{}, false},
		{`{}`, Credential{}, false},
		{`pw`, Credential{}, false},
		{`{"password":"a\nb"}`, Credential{}, false},
	} {
		c, err := ParseCredential("p4/svc", tt.in)
		if (err == nil) != tt.ok || c != tt.want {
			t.Errorf("ParseCredential(%s) = %+v, %v", tt.in, c, err)
		}
		if err != nil && strings.Contains(err.Error(), "pw") {
			t.Errorf("error carries the value: %v", err)
		}
	}
}

func TestUnrotatedTicketIsNotRetried(t *testing.T) {
	depotDir := passwordDepot(t)
	src := &credSource{cur: Credential{Ticket: strings.Repeat("CD", 16)}}
	r, logs := newTestRunner(t, depotDir, nil)
	r.SetCredentials(src)
	_, err := r.Run(context.Background(), "describe", "-s", "12345")
	if failure.Classify(err) != failure.AuthDenied {
		t.Fatalf("err = %v", err)
	}
	if n := strings.Count(logs.String(), `"msg":"p4 command failed"`); n != 1 {
		t.Errorf("%d commands ran, want 1 (an unchanged ticket is not sent again)", n)
	}
}

// TestReloginAtMostOncePerCommand: a command the server still refuses after
// a successful re-login (here every describe of the change answers
// LoginExpired, msgs/msgserver.cc: E_FAILED / EV_ILLEGAL) is AUTH_DENIED
// after one re-login and one retry, never a loop of logins.
func TestReloginAtMostOncePerCommand(t *testing.T) {
	depotDir := passwordDepot(t)
	writeChange(t, depotDir, map[string]any{
		"change": 62000, "status": "submitted", "user": "alice", "client": "ws", "desc": "x\n", "files": []any{},
		"faults": []any{map[string]any{"command": "describe", "message": "Your session has expired, please login again.", "severity": 3, "generic": 4}},
	})
	r, logs := newTestRunner(t, depotDir, func(c *Config) { c.Tickets = filepath.Join(t.TempDir(), "tickets") })
	r.SetCredentials(&credSource{cur: Credential{Password: "service-pw-1"}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := r.Run(ctx, "describe", "-s", "62000")
	if failure.Classify(err) != failure.AuthDenied {
		t.Fatalf("err = %v, want AUTH_DENIED", err)
	}
	if n := strings.Count(logs.String(), `"event":"p4_relogin"`); n != 1 {
		t.Errorf("%d re-logins for one command, want 1", n)
	}
	if n := len(issuedTickets(t, depotDir)); n != 2 {
		t.Errorf("%d logins, want 2 (the first, and one re-login)", n)
	}
	// The next command gets its own one re-login, no more.
	if _, err := r.Run(ctx, "describe", "-s", "62000"); failure.Classify(err) != failure.AuthDenied {
		t.Fatalf("second command: %v, want AUTH_DENIED", err)
	}
	if n := strings.Count(logs.String(), `"event":"p4_relogin"`); n != 2 {
		t.Errorf("%d re-logins for two commands, want 2", n)
	}
}
