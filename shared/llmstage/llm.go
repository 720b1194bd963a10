// Package llmstage is the llm stage's stage.Processor: redacted changeset
// → prompt → LLM → validated ReviewResult artifact. It verifies fetch's
// proof of redaction and guards every prompt, keeps the daily token budget,
// carries a rerun's unchanged files over (carry.go) and records the version
// in the rerun ledger; leases, retries and dead letters are package stage's.
package llmstage

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/decide"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/finding"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/llm"
	"github.com/criticizer/criticizer/shared/obs"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/redact"
	"github.com/criticizer/criticizer/shared/result"
	"github.com/criticizer/criticizer/shared/sanitize"
)

// TextRedactor is the pre-submit guard: it verifies the fetch stage's proof
// of redaction and scans what the proof does not cover.
type TextRedactor interface {
	Verify(proof string, artifact any) error
	GuardPrompt(prompt string, proven *redact.Proven) ([]redact.Match, error)
}

const (
	DefaultParallelism   = 4                // chunks reviewed at once
	DefaultFinishReserve = 10 * time.Second // kept before the deadline to finish an attempt
	// maxSplitDepth bounds the halvings of one chunk after a truncated or
	// over-long answer: 2^8 pieces is far past any real model's limit.
	maxSplitDepth = 8
)

// LLM is the llm stage: it plans the changeset into chunks that fit the
// model, reviews them with bounded parallelism, stores each chunk's result
// as it finishes (a retry redoes only unfinished chunks) and merges them.
type LLM struct {
	Redacted *artifacts.Store // reads the redacted changeset, writes chunk results and the result
	Guard    TextRedactor
	LLM      llm.Provider
	Model    string // part of each chunk's cache key: another model's chunk is not reused
	// Budget sizes chunks; zero fields take the model family's defaults.
	Budget  result.Budget
	Rollout result.Rollout
	// ModelRollout serves the candidate model (through CandidateLLM, at
	// Candidate's terms) to its share of jobs; a job's chunk keys, meta,
	// stats and metrics name the model it got.
	ModelRollout result.ModelRollout
	CandidateLLM llm.Provider
	Candidate    ModelTerms
	// AllowPromptPatchDrift: rule RC-4's configured drift (PROMPT_PATCH_DRIFT).
	AllowPromptPatchDrift bool
	Parallelism           int // 0 means DefaultParallelism
	// Terms are the stable model's: Prices estimate each review's cost;
	// TokensPerMinute, when set, caps a chunk (the provider could never
	// admit a larger one).
	Terms   ModelTerms
	Metrics *obs.Metrics
	Log     *slog.Logger
	// Rules are REVIEW_RULES; the depot's rules files (domain.RulesArtifact)
	// override them under their roots.
	Rules result.Rules
	// Daily counts the environment's model tokens per UTC day; with
	// DailyTokenBudget > 0 a review starting with it spent runs without
	// the model.
	Daily            DailyCounter
	DailyTokenBudget int64
	// FinishReserve is kept before the deadline to store the result and
	// record the attempt; chunks still in flight then are stopped.
	FinishReserve time.Duration
	// Jobs reads the previous version's job (carry.go); Ledger records each
	// reviewed version. Nil: nothing carried over / recorded.
	Jobs   job.Getter
	Ledger LedgerWriter
	// Decide decides and stores the review notify delivers; nil decides
	// with nothing withheld, compared or gated.
	Decide *decide.Decider
}

// DailyCounter is the environment's shared per-day token counter.
type DailyCounter interface {
	Spent(ctx context.Context, day time.Time) (int64, error)
	Add(ctx context.Context, day time.Time, tokens int64) (int64, error)
}

// chunkArtifact is a finished chunk as stored, keyed by job and prompt digest.
type chunkArtifact struct {
	result.ChunkResult
	// Split: answered by reviewing smaller pieces; a replay goes straight to them.
	Split          bool      `json:"split,omitempty"`
	PromptVersion  string    `json:"prompt_version"`
	Model          string    `json:"model,omitempty"`
	RequestID      string    `json:"request_id,omitempty"`
	FinishReason   string    `json:"finish_reason,omitempty"`
	ResponseFormat string    `json:"response_format,omitempty"`
	Usage          llm.Usage `json:"usage"`
	// Content is the raw answer (from redacted input only), for debugging
	// dropped findings.
	Content string `json:"content,omitempty"`
}

