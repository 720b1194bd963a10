package llmstage_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	llmstandin "github.com/criticizer/criticizer/internal/standin/llm"
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

const apiKey = "sk-pipeline-fixture" // a fixture, not a credential

var guardOnce = sync.OnceValues(func() (*redact.Redactor, error) { return redact.New(redact.Policy{}) })

type harness struct {
	s3      *artifacts.MemoryBucket
	standin *llmstandin.Server
	stage   *llmstage.LLM
	metrics *bytes.Buffer
}

func newHarness(t testing.TB, mut func(*llmstage.LLM)) *harness {
	t.Helper()
	srv := llmstandin.NewServer(llmstandin.Options{APIKey: apiKey})
	url, err := srv.Start("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	client := standinClient(t, url, "gpt-4o")
	guard, err := guardOnce()
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{s3: artifacts.NewMemoryBucket(), standin: srv, metrics: &bytes.Buffer{}}
	h.stage = &llmstage.LLM{Redacted: artifacts.New(h.s3, "redacted"), Guard: guard, LLM: client, Model: "gpt-4o",
		Metrics: obs.NewMetrics(h.metrics, "test"), Log: slog.New(slog.DiscardHandler)}
	if mut != nil {
		mut(h.stage)
	}
	return h
}

// standinClient is an OpenAI client of model at the LLM stand-in at url.
func standinClient(t testing.TB, url, model string) *llm.Client {
	t.Helper()
	c, err := llm.NewOpenAI(llm.Config{Endpoint: url, Model: model, Timeout: 10 * time.Second,
		Schema: result.SchemaJSON(), Logger: slog.New(slog.DiscardHandler)}, apiKey)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// job stores cs as the job's redacted changeset.
func (h *harness) job(t testing.TB, id string, cs domain.Changeset) *job.Job {
	t.Helper()
	key := artifacts.Key(id, "redacted.json")
	if err := h.stage.Redacted.PutJSON(context.Background(), key, cs); err != nil {
		t.Fatal(err)
	}
	return &job.Job{ID: id, Changelist: cs.Changelist, Artifacts: job.Artifacts{Redacted: key}}
}

func (h *harness) result(t testing.TB, res job.Result) domain.ReviewResult {
	t.Helper()
	var out domain.ReviewResult
	if err := h.stage.Redacted.GetJSON(context.Background(), res.Artifacts.Result, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// bigChangeset has n files; every 50th adds a strcpy (one stand-in finding),
// every 97th is binary (no diff).
func bigChangeset(n int) domain.Changeset {
	cs := domain.Changeset{Changelist: 5000, Status: "submitted", Description: "Large refactor", User: "alice"}
	for i := 0; i < n; i++ {
		path := fmt.Sprintf("//depot/main/mod%03d/file%04d.c", i/100, i)
		f := domain.FileChange{DepotPath: path, Action: "edit", Type: "text", Rev: 2}
		switch {
		case i%97 == 96:
			f.Type, f.Action = "binary", "add"
		case i%50 == 0:
			f.Diff = fmt.Sprintf("@@ -1,2 +1,3 @@\n int f%d(char *d, const char *s) {\n+    strcpy(d, s);\n }\n", i)
		default:
			f.Diff = fmt.Sprintf("@@ -1,2 +1,3 @@\n int f%d(void) {\n+    return %d;\n }\n", i, i)
		}
		cs.Files = append(cs.Files, f)
	}
	return cs
}

// reviewedFiles are the files each model request was asked to review,
// read from the prompt's changed-files list as the stand-in saw it.
func reviewedFiles(t testing.TB, reqs []llmstandin.Request) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, r := range reqs {
		user := r.Messages[len(r.Messages)-1].Content
		_, rest, ok := strings.Cut(user, result.ChangedFilesMarker+"\n")
		if !ok {
			t.Fatalf("request without changed files")
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

func TestReviewLargeChangelistInChunks(t *testing.T) {
	h := newHarness(t, func(r *llmstage.LLM) { r.Budget = result.Budget{MaxFiles: 4900} })
	cs := bigChangeset(5000)
	res, err := h.stage.Process(context.Background(), h.job(t, "job-5000", cs))
	if err != nil {
		t.Fatal(err)
	}
	reqs := h.standin.Requests()
	if len(reqs) < 10 {
		t.Fatalf("model calls = %d, want the changelist split into many chunks", len(reqs))
	}
	out := h.result(t, res)
	meta := domain.ReadReviewMeta(out.Meta)
	if meta.ModelCalls != len(reqs) || meta.Chunks != len(reqs) || res.Review == nil || res.Review.ModelCalls != len(reqs) {
		t.Errorf("meta %+v / job stats %+v, want %d calls", meta, res.Review, len(reqs))
	}
	// Every file is reviewed exactly once or named as skipped with a reason.
	seen := reviewedFiles(t, reqs)
	skipped := map[string]string{}
	for _, s := range meta.SkippedFiles {
		skipped[s.File] = s.Reason
	}
	for i, f := range cs.Files {
		n, why := seen[f.DepotPath], skipped[f.DepotPath]
		switch {
		case f.Diff == "" && why != result.SkipNoTextualDiff && why != result.SkipBinary && why != result.SkipDeleted:
			t.Errorf("binary %s: skipped %q", f.DepotPath, why)
		case f.Diff != "" && i >= 4900+countEmpty(cs.Files[:i]) && why != result.SkipOverFileLimit:
			t.Errorf("%s beyond the file limit: reviewed %d, skipped %q", f.DepotPath, n, why)
		case why == "" && n != 1:
			t.Errorf("%s reviewed %d times and not named as skipped", f.DepotPath, n)
		case why != "" && n != 0:
			t.Errorf("%s both reviewed and skipped (%s)", f.DepotPath, why)
		}
	}
	if meta.FilesReviewed+len(meta.TruncatedFiles)+len(meta.SkippedFiles) != len(cs.Files) || meta.FilesTotal != len(cs.Files) {
		t.Errorf("reviewed %d + partly %d + skipped %d != %d files", meta.FilesReviewed, len(meta.TruncatedFiles), len(meta.SkippedFiles), len(cs.Files))
	}
	// One strcpy finding per 50 files, within the file limit, with stable ids.
	want := 0
	for i, f := range cs.Files {
		if strings.Contains(f.Diff, "strcpy") && skipped[cs.Files[i].DepotPath] == "" {
			want++
		}
	}
	if len(out.Findings) != want || *res.FindingCount != want {
		t.Errorf("findings = %d, want %d", len(out.Findings), want)
	}
	ids := map[string]bool{}
	for _, f := range out.Findings {
		if !strings.HasPrefix(f.ID, "F-") || ids[f.ID] {
			t.Errorf("finding id %q not stable or not unique", f.ID)
		}
		ids[f.ID] = true
	}
	// Replacing the model's ids is an adjustment the job's history names.
	if note := fmt.Sprintf("adjusted: coercion_applied/finding_id_replaced %d", want); !strings.Contains(res.Detail, note) {
		t.Errorf("history detail %q, want %q", res.Detail, note)
	}
	if res.Review.InputTokens == 0 || res.Review.OutputTokens == 0 || res.Review.PromptVersion != result.StablePromptVersion {
		t.Errorf("job stats = %+v", res.Review)
	}
}

func countEmpty(fs []domain.FileChange) int {
	n := 0
	for _, f := range fs {
		if f.Diff == "" {
			n++
		}
	}
	return n
}

// chunked is a changelist of n files that the stage reviews 100 per chunk.
func chunked(n int) domain.Changeset { return bigChangeset(n) }

func TestReviewRetriesOnlyTheFailedChunk(t *testing.T) {
	h := newHarness(t, nil)
	cs := chunked(300) // three chunks of 100 files (binaries skipped)
	last := cs.Files[len(cs.Files)-1].DepotPath
	h.standin.QueueFault(llmstandin.Fault{Status: 500, Match: last,
		Body: json.RawMessage(`{"error":{"code":"internal_error","type":"server_error","message":"boom"}}`)})
	job := h.job(t, "job-retry", cs)
	_, err := h.stage.Process(context.Background(), job)
	if failure.Classify(err) != failure.Upstream5xx {
		t.Fatalf("first attempt: %v, want UPSTREAM_5XX", err)
	}
	first := len(h.standin.Requests())
	if first != 3 {
		t.Fatalf("first attempt made %d calls, want 3", first)
	}
	res, err := h.stage.Process(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	reqs := h.standin.Requests()[first:]
	if len(reqs) != 1 || !strings.Contains(reqs[0].Messages[1].Content, last) {
		t.Fatalf("retry made %d calls, want only the failed chunk", len(reqs))
	}
	meta := domain.ReadReviewMeta(h.result(t, res).Meta)
	if meta.Chunks != 3 || meta.ReusedChunks != 2 || meta.ModelCalls != 1 {
		t.Errorf("meta = %+v", meta)
	}
}

func TestReviewReplayCallsModelOnlyForUnfinishedChunks(t *testing.T) {
	h := newHarness(t, func(r *llmstage.LLM) { r.Parallelism = 1 })
	cs := chunked(500) // five chunks, reviewed one at a time
	third := cs.Files[250].DepotPath
	h.standin.QueueFault(llmstandin.Fault{Status: 429, Match: third})
	job := h.job(t, "job-replay", cs)
	if _, err := h.stage.Process(context.Background(), job); failure.Classify(err) != failure.RateLimited {
		t.Fatalf("first run: %v", err)
	}
	if n := len(h.standin.Requests()); n != 3 {
		t.Fatalf("first run made %d calls, want 3 (two done, the third rate limited, none started after)", n)
	}
	res, err := h.stage.Process(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(h.standin.Requests()); n != 6 {
		t.Fatalf("after replay %d calls, want 6: only chunks 3-5 again", n)
	}
	want := h.result(t, res)
	// A replay of a finished job asks the model nothing and gives the same result.
	res2, err := h.stage.Process(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(h.standin.Requests()); n != 6 {
		t.Errorf("replay of a finished job made %d new calls", n-6)
	}
	got := h.result(t, res2)
	if fmt.Sprint(got.Findings) != fmt.Sprint(want.Findings) || got.Summary != want.Summary {
		t.Errorf("replay changed the result")
	}
}

func TestReviewTruncatedAnswerSplitsTheChunk(t *testing.T) {
	h := newHarness(t, nil)
	cs := chunked(40) // one chunk
	h.standin.QueueFault(llmstandin.Fault{FinishReason: "length"})
	job := h.job(t, "job-trunc", cs)
	res, err := h.stage.Process(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(h.standin.Requests()); n != 3 {
		t.Fatalf("calls = %d, want 3 (truncated, then two halves)", n)
	}
	out := h.result(t, res)
	meta := domain.ReadReviewMeta(out.Meta)
	if meta.Chunks != 2 || len(out.Findings) != 1 {
		t.Errorf("meta %+v findings %d", meta, len(out.Findings))
	}
	if _, err := h.stage.Process(context.Background(), job); err != nil || len(h.standin.Requests()) != 3 {
		t.Errorf("replay after a split asked the model again (%d calls, %v)", len(h.standin.Requests()), err)
	}
}

func TestReviewSingleFileTruncationIsReported(t *testing.T) {
	h := newHarness(t, nil)
	var diff strings.Builder
	diff.WriteString("@@ -1,1 +1,400 @@\n")
	for i := 0; i < 400; i++ {
		fmt.Fprintf(&diff, "+int v%d = %d;\n", i, i)
	}
	cs := domain.Changeset{Changelist: 7, Files: []domain.FileChange{{DepotPath: "//depot/big.c", Action: "add", Type: "text", Diff: diff.String()}}}
	h.standin.QueueFault(llmstandin.Fault{FinishReason: "length"})
	res, err := h.stage.Process(context.Background(), h.job(t, "job-one", cs))
	if err != nil {
		t.Fatal(err)
	}
	meta := domain.ReadReviewMeta(h.result(t, res).Meta)
	if len(meta.TruncatedFiles) != 1 || meta.TruncatedFiles[0].File != "//depot/big.c" ||
		meta.TruncatedFiles[0].ReviewedBytes >= meta.TruncatedFiles[0].OriginalBytes {
		t.Errorf("truncated = %+v", meta.TruncatedFiles)
	}
}

// TestReviewRefusalIsStatedAsNotReviewed: a refusal is the model's answer,
// not a fault a retry fixes: the review completes, the refused files are
// named as not reviewed (so "no findings" is not a clean bill), and the
// refusal text is kept beside the chunk for diagnosis.
func TestReviewRefusalIsStatedAsNotReviewed(t *testing.T) {
	h := newHarness(t, nil)
	h.standin.QueueFault(llmstandin.Fault{Refusal: "I cannot review this changelist."})
	cs := chunked(3)
	res, err := h.stage.Process(context.Background(), h.job(t, "job-refuse", cs))
	if err != nil {
		t.Fatal(err)
	}
	meta := domain.ReadReviewMeta(h.result(t, res).Meta)
	if meta.Complete() || len(meta.SkippedFiles) != len(cs.Files) || meta.SkippedFiles[0].Reason != result.SkipModelRefused {
		t.Errorf("meta = %+v", meta)
	}
	if !strings.Contains(res.Review.Coverage, "reviewed 0 of 3 files; skipped 3: 3 model refused") {
		t.Errorf("coverage = %q", res.Review.Coverage)
	}
	keys := h.s3.Keys(".error.json")
	if len(keys) != 1 {
		t.Fatalf("error diagnostics = %v", keys)
	}
	if b, _ := h.s3.Get(keys[0]); !strings.Contains(string(b), `"refusal":"I cannot review this changelist."`) || !strings.Contains(string(b), "req_standin_1") {
		t.Errorf("diagnostics = %s", b)
	}
}

// TestPromptRollout routes a configured share of jobs to the candidate
// prompt version, deterministically by job id, and checks the per-version
// metrics.
func TestPromptRollout(t *testing.T) {
	h := newHarness(t, func(r *llmstage.LLM) {
		r.Rollout = result.Rollout{Candidate: result.ChunkAwarePromptVersion, Percent: 30}
	})
	cs := chunked(3) // one strcpy finding
	versions := map[string]int{}
	for i := 0; i < 60; i++ {
		id := fmt.Sprintf("job-%02d", i)
		res, err := h.stage.Process(context.Background(), h.job(t, id, cs))
		if err != nil {
			t.Fatal(err)
		}
		want := result.StablePromptVersion
		if result.Bucket(id) < 30 {
			want = result.ChunkAwarePromptVersion
		}
		out := h.result(t, res)
		if res.Review.PromptVersion != want || out.PromptVersion != want {
			t.Fatalf("%s: version %s/%s, want %s", id, res.Review.PromptVersion, out.PromptVersion, want)
		}
		versions[want]++
	}
	if versions[result.ChunkAwarePromptVersion] == 0 || versions[result.StablePromptVersion] == 0 {
		t.Fatalf("versions = %v, want both served", versions)
	}
	// Every request said the version it was built with.
	for _, r := range h.standin.Requests() {
		if !strings.Contains(r.Messages[1].Content, "prompt_version: ") {
			t.Fatal("request without prompt_version")
		}
	}
	// ReviewValidFindings: one record per job, per version (and one more
	// by model, which the model canary reads).
	jobs, findings := map[string]int{}, map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(h.metrics.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if _, byModel := rec["Model"]; byModel {
			continue
		}
		if v, ok := rec["ReviewValidFindings"].(float64); ok {
			pv := rec["PromptVersion"].(string)
			jobs[pv]++
			findings[pv] += v
		}
	}
	for v, n := range versions {
		if jobs[v] != n || findings[v] != float64(n) {
			t.Errorf("version %s: %d jobs, metrics show %d jobs with %v findings", v, n, jobs[v], findings[v])
		}
	}
	// Rollback is configuration: percent 0 serves only the stable version.
	if v := (result.Rollout{Candidate: result.ChunkAwarePromptVersion}).Pick("job-00"); v != result.StablePromptVersion {
		t.Errorf("rolled back rollout picked %s", v)
	}
}

// TestModelRollout routes the model canary's share of jobs, by job id, to
// the candidate model's client: its jobs ask the provider for that model,
// and their stats, result meta and per-model metrics name it (so their
// findings' outcomes count for it); the rest keep the stable model. Each
// job's estimated cost is at the prices of the model that reviewed it.
func TestModelRollout(t *testing.T) {
	const candidate = "gpt-4.1-mini"
	stablePrices := llm.Prices{Input: 3, Output: 15}
	candidatePrices := llm.Prices{Input: 0.4, CachedInput: 0.1, Output: 1.6}
	h := newHarness(t, func(r *llmstage.LLM) {
		r.ModelRollout = result.ModelRollout{Candidate: candidate, Percent: 40}
		r.Terms.Prices = stablePrices
		r.Candidate = llmstage.ModelTerms{Prices: candidatePrices}
	})
	h.stage.CandidateLLM = standinClient(t, h.standin.URL(), candidate)
	served := map[string]int{}
	for i := 0; i < 40; i++ {
		id := fmt.Sprintf("job-%02d", i)
		before := len(h.standin.Requests())
		res, err := h.stage.Process(context.Background(), h.job(t, id, chunked(3)))
		if err != nil {
			t.Fatal(err)
		}
		want := "gpt-4o"
		if result.ModelBucket(id) < 40 {
			want = candidate
		}
		reqs := h.standin.Requests()[before:]
		meta := domain.ReadReviewMeta(h.result(t, res).Meta)
		if len(reqs) != 1 || reqs[0].Model != want || res.Review.Model != want || meta.Model != want || !strings.Contains(res.Detail, "model "+want) {
			t.Fatalf("%s: want %s; %d request(s), stats %q, meta %q, detail %q", id, want, len(reqs), res.Review.Model, meta.Model, res.Detail)
		}
		prices := map[string]llm.Prices{"gpt-4o": stablePrices, candidate: candidatePrices}[want]
		usage := llm.Usage{InputTokens: meta.InputTokens, OutputTokens: meta.OutputTokens, CachedInputTokens: meta.CachedInputTokens}
		// Input, cached input and output, each at the price of the model that reviewed the job.
		wantCost := (float64(usage.InputTokens-usage.CachedInputTokens)*prices.Input + float64(usage.CachedInputTokens)*prices.CachedInput +
			float64(usage.OutputTokens)*prices.Output) / 1e6
		if wantCost == 0 || math.Abs(meta.EstimatedCostUSD-wantCost) > 1e-12 {
			t.Errorf("%s (%s): estimated cost $%v, want $%v at its own prices", id, want, meta.EstimatedCostUSD, wantCost)
		}
		served[want]++
	}
	if served[candidate] == 0 || served["gpt-4o"] == 0 {
		t.Fatalf("served %v, want both models", served)
	}
	// The canary's SLO metrics, by model: one record per job.
	jobs := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(h.metrics.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if m, ok := rec["Model"].(string); ok && rec["ReviewValidFindings"] != nil {
			jobs[m]++
		}
	}
	for m, n := range served {
		if jobs[m] != n {
			t.Errorf("model %s: %d jobs, metrics by model show %d", m, n, jobs[m])
		}
	}
}

func TestReviewRejectionMetric(t *testing.T) {
	h := newHarness(t, nil)
	bad := `{"schema_version":"1.0","prompt_version":"1.0.0"}`
	h.standin.QueueFault(llmstandin.Fault{Content: &bad})
	_, err := h.stage.Process(context.Background(), h.job(t, "job-bad", chunked(3)))
	if failure.Classify(err) != failure.SchemaInvalid {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(h.metrics.String(), `"ReviewResponsesRejected":1`) {
		t.Errorf("metrics = %s", h.metrics.String())
	}
}

// Rule RC-4: an answer whose prompt_version differs from the one sent only
// in its patch segment is accepted where the environment allows the drift
// (PROMPT_PATCH_DRIFT) and rejected where it does not.
func TestPromptPatchDriftIsConfigured(t *testing.T) {
	v := strings.Split(result.StablePromptVersion, ".")
	patched := v[0] + "." + v[1] + ".99"
	answer := `{"schema_version":"` + result.SchemaVersion + `","prompt_version":"` + patched + `","summary":"fine","findings":[]}`
	for _, allow := range []bool{false, true} {
		h := newHarness(t, func(r *llmstage.LLM) { r.AllowPromptPatchDrift = allow })
		h.standin.QueueFault(llmstandin.Fault{Content: &answer})
		_, err := h.stage.Process(context.Background(), h.job(t, "job-drift", chunked(1)))
		if allow && err != nil {
			t.Errorf("drift allowed: %v, want the answer accepted", err)
		}
		if !allow && failure.Classify(err) != failure.SchemaInvalid {
			t.Errorf("drift not allowed: %v, want SCHEMA_INVALID", err)
		}
	}
}

// TestCandidateChunksFitItsOwnTokenLimit: the candidate model's chunks are
// planned no larger than its own tokens-per-minute limit, not the stable
// model's (providers limit each model apart), or a provider that admits
// fewer tokens a minute for it could never admit one of them.
func TestCandidateChunksFitItsOwnTokenLimit(t *testing.T) {
	calls := func(percent int) (int, int) {
		h := newHarness(t, func(r *llmstage.LLM) {
			r.ModelRollout = result.ModelRollout{Candidate: "gpt-4.1-mini", Percent: percent}
			r.Terms.TokensPerMinute = 1_000_000
			r.Candidate = llmstage.ModelTerms{TokensPerMinute: 6_000}
		})
		h.stage.CandidateLLM = standinClient(t, h.standin.URL(), "gpt-4.1-mini")
		res, err := h.stage.Process(context.Background(), h.job(t, "job-00", chunked(300)))
		if err != nil {
			t.Fatal(err)
		}
		return len(h.standin.Requests()), res.Review.Chunks
	}
	stableCalls, stableChunks := calls(0)
	candCalls, candChunks := calls(100)
	if candChunks <= stableChunks || candCalls <= stableCalls {
		t.Errorf("candidate at 6,000 tokens a minute: %d chunks in %d calls; stable at 1,000,000: %d chunks in %d calls; want the candidate's smaller",
			candChunks, candCalls, stableChunks, stableCalls)
	}
}
