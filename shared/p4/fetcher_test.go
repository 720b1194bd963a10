package p4

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/depot"
	"github.com/criticizer/criticizer/shared/failure"
)

// recordingRunner records the commands a Fetcher issues.
type recordingRunner struct {
	next  CommandRunner
	mu    sync.Mutex
	calls []string
}

func (r *recordingRunner) Run(ctx context.Context, command string, args ...string) ([]Record, error) {
	r.mu.Lock()
	r.calls = append(r.calls, strings.Join(append([]string{command}, args...), " "))
	r.mu.Unlock()
	return r.next.Run(ctx, command, args...)
}

func testAllowList(t *testing.T, log *slog.Logger) *depot.AllowList {
	t.Helper()
	al, err := depot.NewAllowList([]string{"//depot/projectA/...", "//depot/libs/security/..."}, log)
	if err != nil {
		t.Fatal(err)
	}
	return al
}

func newStandinFetcher(t *testing.T, edit func(*Config)) (*Fetcher, *recordingRunner, *bytes.Buffer) {
	t.Helper()
	r, _ := newTestRunner(t, fixtureDepot(t), edit)
	rec := &recordingRunner{next: r}
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	f, err := NewFetcher(rec, testAllowList(t, log), log)
	if err != nil {
		t.Fatal(err)
	}
	logs.Reset()
	return f, rec, &logs
}

func TestFetchSubmitted(t *testing.T) {
	f, rec, _ := newStandinFetcher(t, nil)
	cs, err := f.Fetch(context.Background(), 12345, false)
	if err != nil {
		t.Fatal(err)
	}
	wantCalls := []string{
		"describe -s 12345",
		"print -k //depot/projectA/src/net/buffer.c#3 //depot/projectA/src/net/buffer.c#4 //depot/projectA/tools/deploy/deploy.go#1",
		"user -o alice",
	}
	if strings.Join(rec.calls, "\n") != strings.Join(wantCalls, "\n") {
		t.Errorf("commands:\n%s\nwant:\n%s", strings.Join(rec.calls, "\n"), strings.Join(wantCalls, "\n"))
	}
	if cs.Changelist != 12345 || cs.User != "alice" || cs.UserEmail != "alice@example.com" ||
		cs.Client != "alice-ws" || cs.Status != "submitted" || !strings.HasPrefix(cs.Description, "projectA: add message_set") {
		t.Errorf("changeset header = %+v", cs)
	}
	if len(cs.Files) != 3 {
		t.Fatalf("files = %+v", cs.Files)
	}
	edit, add, bin := cs.Files[0], cs.Files[1], cs.Files[2]
	if edit.Action != "edit" || edit.Rev != 4 || edit.Type != "text" ||
		!strings.HasPrefix(edit.Diff, "--- //depot/projectA/src/net/buffer.c#3\n+++ //depot/projectA/src/net/buffer.c#4\n@@ -20,6 +20,15 @@\n") ||
		!strings.Contains(edit.Diff, "\n+\tstrcpy(m->text, text);\n") {
		t.Errorf("edit = %+v", edit)
	}
	if add.Action != "add" || !strings.HasPrefix(add.Diff, "--- /dev/null\n+++ //depot/projectA/tools/deploy/deploy.go#1\n@@ -0,0 +1,24 @@\n+// Package deploy") ||
		!strings.Contains(add.Diff, "\n+\tawsAccessKeyID = \"AKIA") {
		t.Errorf("add = %+v", add)
	}
	for _, l := range strings.Split(strings.TrimSuffix(add.Diff, "\n"), "\n")[3:] {
		if !strings.HasPrefix(l, "+") {
			t.Errorf("added file diff line %q lacks +", l)
		}
	}
	if bin.Type != "binary+F" || bin.Diff != "" {
		t.Errorf("binary = %+v", bin)
	}
	// describe's digestN: what tells an unchanged file of a rerun.
	for i, want := range []string{"7D305C220563D38FEF1FFA48B35FF434", "", "7B19CB59D01885DC74F780D3BE2D2918"} {
		if got := cs.Files[i].Digest; (want != "" && got != want) || (want == "" && len(got) != 32) {
			t.Errorf("file %d digest = %q, want %q", i, got, want)
		}
	}
}