// run is one Process call's shared state.
type run struct {
	r       *LLM
	job     *job.Job
	cs      domain.Changeset
	proven  *redact.Proven // lines covered by a verified proof of redaction
	plan    result.Plan
	budget  result.Budget // its OutputFor bounds each call's max_tokens
	version string
	model   string
	llm     llm.Provider

	mu        sync.Mutex
	results   []leaf
	truncated []domain.TruncatedFile
	skipped   []domain.SkippedFile // decided while reviewing (refusals, budget)
	calls     int
	reused    int
	// usage is of every chunk in the result, reused ones included; fresh
	// only of this attempt's own calls (what was billed now).
	usage, fresh llm.Usage
	diags        map[string]int
	limited      int             // 429s waited out
	waited       time.Duration   // time waited for rate limits
	forms        map[string]bool // structured-output forms asked in
}

type leaf struct {
	order []int // position in the plan, for a deterministic merge order
	res   result.ChunkResult
}

// Process reviews the redacted changeset and stores the validated result.
func (r *LLM) Process(ctx context.Context, j *job.Job) (job.Result, error) {
	cs, proven, err := r.changeset(ctx, j)
	if err != nil {
		return job.Result{}, err
	}
	version := r.Rollout.Pick(j.ID)
	model, client := r.pickModel(j.ID)
	rules, err := r.ruleSet(ctx, j)
	if err != nil {
		return job.Result{}, err
	}
	budget := r.budget(model)
	// Files unchanged since the previous version keep its findings; files
	// changed since are sent as that change only (their interdiff).
	carry, err := r.carried(ctx, cs, rules.Digest())
	if err != nil {
		return job.Result{}, err
	}
	shown := shownToModel(cs, carry)
	run := &run{r: r, job: j, cs: shown, proven: proven, version: version, model: model, llm: client, budget: budget,
		plan: budget.Plan(shown, version, rules), diags: map[string]int{}, forms: map[string]bool{}}
	if n := len(run.plan.Skipped); n > 0 {
		r.Log.WarnContext(ctx, "files not reviewed", "skipped_files", n, "prompt_version", version, "model", model)
	}
	// A version whose every file is carried over needs no model.
	withoutModel := ""
	if len(run.plan.Chunks) > 0 || len(carry.files)+len(carry.interdiff) == 0 {
		if withoutModel, err = r.dailyGate(ctx); err != nil {
			return job.Result{}, err
		}
	}
	if err := run.callModel(ctx, withoutModel, budget.MaxReviewTokens); err != nil {
		return job.Result{}, err
	}
	out := run.merge(ctx, cs, carry, rules, withoutModel)
	run.emitMetrics(&out.res, out.secrets)
	key, ledgerNote, err := r.store(ctx, j, cs, out)
	if err != nil {
		return job.Result{}, err
	}
	return out.jobResult(key, run, ledgerNote), nil
}

// changeset reads the redacted changeset and verifies fetch's proof over its
// diffs: verified once, they are not scanned again per prompt (proven nil:
// prompts are scanned whole). An artifact not matching its proof means
// redaction was bypassed: blocked.
func (r *LLM) changeset(ctx context.Context, j *job.Job) (domain.Changeset, *redact.Proven, error) {
	var cs domain.Changeset
	if j.Artifacts.Redacted == "" {
		return cs, nil, failure.Errorf(failure.InternalBug, "job reached the llm stage without a redacted changeset")
	}
	if err := r.Redacted.GetJSON(ctx, j.Artifacts.Redacted, &cs); err != nil {
		return cs, nil, err
	}
	switch err := r.Guard.Verify(j.Artifacts.RedactedProof, cs); {
	case err == nil:
		diffs := make([]string, 0, len(cs.Files))
		for _, f := range cs.Files {
			diffs = append(diffs, f.Diff)
			if f.Interdiff != "" {
				diffs = append(diffs, f.Interdiff) // sealed with the rest
			}
		}
		return cs, redact.NewProven(diffs...), nil
	case errors.Is(err, redact.ErrNoProof), errors.Is(err, redact.ErrStaleProof):
		return cs, nil, nil // fetched before proofs or under other rules
	default:
		return cs, nil, failure.Errorf(failure.PolicyRejected, "pre-submit redaction guard: %w; LLM call blocked", err)
	}
}

