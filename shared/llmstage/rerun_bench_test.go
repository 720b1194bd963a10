package llmstage_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/llm"
	"github.com/criticizer/criticizer/shared/llmstage"
	"github.com/criticizer/criticizer/shared/udiff"
)

// BenchmarkRerunSmallFix is version 2 of a Swarm review whose one
// 3,000-line file got a one-line fix: what the model is sent (prompt-KiB)
// and what the stage costs, reviewed whole (no earlier version to diff
// against) and as its interdiff since version 1 (issue 22: a small fix to a
// large review costs a small review).
func BenchmarkRerunSmallFix(b *testing.B) {
	guard, err := guardOnce()
	if err != nil {
		b.Fatal(err)
	}
	const path = "//depot/main/engine/frame.cpp"
	lines := make([]string, 3000)
	for i := range lines {
		lines[i] = fmt.Sprintf("int frame_step_%04d(int x) { return x + %d; }", i+1, i+1)
	}
	lines[99], lines[2899] = "    strcpy(name, input);", "    strcpy(path, dir);"
	v1 := strings.Join(lines, "\n") + "\n"
	lines[99] = "    snprintf(name, sizeof name, \"%s\", input);"
	v2 := strings.Join(lines, "\n") + "\n"

	var sent atomic.Int64
	model := instantModel(func(p llm.Prompt) { sent.Add(int64(len(p.System) + len(p.User))) })
	jobs := newJobs()
	stage := &llmstage.LLM{Redacted: artifacts.New(artifacts.NewMemoryBucket(), "redacted"), Guard: guard, LLM: model, Model: "gpt-4o",
		Log: slog.New(slog.DiscardHandler), Jobs: jobs}
	put := func(id string, cs domain.Changeset) *job.Job {
		key := artifacts.Key(id, "changeset.json")
		if err := stage.Redacted.PutJSON(context.Background(), key, cs); err != nil {
			b.Fatal(err)
		}
		proof, err := guard.Seal(cs)
		if err != nil {
			b.Fatal(err)
		}
		return &job.Job{ID: id, Changelist: cs.Changelist, ReviewVersion: 2, Swarm: &job.SwarmRun{Review: 901},
			Artifacts: job.Artifacts{Redacted: key, RedactedProof: proof}}
	}
	added := func(s string) string { return "--- /dev/null\n+++ " + path + "\n" + udiff.Unified("", s, 3) }
	j1 := put("bench-v1", domain.Changeset{Changelist: 301, Status: "shelved", User: "alice",
		Files: []domain.FileChange{{DepotPath: path, Action: "add", Type: "text", Diff: added(v1)}}})
	j1.ReviewVersion = 1
	res, err := stage.Process(context.Background(), j1)
	if err != nil {
		b.Fatal(err)
	}
	j1.Artifacts.Result = res.Artifacts.Result
	jobs.seed(j1)

	whole := domain.Changeset{Changelist: 302, Status: "shelved", User: "alice",
		Files: []domain.FileChange{{DepotPath: path, Action: "add", Type: "text", Diff: added(v2)}}}
	interdiff := whole
	interdiff.Previous = &domain.PreviousReview{Version: 1, JobID: "bench-v1"}
	interdiff.Files = []domain.FileChange{whole.Files[0]}
	interdiff.Files[0].Interdiff = "--- " + path + "@=301\n+++ " + path + "@=302\n" + udiff.Unified(v1, v2, 3)
	interdiff.Files[0].InterdiffFrom = 1
	for _, c := range []struct {
		name string
		cs   domain.Changeset
	}{{"whole", whole}, {"interdiff", interdiff}} {
		b.Run(c.name, func(b *testing.B) {
			sent.Store(0)
			i := 0
			for b.Loop() {
				i++
				// A new job id each time: nothing is reused from earlier runs.
				j := put(fmt.Sprintf("bench-%s-%d", c.name, i), c.cs)
				if _, err := stage.Process(context.Background(), j); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(sent.Load())/float64(i)/1024, "prompt-KiB")
		})
	}
}
