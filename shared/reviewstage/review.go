// Package reviewstage is the llm stage's stage.Processor: redacted changeset
// → prompt → LLM → validated ReviewResult artifact. Leases, retries and dead
// letters are the stage runtime's business, not its own.
package reviewstage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/llm"
	"github.com/criticizer/criticizer/shared/obs"
	"github.com/criticizer/criticizer/shared/redact"
	"github.com/criticizer/criticizer/shared/review"
	"github.com/criticizer/criticizer/shared/sanitize"
)

// TextRedactor is the pre-submit guard: it verifies the fetch stage's proof
// of redaction and scans what the proof does not cover.
type TextRedactor interface {
	Verify(proof string, artifact any) error
	GuardPrompt(prompt string, proven *redact.Proven) ([]redact.Match, error)
}

// Completer is the LLM provider.
type Completer interface {
	Complete(ctx context.Context, p llm.Prompt) (llm.Completion, error)
}

// DefaultParallelism bounds the chunks reviewed at once.
const DefaultParallelism = 4

// maxSplitDepth bounds how often one chunk is halved after a truncated or
// over-long answer: 2^8 pieces is far past any real model's limit.
const maxSplitDepth = 8

// Review is the llm stage: it plans the redacted changeset into chunks that
// fit the model, reviews them with bounded parallelism, stores each chunk's
// result as it finishes (so a retry or replay redoes only unfinished chunks),
// and merges them into one ReviewResult.
type Review struct {
	Redacted *artifacts.Store // reads the redacted changeset, writes chunk results and the result
	Guard    TextRedactor
	LLM      Completer
	// Model names the model; it is part of each chunk's cache key, so a
	// chunk reviewed by another model is not reused.
	Model string
	// Budget sizes chunks and states the limits; zero fields take the
	// model family's defaults.
	Budget  review.Budget
	Rollout review.Rollout
	// AllowPromptPatchDrift accepts an answer whose prompt_version differs
	// from the one sent only in its patch segment (rule RC-4's configured
	// drift; PROMPT_PATCH_DRIFT per environment).
	AllowPromptPatchDrift bool
	// Parallelism bounds concurrent model calls; 0 means DefaultParallelism.
	Parallelism int
	Metrics     *obs.Metrics
	Log         *slog.Logger
}

// chunkArtifact is a finished chunk as stored, keyed by job and prompt digest.
type chunkArtifact struct {
	review.ChunkResult
	// Split marks a chunk that was answered by reviewing smaller pieces; a
	// replay goes straight to them.
	Split         bool                   `json:"split,omitempty"`
	Truncated     []review.TruncatedFile `json:"truncated,omitempty"`
	PromptVersion string                 `json:"prompt_version"`
	Model         string                 `json:"model,omitempty"`
	RequestID     string                 `json:"request_id,omitempty"`
	FinishReason  string                 `json:"finish_reason,omitempty"`
	Usage         llm.Usage              `json:"usage"`
	// Content is the model's raw answer (derived from redacted input only),
	// kept for debugging dropped findings.
	Content string `json:"content,omitempty"`
}

// run is one Process call's shared state.
type run struct {
	r       *Review
	job     *job.Job
	cs      domain.Changeset
	proven  *redact.Proven // lines covered by a verified proof of redaction
	plan    review.Plan
	version string

	mu        sync.Mutex
	results   []leaf
	truncated []review.TruncatedFile
	calls     int
	reused    int
	usage     llm.Usage
	diags     map[string]int
}

type leaf struct {
	order []int // position in the plan, for a deterministic merge order
	res   review.ChunkResult
}

