package p4

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/criticizer/criticizer/internal/standin/p4depot"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
)

// TestFetchLargeChangeFewInvocations fetches generated 5,000-file submitted
// and 1,000-file shelved changes: tens of p4 commands, not thousands, and
// every reviewable file has its diff.
func TestFetchLargeChangeFewInvocations(t *testing.T) {
	for _, tt := range []struct {
		files   int
		shelved bool
	}{{5000, false}, {1000, true}} {
		depotDir := t.TempDir()
		if err := p4depot.Generate(depotDir, p4depot.Spec{Change: 777, Files: tt.files, Shelved: tt.shelved}); err != nil {
			t.Fatal(err)
		}
		r, _ := newTestRunner(t, depotDir, nil)
		rec := &recordingRunner{next: r}
		f, err := NewFetcher(rec, testAllowList(t, nil), nil)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := f.Fetch(context.Background(), 777, tt.shelved)
		if err != nil {
			t.Fatal(err)
		}
		if len(cs.Files) != tt.files {
			t.Fatalf("%d files, want %d", len(cs.Files), tt.files)
		}
		// 1 describe + 1 user + ceil(specs/200) prints; specs ≈ 1.85 per file.
		if n := len(rec.calls); n > 2+tt.files*2/DefaultBatchFiles+1 || n < 3 {
			t.Errorf("%d p4 commands for %d files", n, tt.files)
		}
		for i, fc := range cs.Files {
			switch {
			case fc.Action == "delete" && fc.Diff != "":
				t.Errorf("file %d: a delete has a diff", i)
			case fc.Action == "edit" && !strings.Contains(fc.Diff, "+\tfmt.Println(14)\n"):
				t.Fatalf("file %d: edit diff %q", i, fc.Diff)
			case fc.Action == "add" && !strings.HasPrefix(fc.Diff, "--- /dev/null\n"):
				t.Fatalf("file %d: add diff %q", i, fc.Diff)
			}
		}
	}
}

// TestFetchMove reviews a rename as the diff from the old path#rev.
func TestFetchMove(t *testing.T) {
	f, rec, _ := newStandinFetcher(t, nil)
	cs, err := f.Fetch(context.Background(), 12349, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"describe -s 12349",
		"filelog -m1 //depot/projectA/src/net/buffer_pool.c#1",
		"print -k //depot/projectA/src/net/buf.c#2 //depot/projectA/src/net/buffer_pool.c#1",
		"user -o alice",
	}
	if strings.Join(rec.calls, "\n") != strings.Join(want, "\n") {
		t.Errorf("commands:\n%s\nwant:\n%s", strings.Join(rec.calls, "\n"), strings.Join(want, "\n"))
	}
	d := cs.Files[0].Diff
	if !strings.HasPrefix(d, "--- //depot/projectA/src/net/buf.c#2\n+++ //depot/projectA/src/net/buffer_pool.c#1\n") ||
		!strings.Contains(d, "+#define POOL_MAX 64\n") || strings.Contains(d, "+#include <stddef.h>") {
		t.Errorf("move diff:\n%s", d)
	}
	if cs.Files[1].Action != "move/delete" || cs.Files[1].Diff != "" {
		t.Errorf("move/delete = %+v", cs.Files[1])
	}
}