// pickModel is the model and client for job id. A candidate without a
// client (a wiring fault) serves nobody.
func (r *LLM) pickModel(id string) (string, llm.Provider) {
	if m := r.ModelRollout.Pick(id, r.Model); m != r.Model && r.CandidateLLM != nil {
		return m, r.CandidateLLM
	}
	return r.Model, r.LLM
}

// budget is model's budget, its context window no larger than a
// configured tokens-per-minute limit allows one call.
func (r *LLM) budget(model string) result.Budget {
	budget := r.Budget.For(model)
	if tpm := r.terms(model).TokensPerMinute; tpm > 0 && budget.ContextTokens > tpm {
		budget.ContextTokens = max(tpm, budget.OutputTokens+1024)
	}
	return budget
}

// terms are model's prices and limits (the candidate's or the stable model's).
func (r *LLM) terms(model string) ModelTerms {
	if model != r.Model && model == r.ModelRollout.Candidate {
		return r.Candidate
	}
	return r.Terms
}

// callModel reviews the planned chunks, or marks them skipped when
// withoutModel gives a reason, and counts the tokens on the daily budget.
// Calls stop FinishReserve before the invocation ends, so a stopped attempt
// still stores what finished.
func (run *run) callModel(ctx context.Context, withoutModel string, maxTokens int) error {
	r := run.r
	work := ctx
	if dl, ok := ctx.Deadline(); ok {
		reserve := cmp.Or(max(r.FinishReserve, 0), DefaultFinishReserve)
		var cancel context.CancelFunc
		work, cancel = context.WithDeadline(ctx, dl.Add(-reserve))
		defer cancel()
	}
	if withoutModel != "" {
		r.Log.WarnContext(ctx, "reviewing without the model", "reason", withoutModel)
		for _, c := range run.plan.Chunks {
			run.skip(c.Files(), result.SkipDailyBudget)
		}
	} else if err := run.reviewAll(work, maxTokens); err != nil {
		run.emitMetrics(nil, 0)
		return err
	}
	r.countDaily(ctx, run.fresh)
	return nil
}

// merged is a run's chunks merged into one result, and what the job and
// the rerun ledger record about it.
type merged struct {
	res                     domain.ReviewResult
	meta                    domain.ReviewMeta
	adjusted                result.Diagnostics // what merging adjusted
	codeOf                  result.CodeOf
	skipped                 []domain.SkippedFile
	truncated               []domain.TruncatedFile
	chunks, secrets, hidden int
}

// merge merges the chunk results, the findings carried over and the
// pipeline's own (committed secrets: stated whatever the model answered, or
// whether it was called), applies the review rules and fills the meta.
func (run *run) merge(ctx context.Context, cs domain.Changeset, carry carryOver, rules result.RuleSet, withoutModel string) merged {
	leaves := run.results
	slices.SortStableFunc(leaves, func(a, b leaf) int { return slices.Compare(a.order, b.order) })
	parts := make([]result.ChunkResult, len(leaves))
	for i, l := range leaves {
		parts[i] = l.res
	}
	if carry.from != nil {
		// Merge fingerprints them again: same diffs or same code moved, same ids.
		parts = append(parts, result.ChunkResult{Files: carry.paths(cs), Findings: carry.findings})
	}
	secrets := result.SecretFindings(cs)
	out := merged{codeOf: result.CodeOf(finding.CodeOf(&cs)), chunks: len(leaves), secrets: len(secrets)}
	out.res, out.adjusted = result.Merge(parts, run.version, out.codeOf, secrets...)
	out.adjusted.Log(ctx, run.r.Log)
	kept, filtered, hidden := rules.Filter(out.res.Findings)
	out.res.Findings, out.hidden = kept, len(hidden)
	var withheld []string
	for _, f := range append(filtered, hidden...) {
		withheld = append(withheld, finding.Fingerprint(f, out.codeOf(f.File)))
	}
	truncated := append(append([]domain.TruncatedFile{}, run.plan.Truncated...), run.truncated...)
	out.skipped = append(append([]domain.SkippedFile{}, run.plan.Skipped...), run.skipped...)
	out.truncated = dropSkipped(dedupeTruncated(truncated), out.skipped)
	applied, rejected := rules.Describe()
	out.meta = domain.ReviewMeta{
		PromptVersion: run.version, Model: run.model, Chunks: len(leaves), ModelCalls: run.calls, ReusedChunks: run.reused,
		FilesTotal: len(cs.Files), FilesReviewed: len(cs.Files) - len(out.skipped) - len(out.truncated),
		SkippedFiles: out.skipped, TruncatedFiles: out.truncated,
		DroppedFindings: run.diags[result.KindFindingDropped],
		InputTokens:     run.usage.InputTokens, OutputTokens: run.usage.OutputTokens,
		SecretFindings: len(secrets), OutOfView: run.diags[outOfViewKey],
		FilteredByRules: len(filtered), HiddenByCap: len(hidden), Withheld: withheld, RulesDigest: rules.Digest(),
		WithoutModel: withoutModel,
		Rules:        applied, RulesRejected: rejected, Gates: rules.Gates(kept), SuppressAfter: rules.SuppressAfter(kept, outcome.Kind),
		CachedInputTokens: run.usage.CachedInputTokens, CacheWriteInputTokens: run.usage.CacheWriteInputTokens,
		ResponseFormat: run.responseFormats(),
	}
	if carry.from != nil {
		out.meta.CarriedOver, out.meta.Interdiffs, out.meta.CarriedFrom = len(carry.files), len(carry.interdiff), carry.from.Version
	}
	// At the prices of the model the job used; none configured: no estimate.
	out.meta.EstimatedCostUSD, _ = run.r.terms(run.model).Prices.Cost(run.usage)
	out.res.Meta = out.meta.Map()
	return out
}

