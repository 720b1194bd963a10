package outcome_test

import (
	"context"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
)

func TestAcceptance(t *testing.T) {
	recs := []outcome.Record{
		{PromptVersion: "1.1", Category: "bug", File: "//depot/engine/render/a.cpp", Fate: outcome.Addressed},
		{PromptVersion: "1.1", Category: "bug", File: "//depot/engine/audio/b.cpp", Fate: outcome.Dismissed},
		{PromptVersion: "1.1", Category: "style", File: "//depot/tools/c.py", Fate: outcome.Disliked},
		{PromptVersion: "1.2", Category: "bug", File: "//depot/engine/render/d.cpp", Fate: outcome.Resolved},
		{PromptVersion: "1.2", Category: "bug", File: "//depot/engine/e.cpp", Fate: outcome.Open},
		{PromptVersion: "1.2", Category: "security", File: "//depot/x.go", Fate: outcome.Unknown},
	}
	got := outcome.Acceptance(recs, outcome.ByPromptVersion, 2)
	want := []outcome.Row{
		{Dimension: outcome.ByPromptVersion, Key: "1.1", Findings: 3, Accepted: 1, Dismissed: 2, Share: 1.0 / 3},
		{Dimension: outcome.ByPromptVersion, Key: "1.2", Findings: 3, Accepted: 1, Open: 1, Unknown: 1, Share: 1},
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("by prompt version = %+v, want %+v", got, want)
	}
	paths := outcome.Acceptance(recs, outcome.ByPath, 2)
	keys := map[string]outcome.Row{}
	for _, r := range paths {
		keys[r.Key] = r
	}
	if r := keys["//depot/engine/..."]; r.Findings != 4 || r.Accepted != 2 || r.Dismissed != 1 || r.Open != 1 {
		t.Fatalf("//depot/engine/... = %+v (groups %v)", r, paths)
	}
	if r := keys["//depot/..."]; r.Findings != 1 || r.Unknown != 1 || r.Share != -1 {
		t.Fatalf("//depot/... = %+v: unknown is never accepted", r)
	}
}

func TestAllReadsOnlyOutcomes(t *testing.T) {
	ctx := context.Background()
	db := dynamotest.New()
	st := outcome.NewStore(db, dynamotest.Table)
	for _, fp := range []string{"a", "b"} {
		if _, err := st.Posted(ctx, outcome.Record{Review: 3, Fingerprint: fp}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Watch(ctx, 3, time.Now(), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	recs, err := outcome.All(ctx, db, dynamotest.Table)
	if err != nil || len(recs) != 2 {
		t.Fatalf("All = %+v, %v: want the two records, not the watch entry", recs, err)
	}
}