// TestFetchWarningsFailTheFetch: a warning among print's records (exit 0)
// fails the fetch with the warning's class; a protected path is a policy
// rejection logged as a security event.
func TestFetchWarningsFailTheFetch(t *testing.T) {
	t.Run("no such file", func(t *testing.T) {
		depotDir := fixtureDepot(t)
		// buffer.c#3 is known only as 12345's "before": drop it.
		b, _ := os.ReadFile(filepath.Join(depotDir, "changes", "12345.json"))
		var c map[string]any
		json.Unmarshal(b, &c)
		delete(c["files"].([]any)[0].(map[string]any), "before_file")
		writeChange(t, depotDir, c)
		r, _ := newTestRunner(t, depotDir, nil)
		f, _ := NewFetcher(r, testAllowList(t, nil), nil)
		_, err := f.Fetch(context.Background(), 12345, false)
		if failure.Classify(err) != failure.NotFound || !strings.Contains(err.Error(), "buffer.c#3 - no such file(s).") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("protected namespace", func(t *testing.T) {
		depotDir := fixtureDepot(t)
		os.WriteFile(filepath.Join(depotDir, "server.json"), []byte(`{"protect":["//depot/projectA/tools/..."]}`), 0o644)
		var logs bytes.Buffer
		log := slog.New(slog.NewJSONHandler(&logs, nil))
		r, _ := newTestRunner(t, depotDir, nil)
		r.log = log
		// print of a hidden file directly is refused.
		if _, err := r.Run(context.Background(), "print", "//depot/projectA/tools/deploy/deploy.go#1"); failure.Classify(err) != failure.PolicyRejected {
			t.Errorf("print of a protected file: %v", err)
		}
		if !strings.Contains(logs.String(), `"event":"p4_protected_namespace"`) {
			t.Errorf("no security event: %s", logs.String())
		}
		// The server hides deploy.go from describe, so 12345 would look like
		// a two-file change inside the allow-list: the protections check
		// refuses the fetch before describe, never a partial review.
		logs.Reset()
		rec := &recordingRunner{next: r}
		f, _ := NewFetcher(rec, testAllowList(t, nil), log)
		cs, err := f.CheckProtections().Fetch(context.Background(), 12345, false)
		if failure.Classify(err) != failure.SecurityFailure || cs.Files != nil {
			t.Errorf("fetch with a protected file hidden: %v, %d files; want SECURITY_FAILURE and nothing", err, len(cs.Files))
		}
		if !strings.Contains(logs.String(), `"event":"p4_protections_refused"`) {
			t.Errorf("no security event: %s", logs.String())
		}
		if strings.Join(rec.calls, ",") != "protects" {
			t.Errorf("commands %q: want only the protections check, no describe", rec.calls)
		}
	})
}

// TestProtectionsCheck: before each fetch the service user's own
// protection lines must prove that every allow-listed path is readable with
// no exclusion beneath it, against the stand-in's "p4 protects", which, like
// a real server, answers "read" to "protects -m" whatever is excluded: a
// client that went back to trusting "protects -m //..." fails the refusing
// rows.
func TestProtectionsCheck(t *testing.T) {
	for _, tt := range []struct {
		name, server string
		reason       string // "" when the fetch may go ahead
	}{
		{"read everywhere", `{}`, ""},
		{"an exclusion outside the allow-list", `{"protect":["//depot/secret/..."]}`, ""},
		{"list only outside the allow-list", `{"list_only":["//depot/secret/..."]}`, ""},
		{"an exclusion under an allow-listed path", `{"protect":["//depot/projectA/tools/..."]}`, "exclusion_under_allowlist"},
		{"read through a group, an exclusion elsewhere", `{"protections":["list group everyone * //...","write user alice * //depot/...","read group reviewers * //depot/...","list group everyone * -//depot/secret/..."]}`, ""},
		{"a group's exclusion under an allow-listed path", `{"protections":["read group reviewers * //...","list group contractors * -//depot/projectA/tools/..."]}`, "exclusion_under_allowlist"},
		{"an exclusion from one host under an allow-listed path", `{"protections":["read user criticizer * //...","list user criticizer 10.0.0.1 -//depot/projectA/tools/..."]}`, "exclusion_under_allowlist"},
		{"read from a host range only", `{"protections":["list user criticizer * //...","read user criticizer 10.0.0.0/8 //depot/..."]}`, "no_read"},
		{"a read right, not the read level", `{"protections":["list user criticizer * //...","=read user criticizer * //depot/..."]}`, "no_read"},
		{"list only under an allow-listed path", `{"list_only":["//depot/projectA/assets/..."]}`, "exclusion_under_allowlist"},
		{"a hidden exclusion of an allow-listed path", `{"protect":["//depot/libs/security/..."],"hide_exclusions":true}`, "hidden_exclusions"},
		{"list everywhere", `{"access":"list"}`, "no_read"},
		{"write access", `{"access":"write"}`, "excessive_access"},
		{"super user", `{"access":"super"}`, "excessive_access"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			depotDir := fixtureDepot(t)
			os.WriteFile(filepath.Join(depotDir, "server.json"), []byte(tt.server), 0o644)
			r, _ := newTestRunner(t, depotDir, nil)
			rec := &recordingRunner{next: r}
			var logs bytes.Buffer
			log := slog.New(slog.NewJSONHandler(&logs, nil))
			f, _ := NewFetcher(rec, testAllowList(t, nil), log)
			f.CheckProtections()
			for range 2 {
				_, err := f.Fetch(context.Background(), 12349, false)
				if tt.reason == "" && err != nil {
					t.Fatalf("err = %v, want a fetch", err)
				}
				if tt.reason != "" && (failure.Classify(err) != failure.SecurityFailure || !strings.Contains(err.Error(), "("+tt.reason+")")) {
					t.Fatalf("err = %v, want SECURITY_FAILURE (%s)", err, tt.reason)
				}
			}
			var checks []string
			for _, c := range rec.calls {
				if strings.HasPrefix(c, "protects") {
					checks = append(checks, c)
				}
			}
			for _, c := range checks {
				if strings.HasPrefix(c, "protects -m") {
					t.Errorf("%q: -m ignores paths and exclusions, it proves nothing", c)
				}
			}
			if m := "protects,protects -M //depot/libs/security/...,protects -M //depot/projectA/..."; tt.reason == "" && strings.Join(checks, ",") != m+","+m {
				t.Errorf("protects commands over two fetches %q: want the table and -M per entry each time", checks)
			}
			if tt.reason != "" && !strings.Contains(logs.String(), `"event":"p4_protections_refused","security_event":true,"reason":"`+tt.reason+`"`) {
				t.Errorf("no %s security event: %s", tt.reason, logs.String())
			}
		})
	}
}

// TestProtectionsRecheckedWhenChanged: a table judged sound is judged again
// as soon as it differs, so an exclusion added while the process is warm
// refuses the next fetch; so does one the server hides, which leaves the
// listed table as it was.
func TestProtectionsRecheckedWhenChanged(t *testing.T) {
	for name, server := range map[string]string{
		"a visible exclusion":                   `{"protect":["//depot/projectA/src/secret/..."]}`,
		"a hidden exclusion of an allowed path": `{"protect":["//depot/projectA/..."],"hide_exclusions":true}`,
		"list only, hidden, on an allowed path": `{"list_only":["//depot/libs/security/..."],"hide_exclusions":true}`,
	} {
		t.Run(name, func(t *testing.T) {
			depotDir := fixtureDepot(t)
			r, _ := newTestRunner(t, depotDir, nil)
			f, _ := NewFetcher(r, testAllowList(t, nil), nil)
			f.CheckProtections()
			if _, err := f.Fetch(context.Background(), 12349, false); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(depotDir, "server.json"), []byte(server), 0o644)
			if _, err := f.Fetch(context.Background(), 12349, false); failure.Classify(err) != failure.SecurityFailure {
				t.Fatalf("fetch after the protections changed: %v, want SECURITY_FAILURE", err)
			}
		})
	}
}