// store writes the result artifact, records the version in the rerun
// ledger and decides the review; it returns the key and the ledger's note.
func (r *LLM) store(ctx context.Context, j *job.Job, cs domain.Changeset, out merged) (key, ledgerNote string, err error) {
	key = artifacts.Key(j.ID, "review.json")
	if err := r.Redacted.PutJSON(ctx, key, out.res); err != nil {
		return "", "", err
	}
	ledgerNote, err = r.record(ctx, ledgerEntry(j, cs, out.res, out.skipped, out.truncated, out.codeOf))
	if err != nil {
		return "", "", err
	}
	d := cmp.Or(r.Decide, &decide.Decider{Artifacts: r.Redacted})
	if err := d.Decide(ctx, j, out.res, &cs); err != nil {
		return "", "", fmt.Errorf("deciding the review: %w", err)
	}
	return key, ledgerNote, nil
}

// jobResult is what the job records of the stage.
func (out merged) jobResult(key string, run *run, ledgerNote string) job.Result {
	n, version, meta := len(out.res.Findings), run.version, out.meta
	coverage := meta.Coverage()
	return job.Result{Artifacts: job.Artifacts{Result: key}, FindingCount: &n,
		Review: &job.ReviewStats{PromptVersion: version, Model: run.model, InputTokens: run.usage.InputTokens, OutputTokens: run.usage.OutputTokens,
			ModelCalls: run.calls, Chunks: out.chunks, SkippedFiles: len(out.skipped), TruncatedFiles: len(out.truncated),
			FilesTotal: meta.FilesTotal, FilesReviewed: meta.FilesReviewed, Coverage: coverage, WithoutModel: meta.WithoutModel,
			CachedInputTokens: run.usage.CachedInputTokens, CacheWriteInputTokens: run.usage.CacheWriteInputTokens,
			RateLimitedCalls: run.limited, RateLimitWaitMS: run.waited.Milliseconds(), ResponseFormat: meta.ResponseFormat},
		Detail: fmt.Sprintf("findings %d (secrets %d, hidden by cap %d), %s, chunks %d, model calls %d, prompt %s, model %s",
			n, out.secrets, out.hidden, coverage, out.chunks, run.calls, version, run.model) + adjusted(out.adjusted) + ledgerNote}
}

// adjusted is the history's note of what merging adjusted, by reason code.
func adjusted(ds result.Diagnostics) string {
	if len(ds) == 0 {
		return ""
	}
	return "; adjusted: " + ds.Summary()
}

// outOfViewKey is the diagnostics count of findings dropped as out of view.
const outOfViewKey = result.KindFindingDropped + "/" + result.ReasonLineNotShown

// ruleSet is the environment's defaults, overridden per root by the depot's
// rules files fetch read (as of before the change).
func (r *LLM) ruleSet(ctx context.Context, j *job.Job) (result.RuleSet, error) {
	var files []domain.RulesFile
	switch err := r.Redacted.GetJSON(ctx, artifacts.Key(j.ID, domain.RulesArtifact), &files); {
	case err == nil:
	case failure.Classify(err) == failure.NotFound:
	default:
		return result.RuleSet{}, err
	}
	rs := result.ResolveRules(files)
	rs.Defaults = r.Rules
	return rs, nil
}

