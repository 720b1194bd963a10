package llmstage_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	llmstandin "github.com/criticizer/criticizer/internal/standin/llm"
	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/finding"
	"github.com/criticizer/criticizer/shared/llmstage"
	"github.com/criticizer/criticizer/shared/result"
)

// The fixture key: shaped like an AWS access key id, not a credential.
const plantedKey = "AKIAQX7N3PLV2KD5RTWE"

// redactedChangeset is what the fetch stage stores: the raw diff through
// the real redactor.
func redactedChangeset(t *testing.T, files ...domain.FileChange) domain.Changeset {
	t.Helper()
	red, err := guardOnce()
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		if files[i].Diff, _, err = red.Redact(f.Diff); err != nil {
			t.Fatal(err)
		}
	}
	return domain.Changeset{Changelist: 42, Status: "submitted", Files: files}
}

func answer(findings string) llmstandin.Fault {
	c := `{"schema_version":"1.0","prompt_version":"1.0.0","summary":"","findings":[` + findings + `]}`
	return llmstandin.Fault{Content: &c}
}

const keyDiff = "@@ -1,2 +1,4 @@\n int main() {\n+  const char* id = \"" + plantedKey + "\";\n+  return 0;\n }\n"

// TestCommittedKeyIsAFindingWhateverTheModelSays: the pipeline states a
// committed secret itself: with an empty answer and with a refusal alike,
// as a critical finding on the right line naming the detector's rule, with
// no part of the key anywhere in the result.
func TestCommittedKeyIsAFindingWhateverTheModelSays(t *testing.T) {
	for name, fault := range map[string]llmstandin.Fault{
		"empty answer": answer(""),
		"refusal":      {Refusal: "I will not review credentials."},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.standin.QueueFault(fault)
			cs := redactedChangeset(t, domain.FileChange{DepotPath: "//depot/game/main.cpp", Action: "edit", Type: "text", Rev: 3, Diff: keyDiff})
			res, err := h.stage.Process(context.Background(), h.job(t, "job-key-"+strings.Fields(name)[0], cs))
			if err != nil {
				t.Fatal(err)
			}
			out := h.result(t, res)
			if len(out.Findings) != 1 {
				t.Fatalf("findings = %+v", out.Findings)
			}
			f := out.Findings[0]
			if f.Severity != "critical" || f.RuleID != "secret/aws-access-token" || f.File != "//depot/game/main.cpp" || f.Line != 2 || f.Category != "security" {
				t.Errorf("finding = %+v", f)
			}
			b, _ := json.Marshal(out)
			for _, part := range []string{plantedKey, plantedKey[4:], plantedKey[:12]} {
				if strings.Contains(string(b), part) {
					t.Errorf("result holds part of the key %q", part)
				}
			}
			if meta := domain.ReadReviewMeta(out.Meta); meta.SecretFindings != 1 {
				t.Errorf("meta = %+v", meta)
			}
		})
	}
}

// TestOutOfViewFindingIsDropped: a finding on a line the model was not shown
// is dropped with its diagnostic and counted per prompt version; one on a
// shown line is kept.
func TestOutOfViewFindingIsDropped(t *testing.T) {
	h := newHarness(t, nil)
	diff := "@@ -10,3 +10,4 @@\n a();\n+b();\n c();\n d();\n"
	h.standin.QueueFault(answer(
		`{"id":"1","severity":"high","category":"correctness","title":"shown","file":"//depot/a.cpp","line":11,"message":"m"},` +
			`{"id":"2","severity":"high","category":"correctness","title":"invented","file":"//depot/a.cpp","line":200,"message":"m"},` +
			`{"id":"3","severity":"high","category":"correctness","title":"range past the hunk","file":"//depot/a.cpp","line":12,"end_line":15,"message":"m"}`))
	cs := domain.Changeset{Changelist: 9, Files: []domain.FileChange{{DepotPath: "//depot/a.cpp", Action: "edit", Type: "text", Diff: diff}}}
	res, err := h.stage.Process(context.Background(), h.job(t, "job-view", cs))
	if err != nil {
		t.Fatal(err)
	}
	out := h.result(t, res)
	if len(out.Findings) != 1 || out.Findings[0].Title != "shown" {
		t.Fatalf("findings = %+v", out.Findings)
	}
	if meta := domain.ReadReviewMeta(out.Meta); meta.OutOfView != 2 || meta.DroppedFindings != 2 {
		t.Errorf("meta = %+v", meta)
	}
	// The diagnostic is stored with the chunk, machine-readable.
	var chunk struct {
		Diagnostics map[string]int `json:"diagnostics"`
	}
	keys := h.s3.Keys("/chunks/")
	if len(keys) != 1 {
		t.Fatalf("chunks = %v", keys)
	}
	b, _ := h.s3.Get(keys[0])
	if err := json.Unmarshal(b, &chunk); err != nil || chunk.Diagnostics["finding_dropped/line_not_shown"] != 2 {
		t.Errorf("chunk diagnostics = %s", b)
	}
	if !metricLine(h.metrics.String(), "ReviewFindingsOutOfView", 2, result.StablePromptVersion) {
		t.Errorf("no per-version out-of-view metric in %s", h.metrics)
	}
}

