package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// copyDepot copies the fixture depot to a temporary directory, so that fault
// counters written by a test do not leak into the next run.
func copyDepot(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "depot")
	if err := os.CopyFS(dst, os.DirFS("depot")); err != nil {
		t.Fatal(err)
	}
	return dst
}

// line is one JSON line of stdout, with values as decoded (messages carry
// numbers).
type line map[string]any

func (l line) s(k string) string { v, _ := l[k].(string); return v }

// isMessage reports a server message record: data, generic, severity.
func (l line) isMessage() bool { _, ok := l["severity"]; return ok }

func p4env(t *testing.T, env map[string]string, stdin string, args ...string) (lines []line, raw, stderr string, exit int) {
	t.Helper()
	var out, errb bytes.Buffer
	exit = run(args, func(k string) string { return env[k] }, strings.NewReader(stdin), &out, &errb)
	// login's prompt is the only plain text the client prints on stdout.
	dec := json.NewDecoder(strings.NewReader(strings.TrimPrefix(out.String(), "Enter password: \n")))
	dec.UseNumber()
	for dec.More() {
		var r line
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("p4 %v: stdout is not JSON lines: %v\n%s", args, err, out.String())
		}
		lines = append(lines, r)
	}
	return lines, out.String(), errb.String(), exit
}

func p4(t *testing.T, port string, args ...string) ([]line, string, int) {
	t.Helper()
	lines, _, stderr, exit := p4env(t, map[string]string{"P4PORT": port, "P4USER": "alice", "P4CLIENT": "ci-ws"}, "", args...)
	return lines, stderr, exit
}

// messages returns the text of the message records and the data records.
func split(lines []line) (msgs []string, recs []line) {
	for _, l := range lines {
		if l.isMessage() {
			msgs = append(msgs, l.s("data"))
		} else {
			recs = append(recs, l)
		}
	}
	return msgs, recs
}