// dailyGate says why the model must not be called ("": call it).
func (r *LLM) dailyGate(ctx context.Context) (string, error) {
	if r.Daily == nil || r.DailyTokenBudget <= 0 {
		return "", nil
	}
	spent, err := r.Daily.Spent(ctx, job.Now())
	if err != nil {
		return "", err
	}
	r.putDailyUsed(spent)
	if spent >= r.DailyTokenBudget {
		return fmt.Sprintf("the environment's daily budget of %d model tokens is spent (%d used today, UTC)", r.DailyTokenBudget, spent), nil
	}
	return "", nil
}

// countDaily adds this run's own tokens to the day's counter. A failure is
// only logged: redoing the review to count it would spend them twice.
func (r *LLM) countDaily(ctx context.Context, u llm.Usage) {
	n := int64(u.InputTokens + u.OutputTokens)
	if r.Daily == nil || n == 0 {
		return
	}
	total, err := r.Daily.Add(ctx, job.Now(), n)
	if err != nil {
		r.Log.WarnContext(ctx, "could not count tokens on the daily budget", "tokens", n, "error", err.Error())
		return
	}
	r.putDailyUsed(total)
}

// putDailyUsed emits the percentage DailyTokenBudgetAlarm watches (80 %).
func (r *LLM) putDailyUsed(spent int64) {
	if r.DailyTokenBudget <= 0 {
		return
	}
	r.Metrics.Put("DailyTokenBudgetUsedPercent", 100*float64(spent)/float64(r.DailyTokenBudget), obs.Percent, map[string]string{})
}

// dedupeTruncated keeps one entry per file: the smallest part reviewed.
func dedupeTruncated(ts []domain.TruncatedFile) []domain.TruncatedFile {
	idx := map[string]int{}
	var out []domain.TruncatedFile
	for _, t := range ts {
		if i, ok := idx[t.File]; ok {
			out[i].ReviewedBytes = min(out[i].ReviewedBytes, t.ReviewedBytes)
			continue
		}
		idx[t.File] = len(out)
		out = append(out, t)
	}
	return out
}

// dropSkipped removes files that ended up skipped from the truncated list,
// so every file is in exactly one coverage class.
func dropSkipped(ts []domain.TruncatedFile, skipped []domain.SkippedFile) []domain.TruncatedFile {
	gone := map[string]bool{}
	for _, s := range skipped {
		gone[s.File] = true
	}
	return slices.DeleteFunc(ts, func(t domain.TruncatedFile) bool { return gone[t.File] })
}

func (run *run) skip(files []string, reason string) {
	run.mu.Lock()
	defer run.mu.Unlock()
	for _, f := range files {
		run.skipped = append(run.skipped, domain.SkippedFile{File: f, Reason: reason})
	}
}

// reviewAll reviews the chunks, at most Parallelism at once. After the first
// failure no chunk starts; those in flight finish and are stored.
func (run *run) reviewAll(ctx context.Context, maxTokens int) error {
	par := cmp.Or(max(run.r.Parallelism, 0), DefaultParallelism)
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	// failed ends at the first chunk failure, with that error as its cause.
	failed, fail := context.WithCancelCause(context.Background())
	defer fail(nil)
	for i, c := range run.plan.Chunks {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		case <-failed.Done():
		}
		if ctx.Err() != nil || failed.Err() != nil {
			break
		}
		// Once what was actually spent reaches the budget, the rest wait.
		if maxTokens > 0 && run.spent() >= maxTokens {
			<-sem
			run.skip(c.Files(), result.SkipOverBudget)
			continue
		}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := run.reviewChunk(ctx, c, []int{i}, 0); err != nil {
				fail(err)
			}
		})
	}
	wg.Wait()
	if err := context.Cause(failed); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("review stopped: %w", context.Cause(ctx))
	}
	return nil
}

func (run *run) spent() int {
	run.mu.Lock()
	defer run.mu.Unlock()
	return run.usage.InputTokens + run.usage.OutputTokens
}

