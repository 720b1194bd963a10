package rerun

import (
	"reflect"
	"testing"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/finding"
	"github.com/criticizer/criticizer/shared/ledger"
)

func cur(fp, file string) Current {
	return Current{Fingerprint: fp, Finding: domain.Finding{File: file, Title: "t-" + fp}}
}

func was(fp, file string, line int) ledger.Finding {
	return ledger.Finding{Fingerprint: fp, File: file, Line: line, Severity: "high"}
}

func fps[T interface{ fp() string }](l []T) []string {
	var out []string
	for _, x := range l {
		out = append(out, x.fp())
	}
	return out
}

func (c Current) fp() string { return c.Fingerprint }
func (e Earlier) fp() string { return e.Fingerprint }

func TestCompare(t *testing.T) {
	full := func(files ...string) Coverage {
		return func(f string) bool {
			for _, x := range files {
				if x == f {
					return true
				}
			}
			return false
		}
	}
	prev := &ledger.Version{Version: 1, JobID: "job-1", Findings: []ledger.Finding{
		was("a", "//d/a.c", 10), was("b", "//d/b.c", 5), was("c", "//d/c.c", 7),
	}}
	for _, tc := range []struct {
		name                                string
		prev                                *ledger.Version
		current                             []Current
		full                                Coverage
		withheld                            []string
		wantNil                             bool
		fresh, open, resolved, notRechecked []string
	}{
		{name: "first version: nothing to compare", prev: nil, current: []Current{cur("a", "//d/a.c")}, wantNil: true},
		{name: "all still open", prev: prev, current: []Current{cur("a", "//d/a.c"), cur("b", "//d/b.c"), cur("c", "//d/c.c")},
			full: full("//d/a.c", "//d/b.c", "//d/c.c"), open: []string{"a", "b", "c"}},
		{name: "gone from a file reviewed in full is resolved; new is new", prev: prev,
			current: []Current{cur("a", "//d/a.c"), cur("c", "//d/c.c"), cur("n", "//d/n.c")},
			full:    full("//d/a.c", "//d/b.c", "//d/c.c", "//d/n.c"), fresh: []string{"n"}, open: []string{"a", "c"}, resolved: []string{"b"}},
		{name: "gone from a file not reviewed in full is not re-checked", prev: prev,
			current: []Current{cur("a", "//d/a.c")}, full: full("//d/a.c", "//d/c.c"),
			open: []string{"a"}, resolved: []string{"c"}, notRechecked: []string{"b"}},
		{name: "no coverage at all: nothing resolved", prev: prev, current: nil, full: nil,
			notRechecked: []string{"a", "b", "c"}},
		{name: "the same finding on a moved line is still open (fingerprint, not line)", prev: &ledger.Version{Version: 3, Findings: []ledger.Finding{was("a", "//d/a.c", 10)}},
			current: []Current{{Fingerprint: "a", Finding: domain.Finding{File: "//d/a.c", Line: 99}}}, full: full("//d/a.c"), open: []string{"a"}},
		{name: "previous with no findings: all new", prev: &ledger.Version{Version: 1},
			current: []Current{cur("x", "//d/x.c")}, full: full("//d/x.c"), fresh: []string{"x"}},
		{name: "gone but withheld by the review rules is not resolved", prev: prev,
			current: []Current{cur("a", "//d/a.c")}, full: full("//d/a.c", "//d/b.c", "//d/c.c"), withheld: []string{"b"},
			open: []string{"a"}, resolved: []string{"c"}, notRechecked: []string{"b"}},
		{name: "a fingerprint listed twice in the ledger counts once", prev: &ledger.Version{Version: 1, Findings: []ledger.Finding{was("b", "//d/b.c", 5), was("b", "//d/b.c", 5)}},
			full: full("//d/b.c"), resolved: []string{"b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := Compare(tc.prev, tc.current, tc.full, tc.withheld)
			if tc.wantNil {
				if g != nil {
					t.Fatalf("got %+v, want nil", g)
				}
				return
			}
			if g == nil {
				t.Fatal("got nil")
			}
			for _, c := range []struct {
				name      string
				got, want []string
			}{{"new", fps(g.New), tc.fresh}, {"still open", fps(g.StillOpen), tc.open}, {"resolved", fps(g.Resolved), tc.resolved}, {"not re-checked", fps(g.NotRechecked), tc.notRechecked}} {
				if !reflect.DeepEqual(c.got, c.want) {
					t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
				}
			}
			if g.PreviousVersion != tc.prev.Version || g.PreviousJob != tc.prev.JobID {
				t.Errorf("previous: v%d %q, want v%d %q", g.PreviousVersion, g.PreviousJob, tc.prev.Version, tc.prev.JobID)
			}
		})
	}
}

