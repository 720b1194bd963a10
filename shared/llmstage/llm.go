// Package llmstage is the llm stage's stage.Processor: redacted changeset
// → prompt → LLM → validated ReviewResult artifact. On the way it verifies
// the fetch stage's proof of redaction and guards every prompt (guard), keeps
// the environment's daily token budget (dailyGate), carries a rerun's
// unchanged files over instead of asking the model (carry.go), and records
// the version in the rerun ledger. Leases, retries and dead letters are the
// stage runtime's business, not its own.
package llmstage

import (
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

// DefaultParallelism bounds the chunks reviewed at once.
const DefaultParallelism = 4

// DefaultFinishReserve is the time kept before the deadline to finish an attempt.
const DefaultFinishReserve = 10 * time.Second

// maxSplitDepth bounds how often one chunk is halved after a truncated or
// over-long answer: 2^8 pieces is far past any real model's limit.
const maxSplitDepth = 8

// LLM is the llm stage: it plans the redacted changeset into chunks that
// fit the model, reviews them with bounded parallelism, stores each chunk's
// result as it finishes (so a retry or replay redoes only unfinished chunks),
// and merges them into one ReviewResult.
type LLM struct {
	Redacted *artifacts.Store // reads the redacted changeset, writes chunk results and the result
	Guard    TextRedactor
	LLM      llm.Provider
	// Model names the model; it is part of each chunk's cache key, so a
	// chunk reviewed by another model is not reused.
	Model string
	// Budget sizes chunks and states the limits; zero fields take the
	// model family's defaults.
	Budget  result.Budget
	Rollout result.Rollout
	// ModelRollout serves the candidate model, through CandidateLLM, to its
	// share of jobs (result.ModelRollout); the rest get LLM and Model. A
	// job's model is what its chunk keys, result meta, stats and metrics
	// name, so its findings' outcomes count for the model that found them.
	ModelRollout result.ModelRollout
	CandidateLLM llm.Provider
	// Candidate is the candidate model's prices and limits, as Terms are
	// the stable model's.
	Candidate ModelTerms
	// AllowPromptPatchDrift accepts an answer whose prompt_version differs
	// from the one sent only in its patch segment (rule RC-4's configured
	// drift; PROMPT_PATCH_DRIFT per environment).
	AllowPromptPatchDrift bool
	// Parallelism bounds concurrent model calls; 0 means DefaultParallelism.
	Parallelism int
	// Terms are the stable model's: its Prices estimate each review's cost
	// (ReviewMeta.EstimatedCostUSD; zero: none), and its TokensPerMinute,
	// when set, is the provider's token limit: no chunk is planned larger
	// than it, or the provider could never admit it.
	Terms   ModelTerms
	Metrics *obs.Metrics
	Log     *slog.Logger
	// Rules are the environment's default review rules (REVIEW_RULES);
	// the rules files the fetch stage read (domain.RulesArtifact) override
	// them for the files under their roots.
	Rules result.Rules
	// Daily counts the environment's model tokens per UTC day; with
	// DailyTokenBudget > 0, a review that starts with the day's budget
	// spent runs without the model (store.DailyTokens).
	Daily            DailyCounter
	DailyTokenBudget int64

	// FinishReserve is the time kept, before the invocation's deadline, to
	// store the result and record the attempt; chunks still in flight then
	// are stopped. 0 means DefaultFinishReserve.
	FinishReserve time.Duration

	// Jobs reads the previous version's job when the changeset carries
	// files over from it (carry.go); Ledger records each reviewed version.
	// Either nil: nothing carried over / nothing recorded.
	Jobs   job.Getter
	Ledger LedgerWriter
	// Decide decides what the stored review says before it is delivered
	// (package decide) and stores the decided review notify delivers; nil
	// decides with nothing withheld, compared or gated.
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
	// Split marks a chunk that was answered by reviewing smaller pieces; a
	// replay goes straight to them.
	Split         bool                   `json:"split,omitempty"`
	Truncated     []result.TruncatedFile `json:"truncated,omitempty"`
	PromptVersion string                 `json:"prompt_version"`
	Model         string                 `json:"model,omitempty"`
	RequestID     string                 `json:"request_id,omitempty"`
	FinishReason  string                 `json:"finish_reason,omitempty"`
	// ResponseFormat is the structured-output form the answer was asked in.
	ResponseFormat string    `json:"response_format,omitempty"`
	Usage          llm.Usage `json:"usage"`
	// Content is the model's raw answer (derived from redacted input only),
	// kept for debugging dropped findings.
	Content string `json:"content,omitempty"`
}

// run is one Process call's shared state.
type run struct {
	r       *LLM
	job     *job.Job
	cs      domain.Changeset
	proven  *redact.Proven // lines covered by a verified proof of redaction
	plan    result.Plan
	budget  result.Budget // the model's: its OutputFor bounds each call's max_tokens
	version string
	model   string       // the model this job is reviewed by
	llm     llm.Provider // its client

	mu        sync.Mutex
	results   []leaf
	truncated []result.TruncatedFile
	skipped   []result.SkippedFile // decided while reviewing (refusals, budget)
	calls     int
	reused    int
	usage     llm.Usage
	// usage is of every chunk in the result, reused ones included; fresh
	// of this attempt's own model calls (what was billed now, and the daily
	// counter's share).
	fresh llm.Usage
	diags map[string]int

	limited int             // 429s waited out
	waited  time.Duration   // time waited for rate limits
	forms   map[string]bool // structured-output forms the answers were asked in
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
	// Files the fetch stage found unchanged since the previous version are
	// not sent to the model: their findings are that version's. Files that
	// changed since are sent as that change only (their interdiff).
	carry, err := r.carried(ctx, cs, rules.Digest())
	if err != nil {
		return job.Result{}, err
	}
	shown := shownToModel(cs, carry)
	run := &run{r: r, job: j, cs: shown, proven: proven, version: version, model: model, llm: client, budget: budget,
		plan: budget.PlanWith(shown, version, rules), diags: map[string]int{}, forms: map[string]bool{}}
	if n := len(run.plan.Skipped); n > 0 {
		r.Log.WarnContext(ctx, "files not reviewed", "skipped_files", n, "prompt_version", version, "model", model)
	}
	withoutModel, err := r.modelGate(ctx, run, carry)
	if err != nil {
		return job.Result{}, err
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

// changeset reads the job's redacted changeset and verifies fetch's proof of
// redaction over its diffs: verified once here, they are not scanned again
// for every prompt (proven nil: prompts are scanned whole). An artifact that
// does not match its proof means redaction was bypassed: blocked.
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
		// Fetched before proofs or under other rules: prompts are scanned whole.
		return cs, nil, nil
	default:
		return cs, nil, failure.Errorf(failure.PolicyRejected, "pre-submit redaction guard: %w; LLM call blocked", err)
	}
}

// pickModel is the model and client for job id: the candidate's for a job
// in the model canary's share, else the stable ones. A candidate without a
// client (a wiring fault) serves nobody: the job names the model it got.
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

// terms are model's prices and limits: the candidate's for the model
// canary's model, else the stable model's.
func (r *LLM) terms(model string) ModelTerms {
	if model != r.Model && model == r.ModelRollout.Candidate {
		return r.Candidate
	}
	return r.Terms
}

// modelGate is why the run reviews without the model ("" when it may call
// it): the daily token budget is spent. A version whose every file is
// carried over needs no model, spent budget or not.
func (r *LLM) modelGate(ctx context.Context, run *run, carry carryOver) (string, error) {
	if len(run.plan.Chunks) > 0 || len(carry.files)+len(carry.interdiff) == 0 {
		return r.dailyGate(ctx)
	}
	return "", nil
}

// callModel reviews the planned chunks with the model, or marks them all
// skipped when withoutModel gives a reason, and counts the tokens spent
// against the daily budget. Model calls (and their rate-limit waits) stop
// FinishReserve before the invocation ends, so a stopped attempt still
// stores what finished and records itself.
func (run *run) callModel(ctx context.Context, withoutModel string, maxTokens int) error {
	r := run.r
	work := ctx
	if dl, ok := ctx.Deadline(); ok {
		reserve := r.FinishReserve
		if reserve <= 0 {
			reserve = DefaultFinishReserve
		}
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
	res       domain.ReviewResult
	meta      domain.ReviewMeta
	adjusted  result.Diagnostics // what merging adjusted
	codeOf    result.CodeOf
	skipped   []result.SkippedFile
	truncated []result.TruncatedFile
	chunks    int
	secrets   int
	hidden    int
}

// merge merges the run's chunk results, the findings carried over and the
// pipeline's own (committed secrets: certain, so stated whatever the model
// answered, or whether it was called at all), applies the review rules and
// describes the whole in the result's meta.
func (run *run) merge(ctx context.Context, cs domain.Changeset, carry carryOver, rules result.RuleSet, withoutModel string) merged {
	leaves := run.results
	sortLeaves(leaves)
	parts := make([]result.ChunkResult, len(leaves))
	for i, l := range leaves {
		parts[i] = l.res
	}
	if carry.from != nil {
		// Merge fingerprints them again: on the same diffs (carried
		// files), on the same code moved (interdiff files): the same ids.
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
	truncated := append(append([]result.TruncatedFile{}, run.plan.Truncated...), run.truncated...)
	out.skipped = append(append([]result.SkippedFile{}, run.plan.Skipped...), run.skipped...)
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
// ledger, then decides the review (Decide); it returns the artifact's key
// and the ledger's note for the job.
func (r *LLM) store(ctx context.Context, j *job.Job, cs domain.Changeset, out merged) (key, ledgerNote string, err error) {
	key = artifacts.Key(j.ID, "review.json")
	if err := r.Redacted.PutJSON(ctx, key, out.res); err != nil {
		return "", "", err
	}
	ledgerNote, err = r.record(ctx, ledgerEntry(j, cs, out.res, out.skipped, out.truncated, out.codeOf))
	if err != nil {
		return "", "", err
	}
	d := r.Decide
	if d == nil {
		d = &decide.Decider{Artifacts: r.Redacted}
	}
	if err := d.Decide(ctx, j, out.res, &cs); err != nil {
		return "", "", fmt.Errorf("deciding the review: %w", err)
	}
	return key, ledgerNote, nil
}

// jobResult is what the job records of the stage: the result's key, its
// counts and the history's one-line detail.
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

// adjusted is the job history's note of what merging the chunks adjusted
// (duplicates merged, model ids replaced), by reason code.
func adjusted(ds result.Diagnostics) string {
	if len(ds) == 0 {
		return ""
	}
	return "; adjusted: " + ds.Summary()
}

// outOfViewKey is the diagnostics count of findings dropped as out of view.
const outOfViewKey = result.KindFindingDropped + "/" + result.ReasonLineNotShown

// ruleSet is the environment's defaults, overridden per root by the rules
// files fetch read from the depot (as of before the change).
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

// dailyGate returns why the model must not be called ("" to call it): the
// environment's daily token budget is spent.
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

// countDaily adds this run's own model tokens to the day's counter. A
// failure is logged, not returned: the review is done, and redoing it to
// count it would spend the tokens twice.
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

// putDailyUsed emits the share of the daily budget used, in percent: the
// metric the DailyTokenBudgetAlarm watches (80 %).
func (r *LLM) putDailyUsed(spent int64) {
	if r.DailyTokenBudget <= 0 {
		return
	}
	r.Metrics.Put("DailyTokenBudgetUsedPercent", 100*float64(spent)/float64(r.DailyTokenBudget), obs.Percent, map[string]string{})
}

// dedupeTruncated keeps one entry per file: the smallest part reviewed.
func dedupeTruncated(ts []result.TruncatedFile) []result.TruncatedFile {
	idx := map[string]int{}
	var out []result.TruncatedFile
	for _, t := range ts {
		if i, ok := idx[t.File]; ok {
			if t.ReviewedBytes < out[i].ReviewedBytes {
				out[i].ReviewedBytes = t.ReviewedBytes
			}
			continue
		}
		idx[t.File] = len(out)
		out = append(out, t)
	}
	return out
}

// dropSkipped removes files that ended up skipped from the truncated list,
// so every file is in exactly one coverage class.
func dropSkipped(ts []result.TruncatedFile, skipped []result.SkippedFile) []result.TruncatedFile {
	gone := map[string]bool{}
	for _, s := range skipped {
		gone[s.File] = true
	}
	out := ts[:0]
	for _, t := range ts {
		if !gone[t.File] {
			out = append(out, t)
		}
	}
	return out
}

func (run *run) skip(files []string, reason string) {
	run.mu.Lock()
	defer run.mu.Unlock()
	for _, f := range files {
		run.skipped = append(run.skipped, result.SkippedFile{File: f, Reason: reason})
	}
}

// reviewAll reviews the plan's chunks, at most Parallelism at once. After the
// first failure no new chunk starts; chunks in flight finish and are stored,
// so the stage's retry redoes only what did not finish.
func (run *run) reviewAll(ctx context.Context, maxTokens int) error {
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
		// The plan's token estimate is an estimate: once what was actually
		// spent reaches the review's budget, the chunks left are not sent.
		if maxTokens > 0 && run.spent() >= maxTokens {
			<-sem
			run.skip(c.Files(), result.SkipOverBudget)
			continue
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

func (run *run) spent() int {
	run.mu.Lock()
	defer run.mu.Unlock()
	return run.usage.InputTokens + run.usage.OutputTokens
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
		run.addTruncated(stored.Truncated)
		return run.split(ctx, c, order, depth)
	case err == nil:
		run.finish(order, stored, false)
		return nil
	case failure.Classify(err) != failure.NotFound:
		return err
	}

	// The answer gets what the window leaves after this prompt (a small
	// self-hosted model's window holds both, or the server refuses).
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
			// A refusal is the model's answer for these files, not a
			// fault a retry fixes: they are stated as not reviewed, and
			// the pipeline's own findings are still reported.
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
		run.addTruncated([]result.TruncatedFile{*trunc})
	}
	for i, p := range parts {
		if err := run.reviewChunk(ctx, p, append(append([]int{}, order...), i), depth+1); err != nil {
			return err
		}
	}
	return nil
}

func (run *run) addTruncated(t []result.TruncatedFile) {
	run.mu.Lock()
	defer run.mu.Unlock()
	run.truncated = append(run.truncated, t...)
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
	}
	if !fresh {
		run.reused++
		for k, v := range a.Diagnostics {
			run.diags[kindOf(k)] += v
			if k == outOfViewKey {
				run.diags[k] += v
			}
		}
	}
}

// responseFormats names the structured-output forms the job's answers were
// asked in ("json_object_schema"; several, comma-separated, when the form
// was found part-way through), "" for providers without one.
func (run *run) responseFormats() string {
	run.mu.Lock()
	defer run.mu.Unlock()
	forms := slices.Sorted(maps.Keys(run.forms))
	return strings.Join(forms, ",")
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
func (run *run) emitMetrics(res *domain.ReviewResult, secrets int) {
	m := run.r.Metrics
	dims := map[string]string{"Stage": string(domain.StageLLM), "PromptVersion": run.version}
	run.mu.Lock()
	defer run.mu.Unlock()
	m.Put("ReviewCoercions", float64(run.diags[result.KindCoercion]), obs.Count, dims)
	m.Put("ReviewFindingsDropped", float64(run.diags[result.KindFindingDropped]), obs.Count, dims)
	m.Put("ReviewResponsesRejected", float64(run.diags[result.KindRejected]), obs.Count, dims)
	m.Put("ReviewModelCalls", float64(run.calls), obs.Count, dims)
	// Findings naming a line the model was not shown, per prompt version.
	m.Put("ReviewFindingsOutOfView", float64(run.diags[outOfViewKey]), obs.Count, dims)
	// Tokens billed by this attempt's model calls (reused chunks cost nothing
	// now): uncached input at the base price, cached input at a fraction.
	m.Put("ReviewInputTokens", float64(run.fresh.UncachedInputTokens()), obs.Count, dims)
	m.Put("ReviewCachedInputTokens", float64(run.fresh.CachedInputTokens), obs.Count, dims)
	m.Put("ReviewOutputTokens", float64(run.fresh.OutputTokens), obs.Count, dims)
	// Rate limits waited out inside the attempt instead of failing it.
	m.Put("ReviewRateLimited", float64(run.limited), obs.Count, dims)
	m.Put("ReviewRateLimitWait", float64(run.waited.Milliseconds()), obs.Milliseconds, dims)
	if res != nil {
		m.Put("ReviewValidFindings", float64(len(res.Findings)), obs.Count, dims)
		m.Put("ReviewSecretFindings", float64(secrets), obs.Count, dims)
	}
	// The canary SLO metrics again by model, so promote can judge a
	// candidate model (cmd/criticizer promote --model); the ones above keep
	// the dimensions the alarms watch.
	byModel := map[string]string{"Stage": string(domain.StageLLM), "PromptVersion": run.version, "Model": run.model}
	m.Put("ReviewFindingsDropped", float64(run.diags[result.KindFindingDropped]), obs.Count, byModel)
	if res != nil {
		m.Put("ReviewValidFindings", float64(len(res.Findings)), obs.Count, byModel)
	}
}

// refused reports whether err is the model declining to review the input
// (a refusal or a content filter).
func refused(err error) bool {
	d, ok := llm.Details(err)
	return ok && (d.Reason == llm.ReasonRefusal || d.Reason == llm.ReasonContentFilter)
}

// guard is the pre-submit check: every prompt is built from redacted text
// only, so a scan of what the proof does not cover (instructions, headers,
// the description, any line not in the proven diffs) must find nothing. A
// failure or a match means redaction was bypassed or broken, and the
// request is blocked.
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

// recordError keeps what the provider said about a failed chunk (reason,
// request id, sanitized refusal text) beside the chunk, for diagnosis.
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

// chunkDigest keys a chunk's stored result: the same prompt to the same model
// under the same prompt version is the same question.
func chunkDigest(version, model string, p result.Prompt) string {
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
