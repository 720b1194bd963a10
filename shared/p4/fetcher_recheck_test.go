package p4

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/criticizer/criticizer/shared/depot"
	"github.com/criticizer/criticizer/shared/domain"
)

// The per-file allow-list check next to each content command: a file that
// reaches fileDiff without passing the changelist-wide check (a future code
// path that forgets it) is still never fetched. Removing the re-check fails
// this test; the whole-changelist check cannot mask it here.
func TestFileDiffRechecksTheAllowList(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	for _, fc := range []domain.FileChange{
		{DepotPath: "//depot/secret/keys.txt", Action: "edit", Type: "text", Rev: 3},
		{DepotPath: "//depot/secret/new.txt", Action: "add", Type: "text", Rev: 1},
		{DepotPath: "//depot/projectA/../secret/keys.txt", Action: "edit", Type: "text", Rev: 3},
	} {
		t.Run(fc.DepotPath+" "+fc.Action, func(t *testing.T) {
			runner := &fakeRunner{answers: map[string][]Record{}}
			f, err := NewFetcher(runner, testAllowList(t, log), log)
			if err != nil {
				t.Fatal(err)
			}
			for _, shelved := range []bool{false, true} {
				diff, err := f.fileDiff(context.Background(), 42, shelved, fc)
				if !errors.Is(err, depot.ErrDenied) || diff != "" {
					t.Fatalf("shelved=%v: diff %q, err %v; want ErrDenied", shelved, diff, err)
				}
			}
			if len(runner.calls) != 0 {
				t.Fatalf("p4 ran for a denied file: %v", runner.calls)
			}
		})
	}
}