func TestCommands(t *testing.T) {
	port := copyDepot(t)
	tests := []struct {
		name       string
		args       []string
		exit       int
		msg        string // substring of a message record's data
		stderr     string // substring of stderr (client-side failures only)
		records    int    // data records
		field, val string // a field of the first data record
	}{
		{"describe", []string{"-ztag", "-Mj", "describe", "-s", "12345"}, 0, "", "", 1, "depotFile2", "//depot/projectA/assets/logo.png"},
		{"describe separate flags", []string{"-z", "tag", "-M", "j", "-p", port, "describe", "-s", "12345"}, 0, "", "", 1, "user", "alice"},
		{"describe shelved", []string{"-ztag", "-Mj", "describe", "-s", "-S", "12347"}, 0, "", "", 1, "rev0", "4"},
		{"describe shelved add", []string{"-ztag", "-Mj", "describe", "-s", "-S", "12347"}, 0, "", "", 1, "rev1", "1"},
		// digestN: the MD5 of the revision's content, upper-case hex, as real p4 reports it.
		{"describe digest", []string{"-ztag", "-Mj", "describe", "-s", "12345"}, 0, "", "", 1, "digest0", "7D305C220563D38FEF1FFA48B35FF434"},
		{"describe digest of a binary", []string{"-ztag", "-Mj", "describe", "-s", "12345"}, 0, "", "", 1, "digest2", "7B19CB59D01885DC74F780D3BE2D2918"},
		{"describe shelved digest", []string{"-ztag", "-Mj", "describe", "-s", "-S", "12347"}, 0, "", "", 1, "digest0", "0799517EAB4CECEC616D5850AFA65579"},
		{"describe -S of submitted", []string{"-ztag", "-Mj", "describe", "-s", "-S", "12345"}, 0, "", "", 1, "depotFile0", ""},
		{"describe unknown", []string{"-ztag", "-Mj", "describe", "-s", "999"}, 1, "Change 999 unknown.", "", 0, "", ""},
		{"describe bad number", []string{"-ztag", "-Mj", "describe", "-s", "12x"}, 1, "Invalid changelist number '12x'.", "", 0, "", ""},
		{"describe bad flag", []string{"-ztag", "-Mj", "describe", "-y", "1"}, 1, "Invalid option: -y.", "", 0, "", ""},
		{"describe no args", []string{"-ztag", "-Mj", "describe", "-s"}, 1, "Missing/wrong number of arguments.", "", 0, "", ""},
		{"diff2", []string{"-ztag", "-Mj", "diff2", "-du", "//depot/projectA/src/net/buffer.c#3", "//depot/projectA/src/net/buffer.c#4"}, 0, "", "", 2, "status", "content"},
		{"diff2 identical", []string{"-ztag", "-Mj", "diff2", "-du", "//depot/projectA/src/net/buffer.c#4", "//depot/projectA/src/net/buffer.c#4"}, 0, "", "", 1, "status", "identical"},
		{"diff2 shelved", []string{"-ztag", "-Mj", "diff2", "-du", "//depot/projectA/src/net/buffer.c#4", "//depot/projectA/src/net/buffer.c@=12347"}, 0, "", "", 2, "status", "content"},
		{"diff2 missing rev", []string{"-ztag", "-Mj", "diff2", "-du", "//depot/projectA/src/net/buffer.c#8", "//depot/projectA/src/net/buffer.c#9"}, 0, "#9 - no such file(s).", "", 0, "", ""},
		{"diff2 normal format", []string{"-ztag", "-Mj", "diff2", "//a#1", "//a#2"}, 1, "only unified", "", 0, "", ""},
		{"print", []string{"-ztag", "-Mj", "print", "//depot/projectA/tools/deploy/deploy.go#1"}, 0, "", "", 3, "action", "add"},
		{"print head", []string{"-ztag", "-Mj", "print", "//depot/projectA/src/net/buffer.c"}, 0, "", "", 3, "rev", "4"},
		{"print quiet", []string{"-ztag", "-Mj", "print", "-q", "//depot/projectA/docs/README.md#1"}, 0, "", "", 2, "data", "# projectA\n\nBuild with make.\n"},
		{"print missing", []string{"-ztag", "-Mj", "print", "//depot/nope.c#1"}, 0, "//depot/nope.c#1 - no such file(s).", "", 0, "", ""},
		{"print as of a change", []string{"-ztag", "-Mj", "print", "//depot/libs/.criticizer.yaml@12361"}, 0, "", "", 3, "rev", "2"},
		{"print as of the change before", []string{"-ztag", "-Mj", "print", "//depot/libs/.criticizer.yaml@12360"}, 0, "", "", 3, "rev", "1"},
		{"print as of a later change", []string{"-ztag", "-Mj", "print", "//depot/libs/.criticizer.yaml@99999"}, 0, "", "", 3, "rev", "3"},
		{"print as of before the add", []string{"-ztag", "-Mj", "print", "//depot/libs/.criticizer.yaml@12359"}, 0, ".criticizer.yaml@12359 - no such file(s).", "", 0, "", ""},
		{"print as of, pending ignored", []string{"-ztag", "-Mj", "print", "//depot/libs/engine/frame.cpp@12364"}, 0, "", "", 3, "change", "12363"},
		{"print many", []string{"-ztag", "-Mj", "print", "//depot/projectA/docs/README.md#1", "//depot/nope.c#1", "//depot/projectA/docs/README.md#2"}, 0, "//depot/nope.c#1 - no such file(s).", "", 6, "rev", "1"},
		{"user", []string{"-ztag", "-Mj", "user", "-o", "bob"}, 0, "", "", 1, "Email", "bob@example.com"},
		{"unknown user", []string{"-ztag", "-Mj", "user", "-o", "carol"}, 0, "", "", 1, "Update", ""},
		{"unknown command", []string{"-ztag", "-Mj", "obliterate", "//..."}, 1, "Unknown command.", "", 0, "", ""},
		{"no command", []string{"-ztag", "-Mj"}, 1, "", "Usage: p4", 0, "", ""},
		{"untagged", []string{"describe", "-s", "12345"}, 1, "", "-ztag", 0, "", ""},
		{"unknown global flag", []string{"-ztag", "-Mj", "-k", "describe", "1"}, 1, "", "Invalid option: -k.", 0, "", ""},
		{"unreachable server", []string{"-ztag", "-Mj", "-p", "perforce:1666", "describe", "-s", "12345"}, 1, "", "Connection refused", 0, "", ""},
		{"auth fault", []string{"-ztag", "-Mj", "describe", "-s", "9003"}, 1, "Perforce password (P4PASSWD) invalid or unset.", "", 0, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines, stderr, exit := p4(t, port, tt.args...)
			msgs, recs := split(lines)
			if exit != tt.exit {
				t.Errorf("exit = %d, want %d (stderr %q, messages %q)", exit, tt.exit, stderr, msgs)
			}
			if !strings.Contains(stderr, tt.stderr) || (tt.stderr == "" && stderr != "") {
				t.Errorf("stderr = %q, want it to contain %q", stderr, tt.stderr)
			}
			if joined := strings.Join(msgs, ""); !strings.Contains(joined, tt.msg) || (tt.msg == "" && joined != "") {
				t.Errorf("messages = %q, want one containing %q", msgs, tt.msg)
			}
			if len(recs) != tt.records {
				t.Fatalf("got %d data records, want %d: %v", len(recs), tt.records, recs)
			}
			if tt.field != "" && recs[0].s(tt.field) != tt.val {
				t.Errorf("%s = %q, want %q", tt.field, recs[0].s(tt.field), tt.val)
			}
		})
	}
}

