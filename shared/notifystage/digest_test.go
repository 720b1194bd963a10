package notifystage

import (
	"context"
	"testing"

	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/decide"
	"github.com/criticizer/criticizer/shared/digest"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/outbox"
)

type weekEntries map[string][]digest.Entry

func (w weekEntries) Record(_ context.Context, week digest.Week, e digest.Entry) error {
	w[week.String()] = append(w[week.String()], e)
	return nil
}

// With the weekly digest on, a notified job adds its entry to the week it
// was created in: what it reported, its changed directories, its tokens.
func TestNotifyRecordsTheWeeklyDigestEntry(t *testing.T) {
	ctx := context.Background()
	arts := artifacts.New(artifacts.NewMemoryBucket(), "red")
	result := domain.ReviewResult{SchemaVersion: "1", PromptVersion: "p1", Meta: domain.ReviewMeta{InputTokens: 900, OutputTokens: 90}.Map(),
		Findings: []domain.Finding{{ID: "f1", File: "//depot/engine/a.cpp", Line: 1, Severity: "high", Category: "bug", Title: "t", Message: "m"}}}
	if err := arts.PutJSON(ctx, "jobs/j/result.json", result); err != nil {
		t.Fatal(err)
	}
	cs := domain.Changeset{Changelist: 42, User: "alice", Status: "submitted", Description: "d\n", Files: []domain.FileChange{{DepotPath: "//depot/engine/a.cpp", Action: "edit"}}}
	if err := arts.PutJSON(ctx, "jobs/j/changeset.json", cs); err != nil {
		t.Fatal(err)
	}
	for _, on := range []bool{false, true} {
		n := stage(&fakeRows{rows: map[string]*outbox.Row{}}, &fakeSender{}, &fakeLog{}, t0)
		n.Artifacts, n.From = arts, "criticizer@example.com"
		weeks := weekEntries{}
		if on {
			n.Digest = weeks
		}
		j := &job.Job{ID: "j", Changelist: 42, ReviewVersion: 1, Recipients: []string{"alice@example.com"}, CreatedAt: "2026-11-22T23:00:00Z",
			Artifacts: job.Artifacts{Result: "jobs/j/result.json", Redacted: "jobs/j/changeset.json"}}
		if err := decideJob(&decide.Decider{Artifacts: arts}, j); err != nil {
			t.Fatal(err)
		}
		if _, err := n.Process(ctx, j); err != nil {
			t.Fatal(err)
		}
		got := weeks["2026-W47"]
		if !on {
			if len(weeks) != 0 {
				t.Fatalf("digest off, entries recorded: %v", weeks)
			}
			continue
		}
		if len(weeks) != 1 || len(got) != 1 || got[0].JobID != "j" || len(got[0].Findings) != 1 || got[0].Findings[0].Severity != "high" ||
			got[0].InputTokens != 900 || len(got[0].Dirs) != 1 || got[0].Dirs[0] != "//depot/engine" {
			t.Fatalf("week entries %+v: want the job's entry in the week it was created (2026-W47)", weeks)
		}
	}
}
