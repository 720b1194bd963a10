package decide

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/job"
	fates "github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/rerun"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
)

func TestGate(t *testing.T) {
	findings := []domain.Finding{
		{ID: "F1", Severity: "medium", Category: "style", File: "//depot/a/x.go", Line: 3},
		{ID: "F2", Severity: "high", Category: "security", File: "//depot/a/y.go", Line: 7},
		{ID: "F3", Severity: "critical", Category: "[click](https://evil.example) @alice", File: "//depot/a/z.go", Line: 9},
	}
	tests := []struct {
		name, gate   string
		gates        map[string]string // by the rules of the findings' files
		wantBlocking int
		wantWorst    string
	}{
		{"off", "", nil, 0, ""},
		{"high", "high", nil, 2, "critical clickhttpsevilexampleali finding in z.go line 9"},
		{"critical", "critical", nil, 1, "critical clickhttpsevilexampleali finding in z.go line 9"},
		{"info: everything", "info", nil, 3, "critical clickhttpsevilexampleali finding in z.go line 9"},
		{"rules gate a path, environment off", "", map[string]string{"F1": "medium"}, 1, "medium style finding in x.go line 3"},
		{"rules turn a path off", "high", map[string]string{"F3": "off"}, 1, "high security finding in y.go line 7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := gate(3, findings, tt.gates, tt.gate)
			if o.Blocking != tt.wantBlocking || o.Worst != tt.wantWorst || o.Blocks() != (tt.wantBlocking > 0) {
				t.Fatalf("outcome %+v, want %d blocking, worst %q", o, tt.wantBlocking, tt.wantWorst)
			}
		})
	}
}

func TestGateFromSettings(t *testing.T) {
	for v, want := range map[string]string{"": "", "off": "", "HIGH": "high", "critical": "critical", "severe": "!"} {
		r := config.NewReaderFrom(map[string]string{"SWARM_GATE_SEVERITY": v})
		got := SettingsFromEnv(r).Dismissals.Gate
		if (want == "!") != (r.Err() != nil) || (want != "!" && got != want) {
			t.Errorf("SWARM_GATE_SEVERITY=%q: %q, %v; want %q", v, got, r.Err(), want)
		}
	}
}

// The noise filter follows the environment's N and, per finding, what its
// review rules file set (ReviewMeta.SuppressAfter: 0 turns it off there).
func TestWithholdFollowsRulesAndSettings(t *testing.T) {
	ctx := context.Background()
	long := func(id string, line int) domain.Finding {
		return domain.Finding{ID: id, Severity: "low", Category: "style", Title: "Long line", File: "//depot/app/io.go", Line: line, Message: "m", RuleID: "long-line"}
	}
	cases := []struct {
		name     string
		n        int            // Outcomes.Threshold
		rules    map[string]int // SuppressAfter
		withheld int
	}{
		{"environment N=3 reached", 3, nil, 2},
		{"environment N=4 not reached", 4, nil, 0},
		{"the rules file turns it off for one", 3, map[string]int{"a": 0}, 1},
		{"the rules file lowers N below the environment's", 10, map[string]int{"a": 2, "b": 2}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := fates.NewStore(dynamotest.New(), dynamotest.Table)
			for i := range 3 {
				rec := fates.Record{Review: int64(i + 1), Fingerprint: "fp", File: "//depot/app/io.go", Category: "style", Kind: "long-line", Scope: "//depot/app/..."}
				if _, err := st.Posted(ctx, rec); err != nil {
					t.Fatal(err)
				}
				rec.Fate = fates.Open
				if _, err := st.ChangeFate(ctx, rec, fates.Dismissed, []string{[]string{"alice", "bob"}[i%2]}); err != nil {
					t.Fatal(err)
				}
			}
			pol := fates.PolicyFromEnv(config.NewReaderFrom(map[string]string{"DISMISS_THRESHOLD": fmt.Sprint(tc.n), "DISMISS_SCOPE_DEPTH": "1"}))
			d := &Decider{Outcomes: st, Policy: pol}
			review := domain.ReviewResult{Findings: []domain.Finding{long("a", 1), long("b", 2)},
				Meta: domain.ReviewMeta{SuppressAfter: tc.rules}.Map()}
			got, err := d.withholdDismissed(ctx, &job.Job{ID: "j", Swarm: &job.SwarmRun{Review: 9}}, review, &domain.Changeset{})
			if err != nil {
				t.Fatal(err)
			}
			meta := domain.ReadReviewMeta(got.Meta)
			if w := meta.WithheldAsDismissed; w != tc.withheld || len(got.Findings) != 2-tc.withheld {
				t.Errorf("withheld %d, kept %d; want %d withheld", w, len(got.Findings), tc.withheld)
			}
			recs, err := st.Review(ctx, 9)
			if err != nil || len(recs) != tc.withheld {
				t.Fatalf("%d records of review 9 (%v), want each withheld finding recorded", len(recs), err)
			}
			for _, r := range recs {
				if r.Fate != fates.Withheld {
					t.Errorf("%s recorded %s, want withheld (never resolved, not counted)", r.Fingerprint, r.Fate)
				}
			}
			if tc.withheld > 0 && !strings.Contains(meta.DismissedWithheld(), "criticizer outcomes allow //depot/app/... style long-line") {
				t.Errorf("summary %q does not name the kind, scope and how to lift it", meta.DismissedWithheld())
			}
		})
	}
}

// A finding on no file (said of the change as a whole) is a review-level
// comment: an inline context without a file would be refused by Swarm. A
// filed one is anchored on its line of the version, with the lines around
// it; findings of high severity and above are tasks.
func TestSwarmComments(t *testing.T) {
	j := &job.Job{ID: "j", ReviewVersion: 2, Swarm: &job.SwarmRun{Review: 7}}
	review := domain.ReviewResult{Findings: []domain.Finding{
		{Severity: "info", Category: "coverage", Title: "Binary file not reviewed", Message: "m"},
		{Severity: "high", Category: "style", Title: "t", File: "//depot/a.c", Line: 3, Message: "m"},
	}}
	cs := &domain.Changeset{Files: []domain.FileChange{{DepotPath: "//depot/a.c", Action: "edit", Diff: "@@ -1,3 +1,3 @@\n a\n b\n-c\n+C\n"}}}
	dr := &Decided{Result: review, Current: rerun.Distinct(review.Findings, cs)}
	c := comments(j, dr, cs)
	if len(c.Findings) != 2 || c.Findings[0].Context != nil || c.Findings[0].Task || c.Findings[0].Unanchored != "" {
		t.Fatalf("the file-less finding's comment %+v: want one on the review, no task", c.Findings)
	}
	at := c.Findings[1].Context
	if at == nil || at.File != "//depot/a.c" || at.RightLine != 3 || at.Version != 2 || len(at.Content) == 0 || !c.Findings[1].Task || c.Findings[1].Unanchored == "" {
		t.Fatalf("the filed finding's comment %+v (context %+v): want it on line 3 of version 2 with its lines, a task, and an unanchored body", c.Findings[1], at)
	}
	if !strings.Contains(c.Summary, "version 2") {
		t.Errorf("summary %q: want the version", c.Summary)
	}
}
