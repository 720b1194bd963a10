package notifystage

import (
	"context"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/decide"
	"github.com/criticizer/criticizer/shared/domain"
	fates "github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
	"github.com/criticizer/criticizer/shared/swarm"
)

// Each finding commented on is recorded once, as open; the next version's
// decision records what it resolved, the outcome pass (the sweeper) reads
// the reactions on the earlier comments; a kind dismissed often enough
// under its path is withheld from the versions after and the summary says so.
func TestOutcomesAtTheNextVersion(t *testing.T) {
	ctx := context.Background()
	r := newCommentRig(t)
	st := fates.NewStore(dynamotest.New(), dynamotest.Table)
	// One review: its author bob and a decider, lead, dismissing is enough here.
	pol := fates.PolicyFromEnv(config.NewReaderFrom(map[string]string{"DISMISS_MIN_REVIEWS": "1", "DISMISS_DECIDERS": "lead"}))
	r.n.Outcomes = &decide.Outcomes{Store: st, Now: r.n.Now}
	r.decider.Outcomes, r.decider.Policy = st, pol
	// Who has a say is the review as the fetch stage first read it.
	if err := st.FirstFetched(ctx, swarm.Review{ID: swarmReview, Author: "bob"}); err != nil {
		t.Fatal(err)
	}
	sweep := &fates.Reader{Store: st, Rows: r.items, Comments: r.n.Comments.API.(fates.Comments), Reviews: r.n.Comments.API.(fates.Deciders), Policy: pol}
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
	if _, err := sweep.Read(ctx, swarmReview, nil); err != nil { // the sweeper's outcome pass
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
	// Version 3: the reactions read after version 2 count now (a version is
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
	r.n.Outcomes = &decide.Outcomes{Store: st, Now: r.n.Now}
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
