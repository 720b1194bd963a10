package p4

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/failure"
)

func TestNewRunnerRejectsBadConfig(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "p4-noexec")
	os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644)
	tests := []struct {
		name string
		edit func(*Config)
	}{
		{"relative path", func(c *Config) { c.Path = "p4" }},
		{"unclean path", func(c *Config) { c.Path = filepath.Dir(standinPath) + "/./p4" }},
		{"missing binary", func(c *Config) { c.Path = filepath.Join(dir, "nope") }},
		{"directory", func(c *Config) { c.Path = dir }},
		{"not executable", func(c *Config) { c.Path = notExec }},
		{"no port", func(c *Config) { c.Port = "" }},
		{"no user", func(c *Config) { c.User = "" }},
		{"newline in password", func(c *Config) { c.Password = "a\nb" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{Path: standinPath, Port: "/tmp/depot", User: "u"}
			tt.edit(&cfg)
			_, err := NewRunner(cfg, nil)
			if err == nil {
				t.Fatal("NewRunner accepted the config")
			}
			if c := failure.Classify(err); c != failure.InternalBug {
				t.Errorf("class = %s, want %s", c, failure.InternalBug)
			}
		})
	}
}

func TestRunPassesMinimalEnvironment(t *testing.T) {
	t.Setenv("AWS_SECRET_ACCESS_KEY", "parent-secret")
	t.Setenv("P4CONFIG", ".p4config")
	home, tmp := t.TempDir(), t.TempDir()
	r, err := NewRunner(Config{
		Path:     envDumpPath,
		Port:     "ssl:perforce.example.com:1666",
		User:     "criticizer",
		Client:   "criticizer-ws",
		Tickets:  "/var/task/p4tickets",
		Password: "ticket-value",
		Home:     home,
		TmpDir:   tmp,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := r.Run(context.Background(), "describe", "-s", "12345")
	if err != nil {
		t.Fatal(err)
	}
	rec := recs[0]
	if got, want := rec["args"], "-ztag -Mj describe -s 12345"; got != want {
		t.Errorf("argv = %q, want %q", got, want)
	}
	want := map[string]string{
		"P4PORT":    "ssl:perforce.example.com:1666",
		"P4USER":    "criticizer",
		"P4CLIENT":  "criticizer-ws",
		"P4TICKETS": "/var/task/p4tickets",
		"P4PASSWD":  "ticket-value",
		"HOME":      home,
		"TMPDIR":    tmp,
	}
	for k, v := range rec {
		name, ok := strings.CutPrefix(k, "env.")
		if !ok {
			continue
		}
		if want[name] != v {
			t.Errorf("child environment has %s=%q, want %q", name, v, want[name])
		}
		delete(want, name)
	}
	for k := range want {
		t.Errorf("child environment lacks %s", k)
	}
	if rec["cwd"] != home {
		t.Errorf("child cwd = %q, want HOME %q", rec["cwd"], home)
	}
}

func TestRunArgumentsAreTokens(t *testing.T) {
	r, err := NewRunner(Config{Path: envDumpPath, Port: "p", User: "u"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Shell metacharacters reach the child verbatim, as one argument.
	evil := "//depot/a/$(touch /tmp/pwned);`id`|x.c#1"
	recs, err := r.Run(context.Background(), "print", evil)
	if err != nil {
		t.Fatal(err)
	}
	if got := recs[0]["args"]; got != "-ztag -Mj print "+evil {
		t.Errorf("argv = %q", got)
	}
	for _, bad := range []struct {
		cmd  string
		args []string
	}{
		{"describe; rm -rf /", nil},
		{"-x", nil},
		{"", nil},
		{"print", []string{""}},
		{"print", []string{"a\x00b"}},
		{"print", []string{"a\nb"}},
	} {
		if _, err := r.Run(context.Background(), bad.cmd, bad.args...); failure.Classify(err) != failure.InternalBug {
			t.Errorf("Run(%q, %q) = %v, want an INTERNAL_BUG refusal", bad.cmd, bad.args, err)
		}
	}
}

func TestRunErrorClassification(t *testing.T) {
	depotDir := fixtureDepot(t)
	faultChange := func(cl int, f map[string]any) {
		writeChange(t, depotDir, map[string]any{
			"change": cl, "status": "submitted", "user": "alice", "client": "ws", "desc": "x\n",
			"files": []any{}, "faults": []any{f},
		})
	}
	faults := []struct {
		name  string
		fault map[string]any
		want  failure.Class
	}{
		{"connection refused", map[string]any{"stderr": "TCP connect to perforce:1666 failed.\nconnect: 127.0.0.1:1666: Connection refused", "exit": 1}, failure.NetworkTimeout},
		{"receive failed", map[string]any{"stderr": "Perforce client error:\n\tTCP receive failed.\n\tread: socket: Connection reset by peer", "exit": 1}, failure.NetworkTimeout},
		{"bad password", map[string]any{"stderr": "Perforce password (P4PASSWD) invalid or unset.", "exit": 1}, failure.AuthDenied},
		{"expired session", map[string]any{"stderr": "Your session has expired, please login again.", "exit": 1}, failure.AuthDenied},
		{"no permission", map[string]any{"stderr": "You don't have permission for this operation.", "exit": 1}, failure.AuthDenied},
		{"no such changelist", map[string]any{"stderr": "no such changelist.", "exit": 1}, failure.NotFound},
		{"not on client", map[string]any{"message": "//depot/x.c - file(s) not on client.", "severity": 3, "generic": 2}, failure.InternalBug},
		{"server error", map[string]any{"stderr": "Perforce server error:\n\tDatabase open error on db.rev!", "exit": 1}, failure.Upstream5xx},
		{"odd exit status", map[string]any{"stderr": "something broke", "exit": 3}, failure.Upstream5xx},
		{"usage error", map[string]any{"stderr": "Usage: describe [ -d<flags> -m -s -S -f -O -I ] changelist# ...\nInvalid option: -y.", "exit": 1}, failure.InternalBug},
		{"warning with exit 0 among data", map[string]any{"stdout": `{"change":"1"}` + "\n" + `{"data":"//depot/x.c#9 - no such file(s).\n","generic":17,"severity":2}` + "\n", "exit": 0}, failure.NotFound},
		{"-G style error record", map[string]any{"stdout": `{"code":"error","data":"Change 4242 unknown.\n","severity":"3","generic":"2"}` + "\n", "exit": 1}, failure.NotFound},
		{"error message generic only", map[string]any{"stdout": `{"data":"Protections prevented it.\n","generic":6,"severity":3}` + "\n", "exit": 1}, failure.AuthDenied},
		{"exit 1 without any message", map[string]any{"stdout": `{"change":"1"}` + "\n", "exit": 1}, failure.InternalBug},
		{"garbage output", map[string]any{"stdout": "this is not json\n", "exit": 0}, failure.SchemaInvalid},
	}
	r, _ := newTestRunner(t, depotDir, nil)
	for i, tt := range faults {
		t.Run(tt.name, func(t *testing.T) {
			cl := 50000 + i
			tt.fault["command"] = "describe"
			faultChange(cl, tt.fault)
			_, err := r.Run(context.Background(), "describe", "-s", strconv.Itoa(cl))
			if err == nil {
				t.Fatal("Run succeeded")
			}
			if got := failure.Classify(err); got != tt.want {
				t.Errorf("class = %s, want %s (%v)", got, tt.want, err)
			}
		})
	}

	t.Run("unknown changelist", func(t *testing.T) {
		_, err := r.Run(context.Background(), "describe", "-s", "999")
		if failure.Classify(err) != failure.NotFound || !strings.Contains(err.Error(), "Change 999 unknown.") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("unknown command", func(t *testing.T) {
		_, err := r.Run(context.Background(), "frobnicate")
		if failure.Classify(err) != failure.InternalBug {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("unreachable server", func(t *testing.T) {
		r, _ := newTestRunner(t, depotDir, func(c *Config) { c.Port = "perforce:1666" })
		_, err := r.Run(context.Background(), "describe", "-s", "1")
		if failure.Classify(err) != failure.NetworkTimeout {
			t.Errorf("err = %v", err)
		}
	})
}

func TestRunTimeout(t *testing.T) {
	r, logs := newTestRunner(t, fixtureDepot(t), func(c *Config) { c.Timeout = 300 * time.Millisecond })
	start := time.Now()
	_, err := r.Run(context.Background(), "describe", "-s", "9002") // sleeps 3 s
	if got := failure.Classify(err); got != failure.NetworkTimeout {
		t.Fatalf("class = %s (%v), want %s", got, err, failure.NetworkTimeout)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v does not wrap context.DeadlineExceeded", err)
	}
	if elapsed := time.Since(start); elapsed > 2500*time.Millisecond {
		t.Errorf("timed-out command took %s", elapsed)
	}
	lines := logLines(t, logs)
	if len(lines) != 1 || lines[0]["error_class"] != string(failure.NetworkTimeout) {
		t.Errorf("logs = %v", lines)
	}
}

func TestRunCallerCancellation(t *testing.T) {
	r, _ := newTestRunner(t, fixtureDepot(t), nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	_, err := r.Run(ctx, "describe", "-s", "9002")
	if !errors.Is(err, context.Canceled) || failure.Classify(err) != failure.NetworkTimeout {
		t.Errorf("err = %v", err)
	}
}

func TestRunOutputCap(t *testing.T) {
	depotDir := fixtureDepot(t)
	big := strings.Repeat("0123456789abcdef\n", 20000) // 340 KB
	writeChange(t, depotDir, map[string]any{
		"change": 60000, "status": "submitted", "user": "alice", "client": "ws", "desc": "big\n",
		"files": []any{map[string]any{"path": "//depot/projectA/big.txt", "action": "add", "type": "text", "rev": 1, "after": big}},
	})
	r, _ := newTestRunner(t, depotDir, func(c *Config) { c.MaxOutput = 64 << 10 })
	_, err := r.Run(context.Background(), "print", "//depot/projectA/big.txt#1")
	if got := failure.Classify(err); got != failure.PolicyRejected {
		t.Fatalf("class = %s (%v), want %s", got, err, failure.PolicyRejected)
	}
	r, _ = newTestRunner(t, depotDir, nil)
	recs, err := r.Run(context.Background(), "print", "//depot/projectA/big.txt#1")
	if err != nil {
		t.Fatal(err)
	}
	contents, err := printedFiles(recs, []string{"//depot/projectA/big.txt#1"}, []string{"//depot/projectA/big.txt"})
	if err != nil || contents[0] != big {
		t.Errorf("print under the cap returned %v, want %d bytes", err, len(big))
	}
}

func TestRunLogsSanitizedMetadataOnly(t *testing.T) {
	depotDir := fixtureDepot(t)
	const password = "Sup3r-Secret-Pa55"
	writeChange(t, depotDir, map[string]any{
		"change": 61000, "status": "submitted", "user": "alice", "client": "ws", "desc": "x\n", "files": []any{},
		"faults": []any{map[string]any{
			"command": "describe", "exit": 1,
			"stderr": "Perforce password (P4PASSWD) invalid or unset. P4PASSWD=" + password + " ticket 0123456789ABCDEF0123456789ABCDEF\x1b[31m",
		}},
	})
	r, logs := newTestRunner(t, depotDir, func(c *Config) { c.Password = password })

	if _, err := r.Run(context.Background(), "user", "-o", "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(context.Background(), "print", "//depot/projectA/src/net/buffer.c#4"); err != nil {
		t.Fatal(err)
	}
	_, err := r.Run(context.Background(), "describe", "-s", "61000")
	if failure.Classify(err) != failure.AuthDenied {
		t.Fatalf("err = %v", err)
	}
	for _, leak := range []string{password, "0123456789ABCDEF0123456789ABCDEF", "\x1b"} {
		if strings.Contains(err.Error(), leak) {
			t.Errorf("error message leaks %q: %v", leak, err)
		}
	}
	text := logs.String()
	for _, leak := range []string{password, "0123456789ABCDEF", "alice", "invalid or unset"} {
		if strings.Contains(text, leak) {
			t.Errorf("logs contain %q:\n%s", leak, text)
		}
	}
	lines := logLines(t, strings.NewReader(text))
	if len(lines) != 3 {
		t.Fatalf("got %d log lines, want 3:\n%s", len(lines), text)
	}
	wantArgs := [][]any{
		{"-o", "<redacted len=5>"},
		{"//depot/projectA/src/net/buffer.c#4"},
		{"-s", "61000"},
	}
	for i, l := range lines {
		for _, k := range []string{"command", "arg_count", "duration_ms", "exit_code"} {
			if _, ok := l[k]; !ok {
				t.Errorf("log line %d lacks %s: %v", i, k, l)
			}
		}
		args, _ := l["args"].([]any)
		if strings.Join(toStrings(args), " ") != strings.Join(toStrings(wantArgs[i]), " ") {
			t.Errorf("log line %d args = %v, want %v", i, args, wantArgs[i])
		}
	}
}

func toStrings(v []any) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i], _ = x.(string)
	}
	return out
}

func TestClassify(t *testing.T) {
	tests := []struct {
		msg     string
		exit    int
		generic int
		want    failure.Class
	}{
		{"TCP connect to perforce:1666 failed.", 1, 0, failure.NetworkTimeout},
		{"connect: 127.0.0.1:1666: Connection refused", 1, 0, failure.NetworkTimeout},
		{"Operation timed out", 1, 0, failure.NetworkTimeout},
		{"Perforce password (P4PASSWD) invalid or unset.", 1, 0, failure.AuthDenied},
		{"Your session has expired, please login again.", 1, 0, failure.AuthDenied},
		{"You don't have permission for this operation.", 1, 0, failure.AuthDenied},
		{"Access for user 'bot' has not been enabled by 'p4 protect'.", 1, 0, failure.AuthDenied},
		{"User bot doesn't exist.", 1, 0, failure.AuthDenied},
		{"Change 999 unknown.", 1, 0, failure.NotFound},
		{"no such changelist.", 1, 0, failure.NotFound},
		{"//depot/x.c - no such file(s).", 0, 0, failure.NotFound},
		{"//depot/x.c - file(s) not on client.", 0, 0, failure.InternalBug},
		{"//depot/x.c - file(s) not in client view.", 0, 0, failure.InternalBug},
		{"Client 'x' unknown - use 'client' command to create it.", 1, 2, failure.InternalBug},
		{"//depot/x.c - protected namespace - access denied.", 0, 6, failure.PolicyRejected},
		{"Perforce client error:\n\tSSL receive failed.", 1, 0, failure.NetworkTimeout},
		{"The authenticity of '10.0.0.1:1666' can't be established,\nthis may be your first attempt to connect to this P4PORT.", 1, 0, failure.NetworkTimeout},
		{"weird", 1, evComm, failure.NetworkTimeout},
		{"weird", 1, evProtect, failure.AuthDenied},
		{"weird", 1, evFault, failure.Upstream5xx},
		{"weird", -1, 0, failure.Upstream5xx},
		{"weird", 2, 0, failure.Upstream5xx},
		{"Perforce server error: Database open error", 1, 0, failure.Upstream5xx},
		{"Usage: print [-a] files...", 1, 0, failure.InternalBug},
		{"", 1, 0, failure.InternalBug},
	}
	for _, tt := range tests {
		if got := classify(tt.msg, tt.exit, tt.generic); got != tt.want {
			t.Errorf("classify(%q, %d, %d) = %s, want %s", tt.msg, tt.exit, tt.generic, got, tt.want)
		}
	}
}

func TestSanitize(t *testing.T) {
	tests := []struct {
		in, password string
		want         string
	}{
		{"Change 9 unknown.\n", "", "Change 9 unknown."},
		{"Perforce client error:\n\tConnect to server failed.", "", "Perforce client error: Connect to server failed."},
		{"bad pw hunter22 here", "hunter22", "bad pw [REDACTED] here"},
		{"ticket 0123456789ABCDEF0123456789ABCDEF expired", "", "ticket [REDACTED] expired"},
		{"P4PASSWD=abc123 is wrong", "", "P4PASSWD=[REDACTED] is wrong"},
		{"password: letmein", "", "password: [REDACTED]"},
		{"esc\x1b[0m bell\x07", "", "esc?[0m bell?"},
		{strings.Repeat("x", 600), "", strings.Repeat("x", 512) + "…(truncated)"},
		{strings.Repeat("é", 300), "", strings.Repeat("é", 256) + "…(truncated)"},
	}
	for _, tt := range tests {
		if got := sanitize(tt.in, tt.password); got != tt.want {
			t.Errorf("sanitize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseRecords(t *testing.T) {
	out := `{"change":"12","n":42,"ok":true}
{"depotFile":"//depot/a.c","rev":"3"}
{"data":"hello "}
{"data":"world"}
{"data":""}
{"data":"//depot/b.c - no such file(s).\n","generic":17,"severity":2}
{"data":"Change 7 unknown.\n","generic":2,"severity":3}
{"data":"Some info.\n","generic":0,"severity":1}
{"data":"an info line\n","level":0}
{"data":"x","severity":2,"generic":17,"extra":"field"}
`
	recs, msgs, err := parseRecords([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 6 || recs[0]["n"] != "42" || recs[0]["ok"] != "true" {
		t.Errorf("records = %v", recs)
	}
	if len(msgs) != 2 || msgs[0].generic != 17 || msgs[0].severity != 2 || msgs[0].text != "//depot/b.c - no such file(s)." ||
		msgs[1].severity != 3 || msgs[1].text != "Change 7 unknown." {
		t.Errorf("messages = %+v", msgs)
	}
	if recs[1]["depotFile"] != "//depot/a.c" || !recs[2].isData() || recs[2]["data"]+recs[3]["data"] != "hello world" || !recs[4].isData() {
		t.Errorf("content records = %v", recs[1:5])
	}
	for _, bad := range []string{"{", "null\n", "[1,2]\n", "nope"} {
		if _, _, err := parseRecords([]byte(bad)); err == nil {
			t.Errorf("parseRecords(%q) succeeded", bad)
		}
	}
}

func TestLoggableArgs(t *testing.T) {
	in := []string{"-s", "-S", "-du", "-du5", "12345", "//depot/a/b.c#3", "//depot/a/b.c@=12347", "//depot/a/b.c", "alice", "//depot/../x#1", "hello world", "-o"}
	want := []string{"-s", "-S", "-du", "-du5", "12345", "//depot/a/b.c#3", "//depot/a/b.c@=12347", "//depot/a/b.c", "<redacted len=5>", "<redacted len=14>", "<redacted len=11>", "-o"}
	got := loggableArgs(in)
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("loggableArgs = %v\nwant %v", got, want)
	}
}