func TestFetchShelved(t *testing.T) {
	f, rec, _ := newStandinFetcher(t, nil)
	cs, err := f.Fetch(context.Background(), 12347, true)
	if err != nil {
		t.Fatal(err)
	}
	wantCalls := []string{
		"describe -s -S 12347",
		"print -k //depot/projectA/src/net/buffer.c#4 //depot/projectA/src/net/buffer.c@=12347 //depot/projectA/src/net/retry.go@=12347",
		"user -o bob",
	}
	if strings.Join(rec.calls, "\n") != strings.Join(wantCalls, "\n") {
		t.Errorf("commands:\n%s\nwant:\n%s", strings.Join(rec.calls, "\n"), strings.Join(wantCalls, "\n"))
	}
	if cs.Status != "shelved" || cs.UserEmail != "bob@example.com" || len(cs.Files) != 2 {
		t.Fatalf("changeset = %+v", cs)
	}
	if d := cs.Files[0].Diff; !strings.Contains(d, "\n-\tstrcpy(m->text, text);\n+\tsnprintf(") || !strings.HasPrefix(d, "--- //depot/projectA/src/net/buffer.c#4\n+++ //depot/projectA/src/net/buffer.c@=12347\n") {
		t.Errorf("shelved edit diff:\n%s", d)
	}
	if d := cs.Files[1].Diff; !strings.HasPrefix(d, "--- /dev/null\n+++ //depot/projectA/src/net/retry.go@=12347\n@@ -0,0 +1,13 @@\n") {
		t.Errorf("shelved add diff:\n%s", d)
	}
	// describe -S gives the shelved content's digest.
	if got := cs.Files[0].Digest; got != "0799517EAB4CECEC616D5850AFA65579" {
		t.Errorf("shelved digest = %q", got)
	}
}

func TestFetchRejectsChangeTouchingDeniedPath(t *testing.T) {
	f, rec, logs := newStandinFetcher(t, nil)
	cs, err := f.Fetch(context.Background(), 12346, false)
	if !errors.Is(err, depot.ErrDenied) || failure.Classify(err) != failure.PolicyRejected {
		t.Fatalf("err = %v, want a PolicyRejected allow-list denial", err)
	}
	if cs.Changelist != 0 || cs.Files != nil {
		t.Errorf("partial changeset returned: %+v", cs)
	}
	// Only the changelist query ran: not even the allowed file was fetched.
	if len(rec.calls) != 1 || rec.calls[0] != "describe -s 12346" {
		t.Errorf("commands = %q", rec.calls)
	}
	lines := logLines(t, logs)
	var sawDenied, sawRejected bool
	for _, l := range lines {
		switch l["event"] {
		case "depot_access_denied":
			sawDenied = l["path"] == "//depot/secret/signing/prod-signing.conf" && l["reason"] != ""
		case "changelist_rejected":
			sawRejected = l["denied_files"] == float64(1) && l["changelist"] == float64(12346)
		}
	}
	if !sawDenied || !sawRejected {
		t.Errorf("security events missing:\n%s", logs.String())
	}
}

func TestFetchErrors(t *testing.T) {
	tests := []struct {
		name    string
		cl      int64
		shelved bool
		want    failure.Class
		calls   int
	}{
		{"zero", 0, false, failure.SchemaInvalid, 0},
		{"negative", -5, false, failure.SchemaInvalid, 0},
		{"unknown", 999, false, failure.NotFound, 1},
		{"auth", 9003, false, failure.AuthDenied, 1},
		{"pending not shelved", 12347, false, failure.NotFound, 1},
		{"submitted as shelved", 12345, true, failure.NotFound, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, rec, _ := newStandinFetcher(t, nil)
			_, err := f.Fetch(context.Background(), tt.cl, tt.shelved)
			if got := failure.Classify(err); got != tt.want {
				t.Errorf("class = %s (%v), want %s", got, err, tt.want)
			}
			if len(rec.calls) != tt.calls {
				t.Errorf("commands = %q, want %d", rec.calls, tt.calls)
			}
		})
	}
}