// reviewChunk reviews one chunk, or reuses its stored result. A truncated or
// over-long answer splits it; the split is stored, so a replay never asks again.
func (run *run) reviewChunk(ctx context.Context, c result.Chunk, order []int, depth int) error {
	r := run.r
	prompt := run.plan.Prompt(run.cs, c, run.version)
	if err := r.guard(prompt, run.proven); err != nil {
		return err
	}
	key := artifacts.Key(run.job.ID, "chunks/"+chunkDigest(run.version, run.model, prompt)+".json")
	var stored chunkArtifact
	switch err := r.Redacted.GetJSON(ctx, key, &stored); {
	case err == nil && stored.Split:
		return run.split(ctx, c, order, depth)
	case err == nil:
		run.finish(order, stored, false)
		return nil
	case failure.Classify(err) != failure.NotFound:
		return err
	}

	// The answer gets what the window leaves after this prompt.
	lp := llm.Prompt(prompt)
	lp.MaxTokens = max(lp.MaxTokens, run.budget.OutputFor(prompt))
	comp, err := run.llm.Complete(ctx, lp)
	run.mu.Lock()
	run.calls++
	run.limited += comp.RateLimited
	run.waited += comp.Waited
	run.mu.Unlock()
	if err != nil {
		if llm.NeedsSmallerInput(err) && depth < maxSplitDepth {
			if _, _, ok := c.Split(); ok {
				d, _ := llm.Details(err)
				r.Log.WarnContext(ctx, "chunk answer did not fit; splitting", "reason", d.Reason, "files", len(c.Files()),
					"bytes", c.Bytes(), "request_id", d.RequestID, "depth", depth)
				if err := r.Redacted.PutJSON(ctx, key, chunkArtifact{Split: true, PromptVersion: run.version, Model: run.model,
					RequestID: d.RequestID, ChunkResult: result.ChunkResult{Files: c.Files()}}); err != nil {
					return err
				}
				return run.split(ctx, c, order, depth)
			}
		}
		r.recordError(ctx, key, err)
		if refused(err) {
			// The model's answer, not a fault: the files are not reviewed.
			d, _ := llm.Details(err)
			r.Log.WarnContext(ctx, "model refused a chunk; its files are reported as not reviewed", "reason", d.Reason,
				"files", len(c.Files()), "request_id", d.RequestID)
			run.skip(c.Files(), result.SkipModelRefused)
			return nil
		}
		return err
	}
	res, diags, err := result.Parse(comp.Content, c.Files(), result.Options{PromptVersion: run.version, AllowPromptPatchDrift: r.AllowPromptPatchDrift})
	if err == nil {
		// Only lines the model was shown: anything else it cannot have seen.
		var more result.Diagnostics
		res.Findings, more = result.KeepShown(res.Findings, c.Shown())
		diags = append(diags, more...)
	}
	diags.Log(ctx, r.Log)
	run.countDiags(diags)
	if err != nil {
		return err
	}
	art := chunkArtifact{
		ChunkResult:   result.ChunkResult{Files: c.Files(), Summary: res.Summary, Findings: res.Findings, Diagnostics: diags.Counts()},
		PromptVersion: run.version, Model: run.model, RequestID: comp.RequestID, FinishReason: comp.FinishReason,
		ResponseFormat: comp.ResponseFormat, Usage: comp.Usage, Content: string(comp.Content),
	}
	if err := r.Redacted.PutJSON(ctx, key, art); err != nil {
		return err
	}
	run.finish(order, art, true)
	return nil
}

// split reviews c's pieces in turn (they are children of one worker's chunk).
func (run *run) split(ctx context.Context, c result.Chunk, order []int, depth int) error {
	parts, trunc, _ := c.Split()
	if trunc != nil {
		run.mu.Lock()
		run.truncated = append(run.truncated, *trunc)
		run.mu.Unlock()
	}
	for i, p := range parts {
		if err := run.reviewChunk(ctx, p, append(append([]int{}, order...), i), depth+1); err != nil {
			return err
		}
	}
	return nil
}

func (run *run) finish(order []int, a chunkArtifact, fresh bool) {
	run.mu.Lock()
	defer run.mu.Unlock()
	run.results = append(run.results, leaf{order: order, res: a.ChunkResult})
	run.usage = run.usage.Add(a.Usage)
	if a.ResponseFormat != "" {
		run.forms[a.ResponseFormat] = true
	}
	if fresh {
		run.fresh = run.fresh.Add(a.Usage)
	} else {
		run.reused++
		for k, v := range a.Diagnostics {
			kind, _, _ := strings.Cut(k, "/")
			run.diags[kind] += v
			if k == outOfViewKey {
				run.diags[k] += v
			}
		}
	}
}