func TestTransientFaultPersistsAcrossProcesses(t *testing.T) {
	port := copyDepot(t)
	for i, wantExit := range []int{1, 1, 0, 0} {
		lines, stderr, exit := p4(t, port, "-ztag", "-Mj", "describe", "-s", "9001")
		if exit != wantExit {
			t.Fatalf("attempt %d: exit %d, want %d (stderr %q)", i+1, exit, wantExit, stderr)
		}
		if wantExit == 1 && !strings.HasPrefix(stderr, "Perforce client error:") {
			t.Errorf("attempt %d: stderr %q", i+1, stderr)
		}
		if wantExit == 0 && (len(lines) != 1 || lines[0].s("change") != "9001") {
			t.Errorf("attempt %d: records %v", i+1, lines)
		}
	}
}

func TestLargeContentIsChunked(t *testing.T) {
	port := t.TempDir()
	os.MkdirAll(filepath.Join(port, "changes"), 0o755)
	big := strings.Repeat("héllo wörld\n", 1000)
	c := change{Change: 5, Status: "submitted", User: "u", Files: []file{{Path: "//depot/a/big.txt", Action: "add", Type: "text", Rev: 1, After: &big}}}
	b, _ := json.Marshal(c)
	os.WriteFile(filepath.Join(port, "changes", "5.json"), b, 0o644)

	lines, stderr, exit := p4(t, port, "-ztag", "-Mj", "print", "//depot/a/big.txt#1")
	if exit != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", exit, stderr)
	}
	var got strings.Builder
	for _, r := range lines[1:] {
		if len(r.s("data")) > 4096 {
			t.Errorf("chunk of %d bytes", len(r.s("data")))
		}
		got.WriteString(r.s("data"))
	}
	if len(lines) < 4 || got.String() != big {
		t.Errorf("content did not survive chunking (%d records)", len(lines))
	}
	if last := lines[len(lines)-1]; len(last) != 1 || last.s("data") != "" {
		t.Errorf("print does not end with an empty data record: %v", last)
	}
}