func TestFetchTransientFaultThenSuccess(t *testing.T) {
	f, _, _ := newStandinFetcher(t, nil)
	for attempt := 1; attempt <= 3; attempt++ {
		cs, err := f.Fetch(context.Background(), 9001, false)
		if attempt < 3 {
			if c := failure.Classify(err); c != failure.NetworkTimeout || !c.Retryable() {
				t.Fatalf("attempt %d: class = %s (%v), want retryable %s", attempt, c, err, failure.NetworkTimeout)
			}
			continue
		}
		if err != nil {
			t.Fatalf("attempt 3: %v", err)
		}
		if len(cs.Files) != 1 || !strings.Contains(cs.Files[0].Diff, "+## 1.4.2\n") {
			t.Errorf("changeset = %+v", cs)
		}
	}
}

func TestFetchTimeout(t *testing.T) {
	f, _, _ := newStandinFetcher(t, func(c *Config) { c.Timeout = 200 * time.Millisecond })
	_, err := f.Fetch(context.Background(), 9002, false)
	if c := failure.Classify(err); c != failure.NetworkTimeout {
		t.Errorf("class = %s (%v)", c, err)
	}
}

// fakeRunner answers from canned records, for output the stand-in would
// never produce.
type fakeRunner struct {
	answers map[string][]Record
	calls   []string
}

func (f *fakeRunner) Run(_ context.Context, command string, args ...string) ([]Record, error) {
	call := strings.Join(append([]string{command}, args...), " ")
	f.calls = append(f.calls, call)
	recs, ok := f.answers[call]
	if !ok {
		return nil, failure.Errorf(failure.NotFound, "fake: no answer for %q", call)
	}
	return recs, nil
}

