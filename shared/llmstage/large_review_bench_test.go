package llmstage_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	llmstandin "github.com/criticizer/criticizer/internal/standin/llm"
	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/llm"
	"github.com/criticizer/criticizer/shared/llmstage"
	"github.com/criticizer/criticizer/shared/result"
)

// Provider time runs 60 times faster in BenchmarkLargeReview than at a real
// provider: a minute of rate limit is a second of benchmark.
const benchTimeScale = 60

// BenchmarkLargeReview reviews a 1,000-file changelist against the LLM
// stand-in with a realistic time per call (20 s of generation) over 24 chunks and a
// tokens-per-minute limit enforced with 429s, sized so that the limit, not
// the calls, bounds the review: the floor the limit imposes (the tokens the
// limit counted ÷ the limit) is about 4 s at the 60:1 time scale. The
// review runs the way the llm function does: behind a fresh Limiter (one
// function instance) that learns the limit from the headers, with the
// function's timeout (15 min), attempts repeated until one finishes.
//
// It runs the stable prompt and RulesPromptVersion (the candidate whose
// static part is long enough for providers to cache), and reports wall time against that floor (wall/floor; target ≤ 1.3),
// attempts used (target 1), 429s met, and the input tokens billed per
// reviewed changed line, uncached and cached (the prompt's static prefix
// read from the provider's cache).
func BenchmarkLargeReview(b *testing.B) {
	for _, version := range []string{result.StablePromptVersion, result.RulesPromptVersion} {
		b.Run("prompt="+version, func(b *testing.B) { benchLargeReview(b, version) })
	}
}

func benchLargeReview(b *testing.B, version string) {
	guard, err := guardOnce()
	if err != nil {
		b.Fatal(err)
	}
	rollout := result.Rollout{}
	if version != result.StablePromptVersion {
		rollout = result.Rollout{Candidate: version, Percent: 100}
	}
	cs := largeChangeset(1000)
	changedLines := 0
	for _, f := range cs.Files {
		for _, line := range strings.Split(f.Diff, "\n") {
			if (strings.HasPrefix(line, "+") || strings.HasPrefix(line, "-")) && !strings.HasPrefix(line, "+++") && !strings.HasPrefix(line, "---") {
				changedLines++
			}
		}
	}
	// The limit: what the review's calls will be charged (prompt plus the
	// output reservation), spread over about 4 s.
	budget := result.Budget{}.For("gpt-4o")
	plan := budget.Plan(cs, version, result.RuleSet{})
	estimate := 0
	for _, c := range plan.Chunks {
		estimate += plan.Prompt(cs, c, version).Size()/4 + budget.OutputTokens + 500
	}
	const floorTarget = 4 * time.Second
	tpm := int(float64(estimate) / floorTarget.Minutes())

	var wall, floor time.Duration
	var attempts, limited, uncached, cached int
	runs := 0
	for b.Loop() {
		runs++
		// A fresh provider (full buckets) and function instance each run.
		srv := llmstandin.NewServer(llmstandin.Options{APIKey: apiKey, Latency: 20 * time.Second / benchTimeScale,
			TokensPerMinute: tpm, RateLimitBurst: time.Minute / benchTimeScale})
		url, err := srv.Start("")
		if err != nil {
			b.Fatal(err)
		}
		llmTimeout := 45 * time.Second / benchTimeScale
		client := standinClient(b, url, "gpt-4o")
		lim := llm.NewLimiter(llm.LimiterConfig{MaxConcurrency: llmstage.DefaultParallelism, Reserve: llmTimeout})
		s3 := artifacts.NewMemoryBucket()
		stage := &llmstage.LLM{Redacted: artifacts.New(s3, "redacted"), Guard: guard, LLM: lim.Wrap("gpt-4o", client),
			Model: "gpt-4o", Rollout: rollout, FinishReserve: 10 * time.Second / benchTimeScale, Log: slog.New(slog.DiscardHandler)}
		key := "jobs/large/redacted.json"
		if err := stage.Redacted.PutJSON(context.Background(), key, cs); err != nil {
			b.Fatal(err)
		}
		proof, err := guard.Seal(cs)
		if err != nil {
			b.Fatal(err)
		}
		j := &job.Job{ID: fmt.Sprintf("large-%d", runs), Artifacts: job.Artifacts{Redacted: key, RedactedProof: proof}}

		start := time.Now()
		var res job.Result
		for attempt := 1; ; attempt++ {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute/benchTimeScale)
			res, err = stage.Process(ctx, j)
			cancel()
			if err == nil {
				attempts += attempt
				break
			}
			if attempt == 5 || !failure.Classify(err).Retryable() {
				b.Fatalf("attempt %d: %v", attempt, err)
			}
		}
		wall += time.Since(start)
		charged := 0
		for _, r := range srv.Requests() {
			charged += r.ChargedTokens
			if r.Status == 429 {
				limited++
			}
		}
		floor += time.Duration(float64(charged) / float64(tpm) * float64(time.Minute))
		uncached += res.Review.InputTokens - res.Review.CachedInputTokens
		cached += res.Review.CachedInputTokens
		srv.Close()
	}
	n := float64(runs)
	b.ReportMetric(wall.Seconds()/n, "wall-s")
	b.ReportMetric(floor.Seconds()/n, "floor-s")
	b.ReportMetric(wall.Seconds()/floor.Seconds(), "wall/floor")
	b.ReportMetric(float64(attempts)/n, "attempts")
	b.ReportMetric(float64(limited)/n, "429s")
	b.ReportMetric(float64(uncached)/n/float64(changedLines), "uncached-in/line")
	b.ReportMetric(float64(cached)/n/float64(changedLines), "cached-in/line")
}

// largeChangeset is n files of C code with hunks of 40 to 160 lines, most of
// them added, some removed, some context: about 6 KB of diff a file.
func largeChangeset(n int) domain.Changeset {
	cs := domain.Changeset{Changelist: 9100, Status: "submitted", User: "alice",
		Description: "Port the storage layer to the new buffer API\n\nTouches every module that reads or writes blocks."}
	for i := range n {
		var d strings.Builder
		lines := 40 + (i*37)%120
		fmt.Fprintf(&d, "@@ -%d,%d +%d,%d @@\n", 10+i%50, lines/2, 10+i%50, lines)
		for l := range lines {
			sign := "+"
			switch l % 5 {
			case 3:
				sign = "-"
			case 4:
				sign = " "
			}
			fmt.Fprintf(&d, "%s    status = storage_write_block(ctx, buffer_%d, offset + %d * BLOCK_SIZE, &written);\n", sign, i, l)
		}
		cs.Files = append(cs.Files, domain.FileChange{DepotPath: fmt.Sprintf("//depot/main/storage/mod%02d/block_%04d.c", i/100, i),
			Action: "edit", Type: "text", Rev: 3 + i%7, Diff: d.String()})
	}
	return cs
}