// describe's fileSize is the file's size in bytes, as the server stores
// it: a fixture given as base64 counts its decoded bytes, not its padding.
func TestDescribeFileSizeOfBase64Content(t *testing.T) {
	port := t.TempDir()
	os.MkdirAll(filepath.Join(port, "changes"), 0o755)
	c := change{Change: 6, Status: "submitted", User: "u", Files: []file{
		{Path: "//depot/a/one.bin", Action: "add", Type: "binary", Rev: 1, AfterBase64: "YQ=="},
		{Path: "//depot/a/two.bin", Action: "add", Type: "binary", Rev: 1, AfterBase64: "YWI="},
		{Path: "//depot/a/three.bin", Action: "add", Type: "binary", Rev: 1, AfterBase64: "YWJj"}}}
	b, _ := json.Marshal(c)
	os.WriteFile(filepath.Join(port, "changes", "6.json"), b, 0o644)
	lines, stderr, exit := p4(t, port, "-ztag", "-Mj", "describe", "-s", "6")
	if exit != 0 || stderr != "" || len(lines) != 1 {
		t.Fatalf("exit %d, stderr %q, %d records", exit, stderr, len(lines))
	}
	for i, want := range []string{"1", "2", "3"} {
		if got := lines[0].s("fileSize" + strconv.Itoa(i)); got != want {
			t.Errorf("fileSize%d = %q, want %s", i, got, want)
		}
	}
}

func TestTaggedText(t *testing.T) {
	var out, errb bytes.Buffer
	env := map[string]string{"P4PORT": copyDepot(t)}
	if exit := run([]string{"-ztag", "user", "-o", "alice"}, func(k string) string { return env[k] }, strings.NewReader(""), &out, &errb); exit != 0 {
		t.Fatalf("exit %d: %s", exit, errb.String())
	}
	if !strings.Contains(out.String(), "... Email alice@example.com\n") {
		t.Errorf("tagged text output:\n%s", out.String())
	}
}