// Process reviews the redacted changeset and stores the validated result.
func (r *Review) Process(ctx context.Context, j *job.Job) (job.Result, error) {
	if j.Artifacts.Redacted == "" {
		return job.Result{}, failure.Errorf(failure.InternalBug, "job reached the llm stage without a redacted changeset")
	}
	var cs domain.Changeset
	if err := r.Redacted.GetJSON(ctx, j.Artifacts.Redacted, &cs); err != nil {
		return job.Result{}, err
	}
	// The diffs carry fetch's proof of redaction: verified once here, they
	// are not scanned again for every prompt. An artifact that does not
	// match its proof means redaction was bypassed: blocked.
	var proven *redact.Proven
	switch err := r.Guard.Verify(j.Artifacts.RedactedProof, cs); {
	case err == nil:
		diffs := make([]string, len(cs.Files))
		for i, f := range cs.Files {
			diffs[i] = f.Diff
		}
		proven = redact.NewProven(diffs...)
	case errors.Is(err, redact.ErrNoProof), errors.Is(err, redact.ErrStaleProof):
		// Fetched before proofs or under other rules: prompts are scanned whole.
	default:
		return job.Result{}, failure.Errorf(failure.PolicyRejected, "pre-submit redaction guard: %w; LLM call blocked", err)
	}
	version := r.Rollout.Pick(j.ID)
	budget := r.Budget.For(r.Model)
	run := &run{r: r, job: j, cs: cs, proven: proven, version: version, plan: budget.Plan(cs, version), diags: map[string]int{}}
	if n := len(run.plan.Skipped); n > 0 {
		r.Log.WarnContext(ctx, "files not reviewed", "skipped_files", n, "prompt_version", version)
	}

	if err := run.reviewAll(ctx); err != nil {
		run.emitMetrics(nil)
		return job.Result{}, err
	}

	slices := run.results
	sortLeaves(slices)
	parts := make([]review.ChunkResult, len(slices))
	reviewed := 0
	for i, l := range slices {
		parts[i] = l.res
		reviewed += len(l.res.Files)
	}
	result := review.Merge(parts, version)
	truncated := append(append([]review.TruncatedFile{}, run.plan.Truncated...), run.truncated...)
	meta := domain.ReviewMeta{
		PromptVersion: version, Chunks: len(slices), ModelCalls: run.calls, ReusedChunks: run.reused,
		FilesReviewed: reviewed, SkippedFiles: run.plan.Skipped, TruncatedFiles: truncated,
		DroppedFindings: run.diags[review.KindFindingDropped],
		InputTokens:     run.usage.InputTokens, OutputTokens: run.usage.OutputTokens,
	}
	result.Meta = meta.Map()
	run.emitMetrics(&result)

	key := artifacts.Key(j.ID, "review.json")
	if err := r.Redacted.PutJSON(ctx, key, result); err != nil {
		return job.Result{}, err
	}
	n := len(result.Findings)
	return job.Result{Artifacts: job.Artifacts{Result: key}, FindingCount: &n,
		Review: &job.ReviewStats{PromptVersion: version, InputTokens: run.usage.InputTokens, OutputTokens: run.usage.OutputTokens,
			ModelCalls: run.calls, Chunks: len(slices), SkippedFiles: len(run.plan.Skipped), TruncatedFiles: len(truncated)},
		Detail: fmt.Sprintf("findings %d, chunks %d, model calls %d, skipped files %d, prompt %s",
			n, len(slices), run.calls, len(run.plan.Skipped), version)}, nil
}