// responseFormats names the structured-output forms asked in, comma-separated.
func (run *run) responseFormats() string {
	run.mu.Lock()
	defer run.mu.Unlock()
	return strings.Join(slices.Sorted(maps.Keys(run.forms)), ",")
}

func (run *run) countDiags(ds result.Diagnostics) {
	run.mu.Lock()
	defer run.mu.Unlock()
	for _, d := range ds {
		run.diags[d.Kind]++
		if d.Reason == result.ReasonLineNotShown {
			run.diags[outOfViewKey]++
		}
	}
}

// emitMetrics writes the per-prompt-version metrics the canary and rollback
// alarms watch. res is nil when the job failed.
func (run *run) emitMetrics(res *domain.ReviewResult, secrets int) {
	m := run.r.Metrics
	dims := map[string]string{"Stage": string(domain.StageLLM), "PromptVersion": run.version}
	run.mu.Lock()
	defer run.mu.Unlock()
	m.Put("ReviewCoercions", float64(run.diags[result.KindCoercion]), obs.Count, dims)
	m.Put("ReviewFindingsDropped", float64(run.diags[result.KindFindingDropped]), obs.Count, dims)
	m.Put("ReviewResponsesRejected", float64(run.diags[result.KindRejected]), obs.Count, dims)
	m.Put("ReviewModelCalls", float64(run.calls), obs.Count, dims)
	m.Put("ReviewFindingsOutOfView", float64(run.diags[outOfViewKey]), obs.Count, dims)
	// Billed by this attempt's calls: uncached input at the base price, cached at a fraction.
	m.Put("ReviewInputTokens", float64(run.fresh.UncachedInputTokens()), obs.Count, dims)
	m.Put("ReviewCachedInputTokens", float64(run.fresh.CachedInputTokens), obs.Count, dims)
	m.Put("ReviewOutputTokens", float64(run.fresh.OutputTokens), obs.Count, dims)
	m.Put("ReviewRateLimited", float64(run.limited), obs.Count, dims)
	m.Put("ReviewRateLimitWait", float64(run.waited.Milliseconds()), obs.Milliseconds, dims)
	if res != nil {
		m.Put("ReviewValidFindings", float64(len(res.Findings)), obs.Count, dims)
		m.Put("ReviewSecretFindings", float64(secrets), obs.Count, dims)
	}
	// The canary SLO metrics again by model, for promote --model.
	byModel := map[string]string{"Stage": string(domain.StageLLM), "PromptVersion": run.version, "Model": run.model}
	m.Put("ReviewFindingsDropped", float64(run.diags[result.KindFindingDropped]), obs.Count, byModel)
	if res != nil {
		m.Put("ReviewValidFindings", float64(len(res.Findings)), obs.Count, byModel)
	}
}

// refused: the model declined the input (a refusal or a content filter).
func refused(err error) bool {
	d, ok := llm.Details(err)
	return ok && (d.Reason == llm.ReasonRefusal || d.Reason == llm.ReasonContentFilter)
}

// guard is the pre-submit check: a scan of what the proof does not cover
// (instructions, headers, description, lines outside the proven diffs) must
// find nothing; a failure or a match blocks the request.
func (r *LLM) guard(p result.Prompt, proven *redact.Proven) error {
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

// recordError stores what the provider said about a failed chunk beside it.
func (r *LLM) recordError(ctx context.Context, key string, err error) {
	d, ok := llm.Details(err)
	if !ok {
		return
	}
	if perr := r.Redacted.PutJSON(ctx, key[:len(key)-len(".json")]+".error.json", map[string]any{
		// Provider text is untrusted: it passes the sanitizer like any stored error.
		"class": failure.Classify(err), "reason": d.Reason, "status": d.Status, "code": sanitize.Text(d.Code), "type": sanitize.Text(d.Type),
		"request_id": sanitize.Text(d.RequestID), "refusal": sanitize.Text(d.Refusal), "detail": sanitize.Text(d.Detail),
		"server_reason": sanitize.Text(d.ServerReason),
	}); perr != nil && !errors.Is(perr, context.Canceled) {
		r.Log.WarnContext(ctx, "could not store chunk error diagnostics", "error", perr.Error())
	}
}

// chunkDigest keys a chunk's stored result: same version, model and prompt.
func chunkDigest(version, model string, p result.Prompt) string {
	h := sha256.New()
	for _, s := range []string{version, model, p.System, p.User} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
