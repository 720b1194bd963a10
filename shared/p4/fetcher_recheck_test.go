package p4

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/criticizer/criticizer/shared/depot"
)

// The per-command allow-list check next to each print: a file that reaches
// printBatch without passing the changelist-wide check (a future code path
// that forgets it) is still never fetched, and neither is anything else in
// its batch. Removing the re-check fails this test; the whole-changelist
// check cannot mask it here.
func TestPrintBatchRechecksTheAllowList(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	allowed := filePlan{path: "//depot/projectA/ok.c", newSpec: "//depot/projectA/ok.c#2", oldPath: "//depot/projectA/ok.c", oldSpec: "//depot/projectA/ok.c#1"}
	for name, denied := range map[string]filePlan{
		"edit outside":       {path: "//depot/secret/keys.txt", newSpec: "//depot/secret/keys.txt#3", oldPath: "//depot/secret/keys.txt", oldSpec: "//depot/secret/keys.txt#2"},
		"add outside":        {path: "//depot/secret/new.txt", newSpec: "//depot/secret/new.txt#1"},
		"dot-dot escape":     {path: "//depot/projectA/../secret/keys.txt", newSpec: "//depot/projectA/../secret/keys.txt#3"},
		"moved from outside": {path: "//depot/projectA/moved.txt", newSpec: "//depot/projectA/moved.txt#1", oldPath: "//depot/secret/keys.txt", oldSpec: "//depot/secret/keys.txt#3"},
		"interdiff outside":  {path: "//depot/secret/keys.txt", newSpec: "//depot/secret/keys.txt@=12", prevSpec: "//depot/secret/keys.txt@=11", prevVersion: 1},
	} {
		t.Run(name, func(t *testing.T) {
			runner := &fakeRunner{answers: map[string][]Record{}}
			f, err := NewFetcher(runner, testAllowList(t, log), log)
			if err != nil {
				t.Fatal(err)
			}
			diffs, err := f.printBatch(context.Background(), []filePlan{allowed, denied})
			if !errors.Is(err, depot.ErrDenied) || diffs != nil {
				t.Fatalf("diffs %+v, err %v; want ErrDenied", diffs, err)
			}
			if len(runner.calls) != 0 {
				t.Fatalf("p4 ran for a batch naming a denied file: %v", runner.calls)
			}
		})
	}
}