// reviewAll reviews the plan's chunks, at most Parallelism at once. After the
// first failure no new chunk starts; chunks in flight finish and are stored,
// so the stage's retry redoes only what did not finish.
func (run *run) reviewAll(ctx context.Context) error {
	par := run.r.Parallelism
	if par <= 0 {
		par = DefaultParallelism
	}
	sem := make(chan struct{}, par)
	var (
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
		failed   = make(chan struct{})
	)
	for i, c := range run.plan.Chunks {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		case <-failed:
		}
		if ctx.Err() != nil || isClosed(failed) {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := run.reviewChunk(ctx, c, []int{i}, 0); err != nil {
				errOnce.Do(func() { firstErr = err; close(failed) })
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("review stopped: %w", context.Cause(ctx))
	}
	return nil
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// reviewChunk reviews one chunk, reusing its stored result when there is
// one. A truncated or over-long answer splits the chunk and reviews the
// pieces; the split is stored too, so a replay never asks again.
func (run *run) reviewChunk(ctx context.Context, c review.Chunk, order []int, depth int) error {
	r := run.r
	prompt := run.plan.Prompt(run.cs, c, run.version)
	if err := r.guard(prompt, run.proven); err != nil {
		return err
	}
	key := artifacts.Key(run.job.ID, "chunks/"+chunkDigest(run.version, r.Model, prompt)+".json")
	var stored chunkArtifact
	switch err := r.Redacted.GetJSON(ctx, key, &stored); {
	case err == nil && stored.Split:
		run.addTruncated(stored.Truncated)
		return run.split(ctx, c, order, depth)
	case err == nil:
		run.finish(order, stored, false)
		return nil
	case failure.Classify(err) != failure.NotFound:
		return err
	}

	comp, err := r.LLM.Complete(ctx, llm.Prompt(prompt))
	run.mu.Lock()
	run.calls++
	run.mu.Unlock()
	if err != nil {
		if llm.NeedsSmallerInput(err) && depth < maxSplitDepth {
			if _, _, ok := c.Split(); ok {
				d, _ := llm.Details(err)
				r.Log.WarnContext(ctx, "chunk answer did not fit; splitting", "reason", d.Reason, "files", len(c.Files()),
					"bytes", c.Bytes(), "request_id", d.RequestID, "depth", depth)
				if err := r.Redacted.PutJSON(ctx, key, chunkArtifact{Split: true, PromptVersion: run.version, Model: r.Model,
					RequestID: d.RequestID, ChunkResult: review.ChunkResult{Files: c.Files()}}); err != nil {
					return err
				}
				return run.split(ctx, c, order, depth)
			}
		}
		r.recordError(ctx, key, err)
		return err
	}
	res, diags, err := review.Parse(comp.Content, c.Files(), review.Options{PromptVersion: run.version, AllowPromptPatchDrift: r.AllowPromptPatchDrift})
	diags.Log(ctx, r.Log)
	run.countDiags(diags)
	if err != nil {
		return err
	}
	art := chunkArtifact{
		ChunkResult:   review.ChunkResult{Files: c.Files(), Summary: res.Summary, Findings: res.Findings, Diagnostics: diags.Counts()},
		PromptVersion: run.version, Model: r.Model, RequestID: comp.RequestID, FinishReason: comp.FinishReason,
		Usage: comp.Usage, Content: string(comp.Content),
	}
	if err := r.Redacted.PutJSON(ctx, key, art); err != nil {
		return err
	}
	run.finish(order, art, true)
	return nil
}

// split reviews c's pieces in turn (they are children of one worker's chunk).
func (run *run) split(ctx context.Context, c review.Chunk, order []int, depth int) error {
	parts, trunc, _ := c.Split()
	if trunc != nil {
		run.addTruncated([]review.TruncatedFile{*trunc})
	}
	for i, p := range parts {
		if err := run.reviewChunk(ctx, p, append(append([]int{}, order...), i), depth+1); err != nil {
			return err
		}
	}
	return nil
}

func (run *run) addTruncated(t []review.TruncatedFile) {
	run.mu.Lock()
	defer run.mu.Unlock()
	run.truncated = append(run.truncated, t...)
}

func (run *run) finish(order []int, a chunkArtifact, fresh bool) {
	run.mu.Lock()
	defer run.mu.Unlock()
	run.results = append(run.results, leaf{order: order, res: a.ChunkResult})
	run.usage = run.usage.Add(a.Usage)
	if !fresh {
		run.reused++
		for k, v := range a.Diagnostics {
			run.diags[kindOf(k)] += v
		}
	}
}

func (run *run) countDiags(ds review.Diagnostics) {
	run.mu.Lock()
	defer run.mu.Unlock()
	for _, d := range ds {
		run.diags[d.Kind]++
	}
}

func kindOf(kindReason string) string {
	for i := 0; i < len(kindReason); i++ {
		if kindReason[i] == '/' {
			return kindReason[:i]
		}
	}
	return kindReason
}

// emitMetrics writes the per-prompt-version metrics the canary and rollback
// alarms watch. res is nil when the job failed.
func (run *run) emitMetrics(res *domain.ReviewResult) {
	m := run.r.Metrics
	dims := map[string]string{"Stage": string(domain.StageLLM), "PromptVersion": run.version}
	run.mu.Lock()
	defer run.mu.Unlock()
	m.Put("ReviewCoercions", float64(run.diags[review.KindCoercion]), obs.Count, dims)
	m.Put("ReviewFindingsDropped", float64(run.diags[review.KindFindingDropped]), obs.Count, dims)
	m.Put("ReviewResponsesRejected", float64(run.diags[review.KindRejected]), obs.Count, dims)
	m.Put("ReviewModelCalls", float64(run.calls), obs.Count, dims)
	if res != nil {
		m.Put("ReviewValidFindings", float64(len(res.Findings)), obs.Count, dims)
	}
}

// guard is the pre-submit check: every prompt is built from redacted text
// only, so a scan of what the proof does not cover (instructions, headers,
// the description, any line not in the proven diffs) must find nothing. A
// failure or a match means redaction was bypassed or broken, and the
// request is blocked.
func (r *Review) guard(p review.Prompt, proven *redact.Proven) error {
	matches, err := r.Guard.GuardPrompt(p.System+"\n"+p.User, proven)
	if err != nil {
		return failure.Errorf(failure.PolicyRejected, "pre-submit redaction guard failed; LLM call blocked: %w", err)
	}
	if len(matches) > 0 {
		rules := make([]string, 0, len(matches))
		for _, m := range matches {
			rules = append(rules, m.Rule)
		}
		return failure.Errorf(failure.PolicyRejected, "prompt still matches %d secret rule(s) %v after redaction; LLM call blocked", len(matches), rules)
	}
	return nil
}

// recordError keeps what the provider said about a failed chunk (reason,
// request id, sanitized refusal text) beside the chunk, for diagnosis.
func (r *Review) recordError(ctx context.Context, key string, err error) {
	d, ok := llm.Details(err)
	if !ok {
		return
	}
	if perr := r.Redacted.PutJSON(ctx, key[:len(key)-len(".json")]+".error.json", map[string]any{
		// Provider text is untrusted: it passes the sanitizer like any stored error.
		"class": failure.Classify(err), "reason": d.Reason, "status": d.Status, "code": sanitize.Text(d.Code), "type": sanitize.Text(d.Type),
		"request_id": sanitize.Text(d.RequestID), "refusal": sanitize.Text(d.Refusal), "detail": sanitize.Text(d.Detail),
	}); perr != nil && !errors.Is(perr, context.Canceled) {
		r.Log.WarnContext(ctx, "could not store chunk error diagnostics", "error", perr.Error())
	}
}

// chunkDigest keys a chunk's stored result: the same prompt to the same model
// under the same prompt version is the same question.
func chunkDigest(version, model string, p review.Prompt) string {
	h := sha256.New()
	for _, s := range []string{version, model, p.System, p.User} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func sortLeaves(ls []leaf) {
	less := func(a, b []int) bool {
		for i := 0; i < len(a) && i < len(b); i++ {
			if a[i] != b[i] {
				return a[i] < b[i]
			}
		}
		return len(a) < len(b)
	}
	for i := 1; i < len(ls); i++ {
		for j := i; j > 0 && less(ls[j].order, ls[j-1].order); j-- {
			ls[j], ls[j-1] = ls[j-1], ls[j]
		}
	}
}

// CompleterFunc adapts a function to Completer.
type CompleterFunc func(ctx context.Context, p llm.Prompt) (llm.Completion, error)

// Complete calls f.
func (f CompleterFunc) Complete(ctx context.Context, p llm.Prompt) (llm.Completion, error) {
	return f(ctx, p)
}