func metricLine(emf, name string, value float64, version string) bool {
	for _, l := range strings.Split(emf, "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(l), &rec) != nil {
			continue
		}
		if v, ok := rec[name].(float64); ok && v == value && (version == "" || rec["PromptVersion"] == version) {
			return true
		}
	}
	return false
}

// TestTokenBudgetStatesCoverage: a review over its token budget reviews what
// fits and names the rest "over budget"; the coverage line says so.
func TestTokenBudgetStatesCoverage(t *testing.T) {
	h := newHarness(t, func(r *llmstage.LLM) { r.Budget = result.Budget{MaxReviewTokens: 7000, MaxChunkFiles: 1} })
	cs := chunked(6)
	res, err := h.stage.Process(context.Background(), h.job(t, "job-budget", cs))
	if err != nil {
		t.Fatal(err)
	}
	meta := domain.ReadReviewMeta(h.result(t, res).Meta)
	over := 0
	for _, s := range meta.SkippedFiles {
		if s.Reason == result.SkipOverBudget {
			over++
		}
	}
	if over == 0 || meta.FilesReviewed == 0 || meta.Complete() {
		t.Fatalf("meta = %+v", meta)
	}
	if !strings.Contains(res.Review.Coverage, "over the token budget") || !strings.HasPrefix(res.Review.Coverage, "reviewed ") {
		t.Errorf("coverage = %q", res.Review.Coverage)
	}
	if len(h.standin.Requests()) != meta.FilesReviewed {
		t.Errorf("%d model calls for %d files reviewed", len(h.standin.Requests()), meta.FilesReviewed)
	}
}

type fakeDaily struct{ spent, added int64 }

func (f *fakeDaily) Spent(context.Context, time.Time) (int64, error) { return f.spent, nil }
func (f *fakeDaily) Add(_ context.Context, _ time.Time, n int64) (int64, error) {
	f.spent += n
	f.added += n
	return f.spent, nil
}

// TestDailyBudgetSwitchesTheModelOff: with the day's budget spent, the review
// runs without the model (deterministic findings and coverage only) and says
// why; under it, the tokens spent are counted and the share used emitted.
func TestDailyBudgetSwitchesTheModelOff(t *testing.T) {
	daily := &fakeDaily{}
	h := newHarness(t, func(r *llmstage.LLM) { r.Daily = daily; r.DailyTokenBudget = 1_000_000 })
	cs := redactedChangeset(t, domain.FileChange{DepotPath: "//depot/game/main.cpp", Action: "edit", Type: "text", Diff: keyDiff})
	res, err := h.stage.Process(context.Background(), h.job(t, "job-day-1", cs))
	if err != nil {
		t.Fatal(err)
	}
	if daily.added == 0 || res.Review.WithoutModel != "" || len(h.standin.Requests()) != 1 {
		t.Fatalf("under budget: added %d, stats %+v", daily.added, res.Review)
	}

	daily.spent = 1_000_000
	calls := len(h.standin.Requests())
	res, err = h.stage.Process(context.Background(), h.job(t, "job-day-2", cs))
	if err != nil {
		t.Fatal(err)
	}
	out := h.result(t, res)
	meta := domain.ReadReviewMeta(out.Meta)
	if len(h.standin.Requests()) != calls {
		t.Error("the model was called over the daily budget")
	}
	if !strings.Contains(meta.WithoutModel, "daily budget") || meta.Complete() || len(out.Findings) != 1 || out.Findings[0].RuleID != "secret/aws-access-token" {
		t.Errorf("meta %+v findings %+v", meta, out.Findings)
	}
	if !strings.Contains(res.Review.Coverage, "the model was not called") {
		t.Errorf("coverage = %q", res.Review.Coverage)
	}
	if !metricLine(h.metrics.String(), "DailyTokenBudgetUsedPercent", 100, "") {
		t.Errorf("no budget metric in %s", h.metrics)
	}
}

