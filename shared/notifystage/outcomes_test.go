package notifystage

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/job"
	fates "github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
)

// Each finding commented on is recorded once, as open; at the next version
// the reactions on the earlier comments are read (with the rerun's resolved
// set) and recorded; a kind dismissed often enough under its path is
// withheld from the versions after and the summary says so.
func TestOutcomesAtTheNextVersion(t *testing.T) {
	ctx := context.Background()
	r := newCommentRig(t)
	st := fates.NewStore(dynamotest.New(), dynamotest.Table)
	// One review: its author bob and a decider, lead, dismissing is enough here.
	pol := fates.PolicyFromEnv(config.NewReaderFrom(map[string]string{"DISMISS_MIN_REVIEWS": "1", "DISMISS_DECIDERS": "lead"}))
	r.n.Outcomes = &Outcomes{Store: st, Policy: pol,
		Reader: &fates.Reader{Store: st, Rows: r.items, Comments: r.n.Comments.API.(fates.Comments), Reviews: r.n.Comments.API.(fates.Deciders), Policy: pol}}
	fixed := domain.Finding{Severity: "high", Category: "security", Title: "SQL built from input", File: "//depot/app/db.go", Line: 28, Message: "m", RuleID: "sql"}
	nagging := func(line int) domain.Finding {
		return domain.Finding{Severity: "low", Category: "style", Title: "Long line", File: "//depot/app/io.go", Line: line, Message: "m", RuleID: "long-line"}
	}
	r.job = r.putVersion(t, 1, []domain.Finding{fixed, nagging(1), nagging(2), nagging(3)}, "//depot/app/db.go", "//depot/app/io.go")
	if _, err := r.process(t); err != nil {
		t.Fatal(err)
	}
	recs, err := st.Review(ctx, swarmReview)
	if err != nil || len(recs) != 4 {
		t.Fatalf("version 1 recorded %+v, %v: want 4 open findings", recs, err)
	}
	for i, c := range r.ours(t) {
		if c.Context != nil && strings.HasSuffix(c.Context.File, "io.go") {
			if _, err := r.swarm.Dislike(c.ID, []string{"bob", "lead"}[i%2]); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Version 2: the SQL finding is fixed, the long lines are still there.
	r.job = r.putVersion(t, 2, []domain.Finding{nagging(1), nagging(2), nagging(3), nagging(4)}, "//depot/app/db.go", "//depot/app/io.go")
	if _, err := r.process(t); err != nil {
		t.Fatal(err)
	}
	recs, err = st.Review(ctx, swarmReview)
	if err != nil {
		t.Fatal(err)
	}
	count := map[fates.Fate]int{}
	for _, rec := range recs {
		count[rec.Fate]++
	}
	if len(recs) != 5 || count[fates.Resolved] != 1 || count[fates.Disliked] != 3 || count[fates.Open] != 1 {
		t.Fatalf("after version 2: %+v, want the SQL finding resolved, the three long lines disliked, the new one open", recs)
	}
	// Version 3: the reactions read at version 2 count now (a version is
	// filtered by what was known before it): every long line is withheld.
	r.job = r.putVersion(t, 3, []domain.Finding{nagging(1), nagging(2), nagging(3), nagging(5)}, "//depot/app/db.go", "//depot/app/io.go")
	if _, err := r.process(t); err != nil {
		t.Fatal(err)
	}
	var summary string
	for _, c := range r.ours(t) {
		if c.Context == nil && strings.Contains(c.Body, "version 3:**") {
			summary = c.Body
		}
		if c.Context != nil && c.Context.RightLine == 5 {
			t.Errorf("version 3 commented a withheld long line: %+v", c)
		}
	}
	if !strings.Contains(summary, "4 findings withheld as repeatedly dismissed here") {
		t.Errorf("version 3's summary does not say what it withheld:\n%s", summary)
	}
}

// A job with no Swarm review tells its findings by e-mail only: each is
// recorded once with fate unknown, and the report never counts it accepted.
func TestEmailOnlyFindingsAreUnknown(t *testing.T) {
	ctx := context.Background()
	r := newCommentRig(t)
	db := dynamotest.New()
	st := fates.NewStore(db, dynamotest.Table)
	r.n.Outcomes = &Outcomes{Store: st, Reader: &fates.Reader{Store: st, Rows: r.items, Comments: r.n.Comments.API.(fates.Comments)}}
	r.job.Swarm = nil
	for range 2 { // a returned message records nothing twice
		if _, err := r.process(t); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := fates.All(ctx, db, dynamotest.Table)
	if err != nil || len(recs) == 0 {
		t.Fatalf("records %+v, %v: want the e-mailed findings", recs, err)
	}
	rows := fates.Acceptance(recs, fates.ByPromptVersion, 2)
	if len(rows) != 1 || rows[0].Unknown != len(recs) || rows[0].Accepted != 0 || rows[0].Share != -1 {
		t.Fatalf("report %+v: want every e-mail-only finding unknown, none accepted", rows)
	}
	if len(r.mail.sent) == 0 || r.creates() != 0 {
		t.Fatalf("e-mailed %v, %d comments", r.mail.sent, r.creates())
	}
	if len(recs) != 2 { // commentFindings: three findings, two distinct
		t.Fatalf("%d records, want one per distinct finding (2)", len(recs))
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
			n := &Notify{Outcomes: &Outcomes{Store: st, Policy: pol}}
			review := domain.ReviewResult{Findings: []domain.Finding{long("a", 1), long("b", 2)},
				Meta: domain.ReviewMeta{SuppressAfter: tc.rules}.Map()}
			got, err := n.withholdDismissed(ctx, &job.Job{ID: "j", Swarm: &job.SwarmRun{Review: 9}}, review, &domain.Changeset{})
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
