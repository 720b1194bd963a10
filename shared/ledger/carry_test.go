package ledger_test

import (
	"testing"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/ledger"
)

func TestThreadOf(t *testing.T) {
	for _, tt := range []struct {
		j    job.Job
		want ledger.Thread
	}{
		{job.Job{Changelist: 12346, Swarm: &job.SwarmRun{Review: 885}}, ledger.Thread{Kind: ledger.KindReview, ID: 885}},
		{job.Job{Changelist: 12346}, ledger.Thread{Kind: ledger.KindChangelist, ID: 12346}},
	} {
		if got := ledger.ThreadOf(&tt.j); got != tt.want {
			t.Errorf("ThreadOf(%+v) = %v, want %v", tt.j, got, tt.want)
		}
	}
}

// TestUnchanged: a file is carried over only when everything its diff
// depends on is the same.
func TestUnchanged(t *testing.T) {
	const d = "7D305C220563D38FEF1FFA48B35FF434"
	prev := ledger.File{Path: "//depot/a.c", Action: "edit", Digest: d, Rev: 3, Type: "text", FullyReviewed: true}
	same := domain.FileChange{DepotPath: "//depot/a.c", Action: "edit", Digest: d, Rev: 3, Type: "text"}
	for _, tt := range []struct {
		name string
		edit func(*domain.FileChange)
		want bool
	}{
		{"identical", func(*domain.FileChange) {}, true},
		{"content changed", func(f *domain.FileChange) { f.Digest = "0799517EAB4CECEC616D5850AFA65579" }, false},
		{"no digest", func(f *domain.FileChange) { f.Digest = "" }, false},
		{"other action", func(f *domain.FileChange) { f.Action = "integrate" }, false},
		{"rebased on another revision", func(f *domain.FileChange) { f.Rev = 4 }, false},
		{"other type", func(f *domain.FileChange) { f.Type = "binary" }, false},
		{"other path", func(f *domain.FileChange) { f.DepotPath = "//depot/b.c" }, false},
	} {
		fc := same
		tt.edit(&fc)
		if got := prev.Unchanged(fc); got != tt.want {
			t.Errorf("%s: Unchanged = %v, want %v", tt.name, got, tt.want)
		}
	}
	if (ledger.File{Path: "//depot/a.c"}).Unchanged(domain.FileChange{DepotPath: "//depot/a.c"}) {
		t.Error("two files without digests counted as unchanged")
	}
}

// TestCarryable: only files reviewed in full (with a digest) can be carried.
func TestCarryable(t *testing.T) {
	v := &ledger.Version{Files: []ledger.File{
		{Path: "//depot/full.c", Digest: "A", FullyReviewed: true},
		{Path: "//depot/partly.c", Digest: "B"},
		{Path: "//depot/nodigest.c", FullyReviewed: true},
	}}
	got := v.Carryable()
	if _, ok := got["//depot/full.c"]; !ok || len(got) != 1 {
		t.Errorf("Carryable = %v, want only full.c", got)
	}
	if len((*ledger.Version)(nil).Carryable()) != 0 {
		t.Error("no previous version: nothing carryable")
	}
}