func TestFetchMalformedOrHostileDescribe(t *testing.T) {
	base := func(extra Record) Record {
		r := Record{"change": "77", "user": "alice", "client": "ws", "status": "submitted", "desc": "d\n"}
		for k, v := range extra {
			r[k] = v
		}
		return r
	}
	alice := []Record{{"User": "alice", "Email": "alice@example.com", "Update": "2024/01/01"}}
	del := Record{"depotFile0": "//depot/projectA/a.c", "action0": "delete", "type0": "text", "rev0": "3"}
	tests := []struct {
		name      string
		describe  []Record
		user      []Record
		want      failure.Class // "" for success
		wantCalls int
		email     string
	}{
		{"no records", nil, alice, failure.SchemaInvalid, 1, ""},
		{"other change", []Record{base(Record{"change": "78"})}, alice, failure.SchemaInvalid, 1, ""},
		{"no user", []Record{base(Record{"user": ""})}, alice, failure.SchemaInvalid, 1, ""},
		{"index gap", []Record{base(Record{
			"depotFile0": "//depot/projectA/a.c", "action0": "delete", "type0": "text", "rev0": "2",
			"depotFile2": "//depot/secret/b.c", "action2": "delete", "type2": "text", "rev2": "2",
		})}, alice, failure.SchemaInvalid, 1, ""},
		{"traversal", []Record{base(Record{"depotFile0": "//depot/projectA/../secret/k.pem", "action0": "add", "type0": "text", "rev0": "1"})}, alice, failure.PolicyRejected, 1, ""},
		{"wildcard", []Record{base(Record{"depotFile0": "//depot/projectA/...", "action0": "add", "type0": "text", "rev0": "1"})}, alice, failure.PolicyRejected, 1, ""},
		{"option-like path", []Record{base(Record{"depotFile0": "-a//depot/projectA/x", "action0": "add", "type0": "text", "rev0": "1"})}, alice, failure.PolicyRejected, 1, ""},
		{"bad rev", []Record{base(Record{"depotFile0": "//depot/projectA/a.c", "action0": "edit", "type0": "text", "rev0": "x"})}, alice, failure.SchemaInvalid, 1, ""},
		{"missing type", []Record{base(Record{"depotFile0": "//depot/projectA/a.c", "action0": "edit", "rev0": "2"})}, alice, failure.SchemaInvalid, 1, ""},
		{"option-like user", []Record{base(Record{"user": "-ztag", "depotFile0": "//depot/projectA/a.c", "action0": "delete", "type0": "text", "rev0": "3"})}, alice, failure.SchemaInvalid, 1, ""},
		{"deletes only", []Record{base(del)}, alice, "", 2, "alice@example.com"},
		{"unknown user", []Record{base(del)}, []Record{{"User": "alice", "Email": "alice@ws"}}, "", 2, ""},
		{"no user record", []Record{base(del)}, []Record{}, failure.SchemaInvalid, 2, ""},
		// Every file hidden by protections: nothing to vouch for, nothing fetched.
		{"no visible files", []Record{base(nil)}, alice, failure.PolicyRejected, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fr := &fakeRunner{answers: map[string][]Record{
				"describe -s 77": tt.describe,
				"user -o alice":  tt.user,
			}}
			f, err := NewFetcher(fr, testAllowList(t, nil), nil)
			if err != nil {
				t.Fatal(err)
			}
			cs, err := f.Fetch(context.Background(), 77, false)
			if got := failure.Classify(err); got != tt.want {
				t.Fatalf("class = %q (%v), want %q", got, err, tt.want)
			}
			if len(fr.calls) != tt.wantCalls {
				t.Errorf("commands = %q, want %d", fr.calls, tt.wantCalls)
			}
			if err == nil && cs.UserEmail != tt.email {
				t.Errorf("UserEmail = %q, want %q", cs.UserEmail, tt.email)
			}
		})
	}
}