// TestFetchListsHugeFilesAndShelvedMoves: a file over MaxFileBytes is listed
// without a diff, marked as over the limit (the review's reason); a shelved move/add is diffed from the move/delete of the
// same name (its base revision).
func TestFetchListsHugeFilesAndShelvedMoves(t *testing.T) {
	fr := &fakeRunner{answers: map[string][]Record{
		"describe -s -S 31": {{"change": "31", "user": "bob", "status": "pending", "shelved": "",
			"depotFile0": "//depot/projectA/new/name.c", "action0": "move/add", "type0": "text", "rev0": "1", "fileSize0": "10",
			"depotFile1": "//depot/projectA/old/name.c", "action1": "move/delete", "type1": "text", "rev1": "6",
			"depotFile2": "//depot/projectA/huge.sql", "action2": "edit", "type2": "text", "rev2": "2", "fileSize2": "999999"}},
		"print -k //depot/projectA/old/name.c#6 //depot/projectA/new/name.c@=31": {
			{"depotFile": "//depot/projectA/old/name.c"}, {"data": "a\nb\n"}, {"data": ""},
			{"depotFile": "//depot/projectA/new/name.c"}, {"data": "a\nc\n"}, {"data": ""}},
		"user -o bob": {{"User": "bob", "Email": "bob@example.com", "Update": "x"}},
	}}
	f, _ := NewFetcher(fr, testAllowList(t, nil), nil)
	f.WithOptions(Options{MaxFileBytes: 1000})
	cs, err := f.Fetch(context.Background(), 31, true)
	if err != nil {
		t.Fatal(err)
	}
	if want := "--- //depot/projectA/old/name.c#6\n+++ //depot/projectA/new/name.c@=31\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"; cs.Files[0].Diff != want {
		t.Errorf("shelved move diff = %q", cs.Files[0].Diff)
	}
	if cs.Files[2].Diff != "" || cs.Files[2].NotDiffed != domain.OverFileBytes || len(cs.Files) != 3 {
		t.Errorf("huge file = %+v: want listed, no diff, marked over the per-file limit", cs.Files[2])
	}
	if cs.Files[0].NotDiffed != "" {
		t.Errorf("diffed file marked %q", cs.Files[0].NotDiffed)
	}

	// Without describe's fileSize, a file is known too large only once
	// printed: it is marked the same.
	fr = &fakeRunner{answers: map[string][]Record{
		"describe -s 32": {{"change": "32", "user": "bob", "status": "submitted",
			"depotFile0": "//depot/projectA/big.txt", "action0": "add", "type0": "text", "rev0": "1"}},
		"print -k //depot/projectA/big.txt#1": {{"depotFile": "//depot/projectA/big.txt"}, {"data": strings.Repeat("x\n", 600)}, {"data": ""}},
		"user -o bob":                         {{"User": "bob", "Email": "bob@example.com", "Update": "x"}},
	}}
	f, _ = NewFetcher(fr, testAllowList(t, nil), nil)
	f.WithOptions(Options{MaxFileBytes: 1000})
	if cs, err = f.Fetch(context.Background(), 32, false); err != nil {
		t.Fatal(err)
	}
	if cs.Files[0].Diff != "" || cs.Files[0].NotDiffed != domain.OverFileBytes {
		t.Errorf("file found huge by print = %+v: want no diff, marked over the per-file limit", cs.Files[0])
	}
}

