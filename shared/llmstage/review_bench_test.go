package llmstage_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"

	llmstandin "github.com/criticizer/criticizer/internal/standin/llm"
	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/llm"
	"github.com/criticizer/criticizer/shared/llmstage"
)

// BenchmarkReviewStage is the llm stage end to end (plan, guard, model,
// parse, store each chunk, merge) for changelists of 10 to 5,000 files with
// a zero-latency model: what the stage itself costs, and how many model calls
// a changelist of that size takes.
func BenchmarkReviewStage(b *testing.B) {
	guard, err := guardOnce()
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{10, 100, 1000, 5000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			var calls atomic.Int64
			model := instantModel(func(llm.Prompt) { calls.Add(1) })
			cs := bigChangeset(n)
			s3 := artifacts.NewMemoryBucket()
			stage := &llmstage.LLM{Redacted: artifacts.New(s3, "redacted"), Guard: guard, LLM: model, Model: "gpt-4o",
				Log: slog.New(slog.DiscardHandler)}
			key := "jobs/bench/redacted.json"
			if err := stage.Redacted.PutJSON(context.Background(), key, cs); err != nil {
				b.Fatal(err)
			}
			// As fetch records it: the guard verifies it instead of re-scanning the diffs.
			proof, err := guard.Seal(cs)
			if err != nil {
				b.Fatal(err)
			}
			i := 0
			for b.Loop() {
				i++
				// A new job id each time: nothing is reused from earlier runs.
				j := &job.Job{ID: fmt.Sprintf("bench-%d", i), Artifacts: job.Artifacts{Redacted: key, RedactedProof: proof}}
				if _, err := stage.Process(context.Background(), j); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(calls.Load())/float64(i), "model-calls")
		})
	}
}

// instantModel answers every prompt at once with the LLM stand-in's
// review, tokens counted as a quarter of the bytes; seen sees each prompt.
func instantModel(seen func(llm.Prompt)) llm.ProviderFunc {
	return func(_ context.Context, p llm.Prompt) (llm.Completion, error) {
		seen(p)
		content, _ := json.Marshal(llmstandin.Review(p.User, "", ""))
		return llm.Completion{Content: content, Usage: llm.Usage{InputTokens: len(p.User) / 4, OutputTokens: len(content) / 4}}, nil
	}
}
