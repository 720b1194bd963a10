package p4

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/udiff"
)

// reviewVersion2 writes change 12370: version 2 of the review whose
// version 1 is shelf 12347. buffer.c changed once more (one line), retry.go
// is shelved again unchanged.
func reviewVersion2(t *testing.T, depotDir string) (v1, v2 string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(depotDir, "files/12347/buffer.c.after"))
	if err != nil {
		t.Fatal(err)
	}
	v1 = string(b)
	v2 = strings.Replace(v1, "snprintf(", "(void)snprintf(", 1)
	if v2 == v1 {
		t.Fatal("fixture buffer.c has no snprintf to change")
	}
	if err := os.MkdirAll(filepath.Join(depotDir, "files/12370"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(depotDir, "files/12370/buffer.c.after"), []byte(v2), 0o644); err != nil {
		t.Fatal(err)
	}
	writeChange(t, depotDir, map[string]any{
		"change": 12370, "status": "pending", "shelved": true, "user": "swarm", "client": "swarm-archive", "time": 1731930900,
		"desc": "WIP: bound message_set\n\n(archive of Swarm review 12371, version 2)\n",
		"files": []map[string]any{
			{"path": "//depot/projectA/src/net/buffer.c", "action": "edit", "type": "text", "rev": 4,
				"before_file": "files/12345/buffer.c.after", "after_file": "files/12370/buffer.c.after"},
			{"path": "//depot/projectA/src/net/retry.go", "action": "add", "type": "text", "rev": 0, "after_file": "files/12347/retry.go.after"},
		},
	})
	return v1, v2
}