// concurrentRunner counts the print commands running at once.
type concurrentRunner struct {
	next          CommandRunner
	mu            sync.Mutex
	running, most int
	prints        int
}

func (r *concurrentRunner) Run(ctx context.Context, command string, args ...string) ([]Record, error) {
	if command != "print" {
		return r.next.Run(ctx, command, args...)
	}
	r.mu.Lock()
	r.running++
	r.prints++
	r.most = max(r.most, r.running)
	r.mu.Unlock()
	defer func() { r.mu.Lock(); r.running--; r.mu.Unlock() }()
	return r.next.Run(ctx, command, args...)
}

// TestFetchDiffsPool: the print batches run at most Parallelism at once,
// and the first failure is the fetch's error and stops the batches not yet
// started.
func TestFetchDiffsPool(t *testing.T) {
	depotDir := t.TempDir()
	if err := p4depot.Generate(depotDir, p4depot.Spec{Change: 777, Files: 60}); err != nil {
		t.Fatal(err)
	}
	r, _ := newTestRunner(t, depotDir, nil)
	fetcher := func() (*Fetcher, *concurrentRunner) {
		cr := &concurrentRunner{next: r}
		f, err := NewFetcher(cr, testAllowList(t, nil), nil)
		if err != nil {
			t.Fatal(err)
		}
		return f.WithOptions(Options{Parallelism: 3, BatchFiles: 1}), cr
	}

	f, cr := fetcher()
	if _, err := f.Fetch(context.Background(), 777, false); err != nil {
		t.Fatal(err)
	}
	if cr.most > 3 || cr.most < 2 {
		t.Errorf("%d prints at once, want 2 or 3 of Parallelism 3", cr.most)
	}
	all := cr.prints

	f, cr = fetcher()
	stop := errors.New("sink refused")
	_, err := f.FetchSince(context.Background(), 777, false, Since{}, func(int, domain.FileChange) error { return stop })
	if !errors.Is(err, stop) {
		t.Errorf("err = %v, want the sink's", err)
	}
	if cr.prints >= all {
		t.Errorf("%d of %d prints ran after the first failure", cr.prints, all)
	}
}
