// Package ledgertest is the rerun ledger's contract: the table of Put and
// Previous behaviours ledger.Store keeps, run over the in-process table
// (shared/ledger) and over the emulator (integration).
package ledgertest

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/criticizer/criticizer/shared/ledger"
)

// Contract runs the ledger's table of behaviours against l. thread returns
// a thread no earlier case used (a store may be shared across runs).
func Contract(t *testing.T, l *ledger.Store, thread func(kind string) ledger.Thread) {
	ctx := context.Background()
	entry := func(th ledger.Thread, version int, jobID string) ledger.Version {
		return ledger.Version{Thread: th, Version: version, JobID: jobID, Change: int64(1000 + version),
			Files: []ledger.File{
				{Path: "//depot/a.c", Action: "edit", Digest: "7D305C220563D38FEF1FFA48B35FF434", FullyReviewed: true, Rev: 3, Type: "text"},
				{Path: "//depot/b.png", Action: "add", Type: "binary", Rev: 1},
			},
			Findings: []ledger.Finding{{Fingerprint: "fp-" + jobID, File: "//depot/a.c", Line: 12, Severity: "high"}}}
	}
	tests := []struct {
		name    string
		kind    string
		puts    []ledger.Version // by version and job; thread filled in
		taken   []bool           // per put: want *VersionTakenError
		ask     int
		wantJob string // "" for no entry
	}{
		{"first version has no previous", ledger.KindReview, []ledger.Version{{Version: 1, JobID: "j1"}}, []bool{false}, 1, ""},
		{"previous is the version below", ledger.KindReview, []ledger.Version{{Version: 1, JobID: "j1"}}, []bool{false}, 2, "j1"},
		{"the latest below, not the first", ledger.KindChangelist, []ledger.Version{{Version: 1, JobID: "j1"}, {Version: 2, JobID: "j2"}, {Version: 3, JobID: "j3"}}, []bool{false, false, false}, 3, "j2"},
		{"a skipped version is not needed", ledger.KindReview, []ledger.Version{{Version: 1, JobID: "j1"}, {Version: 4, JobID: "j4"}}, []bool{false, false}, 3, "j1"},
		{"versions sort as numbers", ledger.KindReview, []ledger.Version{{Version: 9, JobID: "j9"}, {Version: 10, JobID: "j10"}}, []bool{false, false}, 11, "j10"},
		{"nothing below", ledger.KindReview, []ledger.Version{{Version: 5, JobID: "j5"}}, []bool{false}, 5, ""},
		{"the same job writes again", ledger.KindReview, []ledger.Version{{Version: 1, JobID: "j1"}, {Version: 1, JobID: "j1"}}, []bool{false, false}, 2, "j1"},
		{"another job of the same version keeps the first", ledger.KindReview, []ledger.Version{{Version: 1, JobID: "j1"}, {Version: 1, JobID: "other"}}, []bool{false, true}, 2, "j1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th := thread(tt.kind)
			other := thread(tt.kind) // a neighbouring thread: never read
			if err := l.Put(ctx, entry(other, 1, "neighbour")); err != nil {
				t.Fatal(err)
			}
			for i, p := range tt.puts {
				err := l.Put(ctx, entry(th, p.Version, p.JobID))
				var vt *ledger.VersionTakenError
				switch {
				case tt.taken[i] && (!errors.As(err, &vt) || !errors.Is(err, ledger.ErrVersionTaken) || vt.JobID == ""):
					t.Fatalf("put %d: %v, want a VersionTakenError naming the holder", i, err)
				case !tt.taken[i] && err != nil:
					t.Fatalf("put %d: %v", i, err)
				}
			}
			got, err := l.Previous(ctx, th, tt.ask)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantJob == "" {
				if got != nil {
					t.Fatalf("Previous(%d) = %+v, want none", tt.ask, got)
				}
				return
			}
			if got == nil {
				t.Fatalf("Previous(%d) = none, want job %s", tt.ask, tt.wantJob)
			}
			var wantVersion int
			for _, p := range tt.puts {
				if p.JobID == tt.wantJob {
					wantVersion = p.Version
				}
			}
			want := entry(th, wantVersion, tt.wantJob)
			if !reflect.DeepEqual(*got, want) {
				t.Errorf("Previous(%d) =\n%+v\nwant\n%+v", tt.ask, *got, want)
			}
		})
	}
}
