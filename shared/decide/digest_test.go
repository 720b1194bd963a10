package decide

import (
	"context"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/weekly"
)

type weekEntries map[string][]weekly.Entry

type refusedWeeks struct{}

func (refusedWeeks) Record(context.Context, weekly.Week, weekly.Entry) error {
	return failure.Errorf(failure.RateLimited, "throttled")
}

func (w weekEntries) Record(_ context.Context, week weekly.Week, e weekly.Entry) error {
	w[week.String()] = append(w[week.String()], e)
	return nil
}

// With the weekly digest on, deciding a review records its entry in the
// week its job was created in — what it reported, its changed directories,
// its tokens; with it off, nothing. An entry not recorded fails the
// decision, so the stage retries it rather than leave the digest short.
func TestDecideRecordsTheWeeklyDigestEntry(t *testing.T) {
	ctx := context.Background()
	result := domain.ReviewResult{SchemaVersion: "1", PromptVersion: "p1", Meta: domain.ReviewMeta{InputTokens: 900, OutputTokens: 90}.Map(),
		Findings: []domain.Finding{{ID: "f1", File: "//depot/engine/a.cpp", Line: 1, Severity: "high", Category: "bug", Title: "t", Message: "m"}}}
	cs := domain.Changeset{Changelist: 42, User: "alice", Status: "submitted", Description: "d\n", Files: []domain.FileChange{{DepotPath: "//depot/engine/a.cpp", Action: "edit"}}}
	for _, on := range []bool{false, true} {
		weeks := weekEntries{}
		d := &Decider{Artifacts: artifacts.New(artifacts.NewMemoryBucket(), "red")}
		if on {
			d.Weeks = weeks
		}
		j := &job.Job{ID: "j", Changelist: 42, ReviewVersion: 1, Recipients: []string{"alice@example.com"}, CreatedAt: job.FormatTime(time.Date(2026, 11, 22, 23, 0, 0, 0, time.UTC))}
		if err := d.Decide(ctx, j, result, &cs); err != nil {
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
	d := &Decider{Artifacts: artifacts.New(artifacts.NewMemoryBucket(), "red"), Weeks: refusedWeeks{}}
	j := &job.Job{ID: "j2", Changelist: 43, ReviewVersion: 1, CreatedAt: job.FormatTime(time.Now())}
	if err := d.Decide(ctx, j, result, &cs); failure.Classify(err) != failure.RateLimited {
		t.Fatalf("week entry refused: Decide = %v, want the refusal (retried)", err)
	}
}