// TestFetchSinceDiffsAgainstTheEarlierShelf: the files Since picks are
// printed from the earlier shelf too, in the same print command, and come
// with their interdiff (the change between the two shelves, "" when there
// is none); the diff against the base is the same as without Since. An
// earlier shelf that cannot be read costs only the interdiffs.
func TestFetchSinceDiffsAgainstTheEarlierShelf(t *testing.T) {
	const buffer, retry = "//depot/projectA/src/net/buffer.c", "//depot/projectA/src/net/retry.go"
	depotDir := fixtureDepot(t)
	v1, v2 := reviewVersion2(t, depotDir)
	all := func(domain.FileChange) bool { return true }
	var fail failing // set by a case: how a print naming the earlier shelf fails
	fetch := func(t *testing.T, since Since) (domain.Changeset, *recordingRunner, *bytes.Buffer) {
		r, _ := newTestRunner(t, depotDir, nil)
		rec := &recordingRunner{next: failing{next: r, shelf: fail.shelf, err: fail.err}}
		var logs bytes.Buffer
		log := slog.New(slog.NewJSONHandler(&logs, nil))
		f, err := NewFetcher(rec, testAllowList(t, log), log)
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		got := map[int]domain.FileChange{}
		cs, err := f.FetchSince(context.Background(), 12370, true, since, func(i int, fc domain.FileChange) error {
			mu.Lock()
			defer mu.Unlock()
			got[i] = fc
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, fc := range got {
			cs.Files[i] = fc
		}
		return cs, rec, &logs
	}
	plain, _, _ := fetch(t, Since{})

	t.Run("interdiffs", func(t *testing.T) {
		cs, rec, _ := fetch(t, Since{Change: 12347, Version: 1, Wants: all})
		wantPrint := "print -k " + buffer + "#4 " + buffer + "@=12347 " + buffer + "@=12370 " + retry + "@=12347 " + retry + "@=12370"
		if rec.calls[1] != wantPrint {
			t.Errorf("print command:\n%s\nwant:\n%s", rec.calls[1], wantPrint)
		}
		b, r := cs.Files[0], cs.Files[1]
		wantInter := "--- " + buffer + "@=12347\n+++ " + buffer + "@=12370\n" + udiff.Unified(v1, v2, 3)
		if b.InterdiffFrom != 1 || b.Interdiff != wantInter {
			t.Errorf("buffer.c interdiff from %d:\n%s\nwant:\n%s", b.InterdiffFrom, b.Interdiff, wantInter)
		}
		if r.InterdiffFrom != 1 || r.Interdiff != "" {
			t.Errorf("retry.go (the same content): interdiff from %d %q, want from 1 and empty", r.InterdiffFrom, r.Interdiff)
		}
		for i := range cs.Files {
			if cs.Files[i].Diff == "" || cs.Files[i].Diff != plain.Files[i].Diff {
				t.Errorf("%s: the diff against the base changed with Since", cs.Files[i].DepotPath)
			}
		}
	})
	t.Run("only the files Wants picks", func(t *testing.T) {
		cs, rec, _ := fetch(t, Since{Change: 12347, Version: 1, Wants: func(fc domain.FileChange) bool { return fc.DepotPath == retry }})
		if strings.Contains(rec.calls[1], buffer+"@=12347") || cs.Files[0].InterdiffFrom != 0 || cs.Files[1].InterdiffFrom != 1 {
			t.Errorf("print %q, interdiffs from %d and %d", rec.calls[1], cs.Files[0].InterdiffFrom, cs.Files[1].InterdiffFrom)
		}
	})
	for name, tc := range map[string]struct {
		shelf int64
		fail  failing
	}{
		"the earlier shelf is gone":                           {12399, failing{}},
		"the answer with the earlier shelf is not understood": {12347, failing{shelf: "@=12347", err: failure.Errorf(failure.SchemaInvalid, "p4 print: unexpected header")}},
	} {
		t.Run(name, func(t *testing.T) {
			fail = tc.fail
			defer func() { fail = failing{} }()
			gone(t, fetch, tc.shelf, all, plain)
		})
	}
	t.Run("a failure that may pass is the stage's to retry", func(t *testing.T) {
		fail = failing{shelf: "@=12347", err: failure.Errorf(failure.NetworkTimeout, "p4 print: i/o timeout")}
		defer func() { fail = failing{} }()
		r, _ := newTestRunner(t, depotDir, nil)
		f, err := NewFetcher(failing{next: r, shelf: fail.shelf, err: fail.err}, testAllowList(t, slog.New(slog.DiscardHandler)), nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.FetchSince(context.Background(), 12370, true, Since{Change: 12347, Version: 1, Wants: all}, func(int, domain.FileChange) error { return nil })
		if failure.Classify(err) != failure.NetworkTimeout {
			t.Errorf("err %v, want the NETWORK_TIMEOUT for the stage to retry", err)
		}
	})
}

// failing fails every print naming shelf with err; the rest runs on next.
type failing struct {
	next  CommandRunner
	shelf string
	err   error
}

func (f failing) Run(ctx context.Context, command string, args ...string) ([]Record, error) {
	if command == "print" && f.shelf != "" && strings.Contains(strings.Join(args, " "), f.shelf) {
		return nil, f.err
	}
	return f.next.Run(ctx, command, args...)
}

// gone checks a fetch whose print with the earlier shelf fails for good:
// printed again without it, every file comes with its diff and no interdiff.
func gone(t *testing.T, fetch func(*testing.T, Since) (domain.Changeset, *recordingRunner, *bytes.Buffer), shelf int64, all func(domain.FileChange) bool, plain domain.Changeset) {
	t.Helper()
	cs, rec, logs := fetch(t, Since{Change: shelf, Version: 1, Wants: all})
	at := "@=" + strconv.FormatInt(shelf, 10)
	if len(rec.calls) != 4 || !strings.Contains(rec.calls[1], at) || strings.Contains(rec.calls[2], at) {
		t.Errorf("commands %q: want the print retried without the earlier shelf", rec.calls)
	}
	for i, f := range cs.Files {
		if f.InterdiffFrom != 0 || f.Interdiff != "" || f.Diff != plain.Files[i].Diff {
			t.Errorf("%s: interdiff from %d %q", f.DepotPath, f.InterdiffFrom, f.Interdiff)
		}
	}
	if !strings.Contains(logs.String(), `"event":"p4_interdiff_unavailable"`) {
		t.Errorf("no p4_interdiff_unavailable event in:\n%s", logs)
	}
}