// TestProtections: files without list access are left out of describe
// without a message; list-only files are described but not printed;
// "protects -m [path]" reports the level as a {"permMax"} record.
func TestProtections(t *testing.T) {
	port := copyDepot(t)
	if err := os.WriteFile(filepath.Join(port, "server.json"), []byte(`{"protect":["//depot/secret/..."],"list_only":["//depot/projectA/assets/..."]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	lines, stderr, exit := p4(t, port, "-ztag", "-Mj", "describe", "-s", "12346")
	msgs, recs := split(lines)
	if exit != 0 || stderr != "" || len(msgs) != 0 || len(recs) != 1 {
		t.Fatalf("describe: exit %d stderr %q messages %q records %d", exit, stderr, msgs, len(recs))
	}
	for k, v := range recs[0] {
		if strings.HasPrefix(k, "depotFile") && strings.HasPrefix(fmt.Sprint(v), "//depot/secret/") {
			t.Errorf("describe shows the hidden file %s", v)
		}
	}
	if recs[0].s("depotFile0") == "" || recs[0].s("depotFile1") != "" {
		t.Errorf("describe of a change with one hidden and one visible file: %v", recs[0])
	}
	// A list-only file is described, but its content is refused.
	lines, _, _ = p4(t, port, "-ztag", "-Mj", "describe", "-s", "12345")
	if _, recs := split(lines); recs[0].s("depotFile2") != "//depot/projectA/assets/logo.png" {
		t.Errorf("list-only file not described: %v", recs[0])
	}
	lines, _, exit = p4(t, port, "-ztag", "-Mj", "print", "//depot/projectA/assets/logo.png#1")
	if msgs, recs := split(lines); exit != 0 || len(recs) != 0 || len(msgs) != 1 || !strings.Contains(msgs[0], "protected namespace - access denied.") {
		t.Errorf("print of a list-only file: exit %d messages %q records %v", exit, msgs, recs)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		// -m ignores the path and every exclusion: "read" even for //...,
		// half of which is hidden (reference, Protections).
		{[]string{"-m"}, "read"},
		{[]string{"-m", "//..."}, "read"},
		{[]string{"-m", "//depot/secret/x.c"}, "read"},
		// -M honours both, but is still a maximum: "read" somewhere under
		// //... and //depot/projectA/..., though parts are hidden or list-only.
		{[]string{"-M", "//..."}, "read"},
		{[]string{"-M", "//depot/projectA/..."}, "read"},
		{[]string{"-M", "//depot/projectA/assets/..."}, "list"},
		{[]string{"-M", "//depot/secret/x.c"}, "none"},
	} {
		lines, stderr, exit := p4(t, port, append([]string{"-ztag", "-Mj", "protects"}, tt.args...)...)
		if _, recs := split(lines); exit != 0 || stderr != "" || len(recs) != 1 || recs[0].s("permMax") != tt.want {
			t.Errorf("protects %v: exit %d stderr %q records %v, want permMax %s", tt.args, exit, stderr, recs, tt.want)
		}
	}
}

// TestProtectsTable: plain "protects" lists the user's lines, exclusionary
// ones marked by an "unmap" field, the path in depotFile and "line" the
// line's number (every shape: TestRealShapeProtects); dm.protects.hide
// (hide_exclusions) leaves the exclusions out.
func TestProtectsTable(t *testing.T) {
	for _, tt := range []struct {
		server string
		want   []string
	}{
		{`{"protect":["//depot/secret/..."],"list_only":["//depot/x/..."]}`,
			[]string{"1 read //...", "2 =read //depot/x/... unmap", "3 list //depot/secret/... unmap"}},
		{`{"protect":["//depot/secret/..."],"hide_exclusions":true}`, []string{"1 read //..."}},
	} {
		port := copyDepot(t)
		if err := os.WriteFile(filepath.Join(port, "server.json"), []byte(tt.server), 0o644); err != nil {
			t.Fatal(err)
		}
		lines, stderr, exit := p4(t, port, "-ztag", "-Mj", "protects")
		var got []string
		for _, r := range lines {
			l := r.s("line") + " " + r.s("perm") + " " + r.s("depotFile")
			if _, ok := r["unmap"]; ok {
				l += " unmap"
			}
			if r.s("user") != "alice" || r.s("host") != "*" {
				t.Errorf("%s: line %v is not alice's from any host", tt.server, r)
			}
			got = append(got, l)
		}
		if exit != 0 || stderr != "" || strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("%s: exit %d stderr %q table %q, want %q", tt.server, exit, stderr, got, tt.want)
		}
	}
}

// TestPrintExpandsKeywords: print expands RCS keywords in a ktext file
// unless -k; a text file is printed as stored either way.
func TestPrintExpandsKeywords(t *testing.T) {
	port := copyDepot(t)
	content := func(args ...string) string {
		lines, stderr, exit := p4(t, port, append([]string{"-ztag", "-Mj", "print"}, args...)...)
		var b strings.Builder
		for _, l := range lines {
			if _, header := l["depotFile"]; !header {
				b.WriteString(l.s("data"))
			}
		}
		if exit != 0 || stderr != "" {
			t.Fatalf("print %v: exit %d stderr %q", args, exit, stderr)
		}
		return b.String()
	}
	got := content("//depot/projectA/src/net/limits.c#3")
	if !strings.HasPrefix(got, "/* $Id: //depot/projectA/src/net/limits.c#3 $ */\n/* $Change: 12365 $ $DateTime: 2024/11/18 14:26:40 $ */\n") {
		t.Errorf("print of a ktext file:\n%s", got)
	}
	if got := content("-k", "//depot/projectA/src/net/limits.c#3"); !strings.HasPrefix(got, "/* $Id$ */\n/* $Change$ $DateTime$ */\n") {
		t.Errorf("print -k of a ktext file:\n%s", got)
	}
	if got := content("-k", "//depot/projectA/src/net/limits.c#2"); !strings.HasPrefix(got, "/* $Id$ */") {
		t.Errorf("print -k of the earlier revision:\n%s", got)
	}
	if got := content("//depot/projectA/src/net/limits.c#2"); !strings.HasPrefix(got, "/* $Id: //depot/projectA/src/net/limits.c#2 $ */") {
		t.Errorf("print of the earlier revision:\n%s", got)
	}
}

// TestTicketsAndTrust: tickets are host-locked unless "login -a", expire
// with "Your session has expired" (3 / 4), and a trusted fingerprint that
// differs from the server's key fails every command with the client's
// HostKeyMismatch text, a -Mj message on stdout (both channels:
// TestRealShapeTrust).
func TestTicketsAndTrust(t *testing.T) {
	port := copyDepot(t)
	os.WriteFile(filepath.Join(port, "server.json"), []byte(`{"password":"pw"}`), 0o644)
	dir := t.TempDir()
	env := map[string]string{"P4PORT": port, "P4USER": "svc", "P4TICKETS": filepath.Join(dir, "tickets"), "P4TRUST": filepath.Join(dir, "trust")}
	describe := func() (string, float64, int) {
		lines, _, _, exit := p4env(t, env, "", "-ztag", "-Mj", "describe", "-s", "12345")
		for _, l := range lines {
			if l.isMessage() {
				g, _ := l["generic"].(json.Number).Float64()
				return l.s("data"), g, exit
			}
		}
		return "", 0, exit
	}
	setAddr := func(a string) { os.WriteFile(filepath.Join(port, ".state", "client_address"), []byte(a), 0o644) }
	for _, tt := range []struct {
		login      []string
		afterMove  string // the message after the client's address changed
		afterMoveG float64
	}{
		{[]string{"login"}, "Perforce password (P4PASSWD) invalid or unset.\n", 36},
		{[]string{"login", "-a"}, "", 0},
	} {
		os.RemoveAll(filepath.Join(port, ".state"))
		os.MkdirAll(filepath.Join(port, ".state"), 0o755)
		if _, _, stderr, exit := p4env(t, env, "pw\n", append([]string{"-ztag", "-Mj"}, tt.login...)...); exit != 0 {
			t.Fatalf("%v: exit %d %s", tt.login, exit, stderr)
		}
		if msg, _, exit := describe(); exit != 0 || msg != "" {
			t.Fatalf("%v: describe with the new ticket: %q", tt.login, msg)
		}
		setAddr("10.0.7.9")
		if msg, g, _ := describe(); msg != tt.afterMove || g != tt.afterMoveG {
			t.Errorf("%v: after an address change %q (%v), want %q", tt.login, msg, g, tt.afterMove)
		}
	}
	// Expire the -a ticket.
	entries, _ := os.ReadDir(filepath.Join(port, ".state", "tickets"))
	for _, e := range entries {
		os.WriteFile(filepath.Join(port, ".state", "tickets", e.Name()), []byte("1 *"), 0o644)
	}
	if msg, g, exit := describe(); msg != "Your session has expired, please login again.\n" || g != 4 || exit != 1 {
		t.Errorf("expired ticket: %q (%v) exit %d", msg, g, exit)
	}
	os.WriteFile(filepath.Join(port, "server.json"), []byte(`{"password":"pw","no_hostless_tickets":true}`), 0o644)
	if lines, _, _, exit := p4env(t, env, "pw\n", "-ztag", "-Mj", "login", "-a"); exit != 1 || len(lines) != 1 || lines[0].s("data") != "'p4 login -a' has been disabled on this server.\n" {
		t.Errorf("login -a where disabled: exit %d %v", exit, lines)
	}

	fp, other := strings.Repeat("1F:", 19)+"1F", strings.Repeat("2E:", 19)+"2E"
	os.WriteFile(filepath.Join(port, "server.json"), []byte(`{"fingerprint":"`+fp+`"}`), 0o644)
	if _, _, stderr, exit := p4env(t, env, "", "-ztag", "-Mj", "trust", "-i", other); exit != 0 {
		t.Fatalf("trust -i: exit %d %s", exit, stderr)
	}
	lines, _, stderr, exit := p4env(t, env, "", "-ztag", "-Mj", "describe", "-s", "12345")
	if exit != 1 || stderr != "" || len(lines) != 1 || !strings.HasPrefix(lines[0].s("data"), "******* WARNING P4PORT IDENTIFICATION HAS CHANGED! *******\n") || !strings.Contains(lines[0].s("data"), fp) {
		t.Errorf("a pinned fingerprint that differs: exit %d stderr %q stdout %v", exit, stderr, lines)
	}
}