// TestRulesApplyPerRoot: the rules file of the nearest root applies (ignore
// patterns, threshold, cap with the count hidden); a rejected rules file is
// reported and the environment's defaults apply to its files.
func TestRulesApplyPerRoot(t *testing.T) {
	h := newHarness(t, func(r *llmstage.LLM) { r.Rules = result.Rules{SeverityThreshold: "high"} })
	strcpy := "@@ -1,1 +1,4 @@\n x;\n+strcpy(a, b);\n+// TODO one\n+strcpy(c, d);\n"
	cs := domain.Changeset{Changelist: 5, Files: []domain.FileChange{
		{DepotPath: "//depot/game/src/a.cpp", Action: "edit", Type: "text", Diff: strcpy},
		{DepotPath: "//depot/game/gen/b.generated.cpp", Action: "edit", Type: "text", Diff: strcpy},
		{DepotPath: "//depot/tools/c.cpp", Action: "edit", Type: "text", Diff: strcpy},
	}}
	j := h.job(t, "job-rules", cs)
	files := []domain.RulesFile{
		{Root: "//depot/game/", Source: "//depot/game/.criticizer.yaml@4", Content: "version: 1\nignore: ['*.generated.cpp']\nmax_findings: 1\n"},
		{Root: "//depot/tools/", Source: "//depot/tools/.criticizer.yaml@4", Content: "max_findings: 0\n"},
	}
	if err := h.stage.Redacted.PutJSON(context.Background(), artifacts.Key(j.ID, domain.RulesArtifact), files); err != nil {
		t.Fatal(err)
	}
	res, err := h.stage.Process(context.Background(), j)
	if err != nil {
		t.Fatal(err)
	}
	out := h.result(t, res)
	meta := domain.ReadReviewMeta(out.Meta)
	// a.cpp and c.cpp: 2 strcpy (high) each, the TODOs (low) below the
	// defaults' threshold for c.cpp only; the game root caps at 1.
	if len(out.Findings) != 1 || out.Findings[0].Severity != "high" || meta.HiddenByCap == 0 {
		t.Errorf("findings %+v meta %+v", out.Findings, meta)
	}
	if len(meta.SkippedFiles) != 1 || meta.SkippedFiles[0].Reason != result.SkipIgnored || meta.SkippedFiles[0].File != "//depot/game/gen/b.generated.cpp" {
		t.Errorf("skipped = %+v", meta.SkippedFiles)
	}
	if len(meta.RulesRejected) != 1 || !strings.Contains(meta.RulesRejected[0], "//depot/tools/.criticizer.yaml@4: /max_findings") ||
		len(meta.Rules) != 1 || meta.FilteredByRules != 1 {
		t.Errorf("rules %v rejected %v filtered %d", meta.Rules, meta.RulesRejected, meta.FilteredByRules)
	}
	// What the rules withheld is listed by fingerprint (a rerun does not
	// call it resolved), and the rules in play by digest.
	if len(meta.Withheld) != meta.FilteredByRules+meta.HiddenByCap || slices.Contains(meta.Withheld, "") || len(meta.RulesDigest) != 64 {
		t.Errorf("withheld %v (filtered %d, hidden %d), rules digest %q", meta.Withheld, meta.FilteredByRules, meta.HiddenByCap, meta.RulesDigest)
	}
	for _, fp := range meta.Withheld {
		for _, f := range out.Findings {
			if f.ID == finding.ID(fp) {
				t.Errorf("withheld %s is also shown", fp)
			}
		}
	}
}