func TestName(t *testing.T) {
	g := Compare(&ledger.Version{Version: 1, Findings: []ledger.Finding{was("aaaaaaaaaaaa1", "//d/a.c", 1), was("bbbbbbbbbbbb2", "//d/b.c", 2)}},
		nil, func(f string) bool { return f == "//d/a.c" }, nil)
	g.Name(domain.ReviewResult{Findings: []domain.Finding{{ID: finding.ID("aaaaaaaaaaaa1"), Title: "Buffer  overflow\n"}}})
	if g.Resolved[0].Title != "Buffer overflow" || g.NotRechecked[0].Title != "" {
		t.Errorf("titles: resolved %q, not re-checked %q", g.Resolved[0].Title, g.NotRechecked[0].Title)
	}
	var none *Groups
	none.Name(domain.ReviewResult{}) // a first version: no-op
	if none.IsStillOpen("x") {
		t.Error("nil groups hold nothing")
	}
}

func TestFullyReviewed(t *testing.T) {
	cs := &domain.Changeset{Files: []domain.FileChange{{DepotPath: "//d/a.c"}, {DepotPath: "//d/skip.png"}, {DepotPath: "//d/big.c"}}}
	meta := domain.ReviewMeta{SkippedFiles: []domain.SkippedFile{{File: "//d/skip.png", Reason: "binary"}},
		TruncatedFiles: []domain.TruncatedFile{{File: "//d/big.c"}}}
	carriedCS := &domain.Changeset{Previous: &domain.PreviousReview{Version: 1, JobID: "j1"},
		Files: []domain.FileChange{{DepotPath: "//d/a.c", CarriedFrom: 1}, {DepotPath: "//d/big.c"}}}
	for _, tc := range []struct {
		name string
		cs   *domain.Changeset
		meta domain.ReviewMeta
		file string
		want bool
	}{
		{"reviewed", cs, meta, "//d/a.c", true},
		{"skipped", cs, meta, "//d/skip.png", false},
		{"cut to fit", cs, meta, "//d/big.c", false},
		{"not in this version", cs, meta, "//d/gone.c", false},
		{"model not called", cs, domain.ReviewMeta{WithoutModel: "daily budget spent"}, "//d/a.c", false},
		{"carried over unchanged, model not called", carriedCS, domain.ReviewMeta{WithoutModel: "daily budget spent"}, "//d/a.c", true},
		{"carried over, the rest not reviewed", carriedCS, domain.ReviewMeta{WithoutModel: "daily budget spent"}, "//d/big.c", false},
		{"no changeset", nil, meta, "//d/a.c", false},
		{"findings hidden by the rules' cap: a gone finding may only be hidden", cs, domain.ReviewMeta{HiddenByCap: 2}, "//d/a.c", false},
		{"findings hidden by the cap, and which ones: Compare tells them apart", cs, domain.ReviewMeta{HiddenByCap: 2, Withheld: []string{"x", "y"}}, "//d/a.c", true},
	} {
		if got := FullyReviewed(tc.cs, tc.meta)(tc.file); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestDistinct(t *testing.T) {
	cs := &domain.Changeset{Files: []domain.FileChange{{DepotPath: "//d/a.c", Diff: "@@ -1,1 +1,2 @@\n x\n+strcpy(a, b);\n"}}}
	f := domain.Finding{File: "//d/a.c", Line: 2, Title: "Overflow", Severity: "high"}
	again := f
	again.Severity, again.Message = "medium", "said twice"
	other := domain.Finding{File: "//d/a.c", Line: 2, Title: "Other"}
	got := Distinct([]domain.Finding{f, again, other}, cs)
	if len(got) != 2 || got[0].Severity != "high" || got[1].Title != "Other" {
		t.Fatalf("got %+v", got)
	}
	if got[0].Fingerprint != finding.Fingerprint(f, map[int]string{1: "x", 2: "strcpy(a, b);"}) {
		t.Error("fingerprint is not the one definition over the diff's lines")
	}
}