func TestFetchDiffShapes(t *testing.T) {
	describe := []Record{{
		"change": "88", "user": "bob", "client": "ws", "status": "submitted", "desc": "d\n",
		"depotFile0": "//depot/projectA/int.c", "action0": "integrate", "type0": "text+k", "rev0": "5",
		"depotFile1": "//depot/projectA/br.c", "action1": "branch", "type1": "text", "rev1": "1",
		"depotFile2": "//depot/projectA/first.c", "action2": "edit", "type2": "text", "rev2": "1",
		"depotFile3": "//depot/projectA/same.c", "action3": "edit", "type3": "text", "rev3": "2",
		"depotFile4": "//depot/projectA/lib.so", "action4": "edit", "type4": "ubinary", "rev4": "9",
		"depotFile5": "//depot/projectA/gone.c", "action5": "move/delete", "type5": "text", "rev5": "3",
		"depotFile6": "//depot/projectA/empty.txt", "action6": "add", "type6": "text", "rev6": "1",
	}}
	fr := &fakeRunner{answers: map[string][]Record{
		"describe -s 88": describe,
		"print -k //depot/projectA/int.c#4 //depot/projectA/int.c#5 //depot/projectA/br.c#1 //depot/projectA/first.c#1 //depot/projectA/same.c#1 //depot/projectA/same.c#2 //depot/projectA/empty.txt#1": {
			{"depotFile": "//depot/projectA/int.c", "rev": "4"}, {"data": "a\n"}, {"data": ""},
			{"depotFile": "//depot/projectA/int.c", "rev": "5"}, {"data": "b"}, {"data": "\n"}, {"data": ""},
			{"depotFile": "//depot/projectA/br.c", "rev": "1"}, {"data": "one\ntwo"}, {"data": ""},
			{"depotFile": "//depot/projectA/first.c", "rev": "1"}, {"data": "x\n"}, {"data": ""},
			{"depotFile": "//depot/projectA/same.c", "rev": "1"}, {"data": "s\n"}, {"data": ""},
			{"depotFile": "//depot/projectA/same.c", "rev": "2"}, {"data": "s\n"}, {"data": ""},
			{"depotFile": "//depot/projectA/empty.txt", "rev": "1"}, {"data": ""},
		},
		"user -o bob": {{"User": "bob", "Email": "bob@example.com", "Update": "x"}},
	}}
	f, err := NewFetcher(fr, testAllowList(t, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := f.Fetch(context.Background(), 88, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"--- //depot/projectA/int.c#4\n+++ //depot/projectA/int.c#5\n@@ -1 +1 @@\n-a\n+b\n",
		"--- /dev/null\n+++ //depot/projectA/br.c#1\n@@ -0,0 +1,2 @@\n+one\n+two\n\\ No newline at end of file\n",
		"--- /dev/null\n+++ //depot/projectA/first.c#1\n@@ -0,0 +1 @@\n+x\n",
		"",
		"",
		"",
		"",
	}
	for i, fc := range cs.Files {
		if fc.Diff != want[i] {
			t.Errorf("%s diff = %q, want %q", fc.DepotPath, fc.Diff, want[i])
		}
	}
}

func TestFetchRejectsMismatchedContentHeader(t *testing.T) {
	fr := &fakeRunner{answers: map[string][]Record{
		"describe -s 5": {{"change": "5", "user": "bob", "status": "submitted",
			"depotFile0": "//depot/projectA/a.c", "action0": "add", "type0": "text", "rev0": "1"}},
		"print -k //depot/projectA/a.c#1": {{"depotFile": "//depot/secret/a.c"}, {"data": "x"}},
		"describe -s 6": {{"change": "6", "user": "bob", "status": "submitted",
			"depotFile0": "//depot/projectA/a.c", "action0": "add", "type0": "text", "rev0": "1",
			"depotFile1": "//depot/projectA/b.c", "action1": "add", "type1": "text", "rev1": "1"}},
		// One file answered for two asked: not trusted.
		"print -k //depot/projectA/a.c#1 //depot/projectA/b.c#1": {{"depotFile": "//depot/projectA/a.c"}, {"data": "x"}},
	}}
	f, _ := NewFetcher(fr, testAllowList(t, nil), nil)
	for _, cl := range []int64{5, 6} {
		if _, err := f.Fetch(context.Background(), cl, false); failure.Classify(err) != failure.SchemaInvalid {
			t.Errorf("change %d: err = %v", cl, err)
		}
	}
}

func TestNewFetcherNeedsAllowList(t *testing.T) {
	if _, err := NewFetcher(&fakeRunner{}, nil, nil); failure.Classify(err) != failure.InternalBug {
		t.Errorf("err = %v", err)
	}
	var _ CommandRunner = (*Runner)(nil)
}

// TestDigestOf: only an MD5 as p4 prints it is kept; a malformed digest
// is as if none was given (such a file never counts as unchanged).
func TestDigestOf(t *testing.T) {
	for in, want := range map[string]string{
		"7D305C220563D38FEF1FFA48B35FF434":  "7D305C220563D38FEF1FFA48B35FF434",
		"7d305c220563d38fef1ffa48b35ff434":  "7D305C220563D38FEF1FFA48B35FF434",
		"":                                  "",
		"7D305C220563D38FEF1FFA48B35FF43":   "",
		"7D305C220563D38FEF1FFA48B35FF434A": "",
		"ZZ305C220563D38FEF1FFA48B35FF434":  "",
	} {
		if got := digestOf(in); got != want {
			t.Errorf("digestOf(%q) = %q, want %q", in, got, want)
		}
	}
}
