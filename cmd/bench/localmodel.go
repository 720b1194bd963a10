package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/criticizer/criticizer/internal/devstack"
	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/llm"
	"github.com/criticizer/criticizer/shared/llmstage"
	"github.com/criticizer/criticizer/shared/obs"
	"github.com/criticizer/criticizer/shared/redact"
	"github.com/criticizer/criticizer/shared/result"
)

// benchChange is the review the local-model benchmark times: one small C
// change with a planted overflow, as a user's first try would be.
var benchChange = domain.Changeset{Changelist: 4242, Status: "submitted", User: "alice",
	Description: "net: copy the peer name into the connection record",
	Files: []domain.FileChange{{DepotPath: "//depot/projectA/src/net/conn.c", Action: "edit", Type: "text", Rev: 7,
		Diff: "@@ -10,6 +10,9 @@ struct conn {\n     char name[32];\n };\n \n+void conn_set_name(struct conn *c, const char *peer) {\n+    strcpy(c->name, peer);\n+}\n+\n int conn_open(struct conn *c) {\n     return 0;\n }\n"}}}

// localModelRow is what the benchmark measured.
type localModelRow struct {
	model, form                string
	contextTokens              int
	promptDur                  time.Duration
	promptPerSec, outputPerSec float64
	review                     time.Duration
	in, out                    int
	outcome                    string
}

// runLocalModel starts the local model server (llama.cpp with SmolLM2,
// localstack/llama.sh) and measures, on this machine: prompt tokens per
// second (a call answering one token), one review's latency through the
// llm stage (redacted changeset → prompt → model → parser), its output
// tokens per second, the structured-output form found and the parse
// outcome.
func runLocalModel(ctx context.Context, out io.Writer) error {
	ms, err := devstack.StartModelServer(ctx, devstack.ModelServerOptions{})
	if err != nil {
		return err
	}
	defer func() { _ = ms.Stop() }()
	c, err := llm.NewOpenAI(llm.Config{Endpoint: ms.Endpoint, Model: devstack.LocalModel, Timeout: 5 * time.Minute,
		Schema: result.SchemaJSON(), MaxTokens: 512, Logger: slog.New(slog.DiscardHandler)}, "local")
	if err != nil {
		return err
	}
	row := localModelRow{model: devstack.LocalModel, contextTokens: ms.ContextTokens}
	budget := result.Budget{ContextTokens: ms.ContextTokens, OutputTokens: 512}.For(devstack.LocalModel)
	plan := budget.Plan(benchChange, result.StablePromptVersion, result.RuleSet{})
	if len(plan.Chunks) != 1 {
		return fmt.Errorf("local model: the bench change planned into %d chunks, want 1", len(plan.Chunks))
	}
	p := plan.Prompt(benchChange, plan.Chunks[0], result.StablePromptVersion)
	// Prompt processing: a 1-token answer to the review prompt, behind a
	// fresh nonce so the server's prompt cache cannot serve it. It also
	// finds the response format (the server refuses json_schema).
	system := "run " + rand.Text() + "\n" + p.System
	start := time.Now()
	comp, err := c.Complete(ctx, llm.Prompt{System: system, User: p.User, MaxTokens: 1})
	row.promptDur = time.Since(start)
	if err != nil && !llm.NeedsSmallerInput(err) {
		return fmt.Errorf("local model: prompt-rate call: %w", err)
	}
	row.form = c.Capabilities().ResponseFormat
	inTokens := comp.Usage.InputTokens
	if inTokens == 0 {
		// A 1-token answer is cut ("length"), and a cut answer's usage is
		// not returned: the prompt's tokens estimated from its bytes.
		inTokens = int(float64(p.Size()) / budget.BytesPerToken)
	}
	row.promptPerSec = float64(inTokens) / row.promptDur.Seconds()
	// Generation: up to 128 tokens of the same prompt, which the server
	// keeps evaluated from the call before (llama-cpp-python reuses the
	// matching prefix), so the call's time is generation; a cut answer
	// ("length") generated all 128.
	const genTokens = 128
	start = time.Now()
	comp, err = c.Complete(ctx, llm.Prompt{System: system, User: p.User, MaxTokens: genTokens})
	took := time.Since(start)
	generated := comp.Usage.OutputTokens
	if d, ok := llm.Details(err); ok && d.Reason == llm.ReasonTruncated {
		generated = genTokens
	} else if err != nil && generated == 0 {
		return fmt.Errorf("local model: generation call: %w", err)
	}
	if generated > 0 {
		row.outputPerSec = float64(generated) / took.Seconds()
	}
	row.review, row.in, row.out, row.outcome, err = benchReview(ctx, c, budget)
	if err != nil {
		return err
	}
	renderLocalModel(out, row)
	return nil
}

// benchReview reviews benchChange through the llm stage once.
func benchReview(ctx context.Context, c *llm.Client, budget result.Budget) (time.Duration, int, int, string, error) {
	red, err := redact.New(redact.Policy{})
	if err != nil {
		return 0, 0, 0, "", err
	}
	stage := &llmstage.LLM{Redacted: artifacts.New(artifacts.NewMemoryBucket(), "bench"), Guard: red, LLM: c, Model: devstack.LocalModel,
		Budget: budget, Metrics: obs.NewMetrics(io.Discard, "bench"), Log: slog.New(slog.DiscardHandler)}
	key := artifacts.Key("bench-local", "changeset.json")
	if err := stage.Redacted.PutJSON(ctx, key, benchChange); err != nil {
		return 0, 0, 0, "", err
	}
	start := time.Now()
	res, err := stage.Process(ctx, &job.Job{ID: "bench-local", Changelist: benchChange.Changelist, Artifacts: job.Artifacts{Redacted: key}})
	took := time.Since(start)
	switch {
	case err == nil:
		return took, res.Review.InputTokens, res.Review.OutputTokens,
			fmt.Sprintf("parsed: %d finding(s), form %s", *res.FindingCount, res.Review.ResponseFormat), nil
	case failure.Classify(err) == failure.SchemaInvalid:
		return took, 0, 0, err.Error(), nil
	}
	return took, 0, 0, "", fmt.Errorf("local model: review: %w", err)
}

func renderLocalModel(w io.Writer, r localModelRow) {
	fmt.Fprintf(w, "\nLocal model server (llama-cpp-python, %s, n_ctx %d, 2 threads; a 135M model's speed and answers, not a production model's):\n\n", r.model, r.contextTokens)
	fmt.Fprintln(w, "| response format found | prompt tokens/s | output tokens/s | one review | review tokens in/out | parse outcome |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---|")
	outRate := "-"
	if r.outputPerSec > 0 {
		outRate = fmt.Sprintf("%.1f", r.outputPerSec)
	}
	fmt.Fprintf(w, "| %s | %.0f | %s | %s | %d / %d | %s |\n", r.form, r.promptPerSec, outRate, r.review.Round(10*time.Millisecond), r.in, r.out, r.outcome)
}
