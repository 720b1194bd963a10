//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	swarmstandin "github.com/criticizer/criticizer/internal/standin/swarm"
	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/ledger"
	"github.com/criticizer/criticizer/shared/ledger/ledgertest"
	"github.com/criticizer/criticizer/shared/result"
)

// TestLedgerStoreOnTheEmulator: the DynamoDB ledger passes the same table
// of behaviours as the in-memory one, on the jobs table.
func TestLedgerStoreOnTheEmulator(t *testing.T) {
	st := ledger.NewStore(env.ddb, env.out["JobsTableName"])
	ledgertest.Contract(t, st, func(kind string) ledger.Thread { return ledger.Thread{Kind: kind, ID: changeSeq.Add(1)} })
}

// modelFiles returns the files the LLM stand-in was asked to review for
// changelist cl (each prompt's changed-files line), with how often.
func modelFiles(t *testing.T, cl int64) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, req := range env.llm.Requests() {
		if len(req.Messages) == 0 {
			continue
		}
		user := req.Messages[len(req.Messages)-1].Content
		if !strings.Contains(user, changeMarker(cl)) {
			continue
		}
		_, rest, ok := strings.Cut(user, result.ChangedFilesMarker+"\n")
		if !ok {
			t.Fatalf("a prompt of change %d without its changed files", cl)
		}
		line, _, _ := strings.Cut(rest, "\n")
		var files []string
		if err := json.Unmarshal([]byte(line), &files); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			out[f]++
		}
	}
	return out
}

// TestSwarmRerunCarriesUnchangedFiles: version 2 of a Swarm review, with
// one file changed since version 1, is reviewed through the deployed
// pipeline with the model called only for the changed file's content; the
// unchanged files' findings are version 1's (same ids), coverage counts
// them as reviewed in full and says they were carried over, and the ledger
// holds both versions.
func TestSwarmRerunCarriesUnchangedFiles(t *testing.T) {
	const copyC = "//depot/projectA/src/net/copy.c"
	addCopy := func(content string) func(fx map[string]any) {
		return func(fx map[string]any) {
			fx["files"] = append(fx["files"].([]any), map[string]any{"path": copyC, "action": "add", "type": "text", "rev": 0, "after_file": content})
		}
	}
	v1Change := newChangeWith(t, 12348, addCopy("files/12345/buffer.c.after"))
	reviewID := v1Change + 1
	env.local.Swarm.AddReview(swarmstandin.Review{ID: reviewID, Author: "bob", Change: v1Change, Version: 1})
	results := artifacts.New(artifacts.NewS3Client(env.local.AWS), env.out["RedactedBucketName"])
	runVersion := func(change int64, version int) (*job.Job, domain.ReviewResult) {
		t.Helper()
		run := env.local.Swarm.StartRun(reviewID, version)
		resp := swarmPost(t, change, run, "shelved")
		if resp.Status != http.StatusAccepted {
			t.Fatalf("version %d: %d %s", version, resp.Status, resp.Body)
		}
		j := waitJob(t, resp.Decoded["job_id"].(string), untilSettled(), "succeeded", succeeded)
		var res domain.ReviewResult
		if err := results.GetJSON(context.Background(), j.Artifacts.Result, &res); err != nil {
			t.Fatal(err)
		}
		return j, res
	}
	j1, r1 := runVersion(v1Change, 1)
	if sent := modelFiles(t, v1Change); len(sent) != 3 {
		t.Fatalf("version 1: the model reviewed %v, want all three files", sent)
	}

	// Version 2: copy.c changed (the strcpy fixed); buffer.c and retry.go as they were.
	v2Change := newChangeWith(t, 12348, addCopy("files/12345/buffer.c.before"))
	env.local.Swarm.AddReview(swarmstandin.Review{ID: reviewID, Author: "bob", Change: v2Change, Version: 2})
	j2, r2 := runVersion(v2Change, 2)

	sent := modelFiles(t, v2Change)
	if len(sent) != 1 || sent[copyC] == 0 {
		t.Errorf("version 2: the model reviewed %v, want only the changed %s", sent, copyC)
	}
	ids := func(r domain.ReviewResult, keep func(string) bool) []string {
		var out []string
		for _, f := range r.Findings {
			if keep(f.File) {
				out = append(out, f.ID)
			}
		}
		slices.Sort(out)
		return out
	}
	unchanged := func(f string) bool { return f != copyC }
	if a, b := ids(r1, unchanged), ids(r2, unchanged); !slices.Equal(a, b) {
		t.Errorf("findings on the unchanged files: version 1 %v, version 2 %v; want the same", a, b)
	}
	meta := domain.ReadReviewMeta(r2.Meta)
	if meta.CarriedOver != 2 || meta.CarriedFrom != 1 || meta.FilesReviewed != 3 || meta.FilesTotal != 3 ||
		!strings.Contains(j2.Review.Coverage, "2 unchanged since version 1") {
		t.Errorf("version 2 coverage %q, meta %+v: want 3 of 3 reviewed, 2 carried over from version 1", j2.Review.Coverage, meta)
	}

	st := ledger.NewStore(env.ddb, env.out["JobsTableName"])
	thread := ledger.Thread{Kind: ledger.KindReview, ID: reviewID}
	for _, c := range []struct {
		below int
		job   string
	}{{2, j1.ID}, {3, j2.ID}} {
		e, err := st.Previous(context.Background(), thread, c.below)
		if err != nil || e == nil || e.JobID != c.job || len(e.Files) != 3 {
			t.Fatalf("ledger below version %d: %+v %v, want job %s with 3 files", c.below, e, err, c.job)
		}
		for _, f := range e.Files {
			if !f.FullyReviewed || len(f.Digest) != 32 {
				t.Errorf("ledger below version %d: file %+v, want reviewed in full with a digest", c.below, f)
			}
		}
	}
}
