package result

import (
	"fmt"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/domain"
)

func TestBudgetForModelFamily(t *testing.T) {
	tests := []struct {
		model   string
		context int
		bpt     float64
	}{
		{"gpt-4o-mini", 128000, 3.6},
		{"claude-sonnet-4-5", 200000, 3.2},
		{"anthropic.claude-3-5-sonnet-20240620-v1:0", 200000, 3.2},
		{"us.anthropic.claude-3-7-sonnet-20250219-v1:0", 200000, 3.2},
		{"deepseek-chat", 64000, 3.2},
		{"meta.llama3-1-70b-instruct-v1:0", 128000, 3.2},
		{"my-local-model", 32000, 3.0},
	}
	for _, tt := range tests {
		b := Budget{}.For(tt.model)
		if b.ContextTokens != tt.context || b.BytesPerToken != tt.bpt || b.OutputTokens != DefaultBudget.OutputTokens {
			t.Errorf("%s: %+v, want context %d, %.1f bytes/token", tt.model, b, tt.context, tt.bpt)
		}
	}
	if b := (Budget{ContextTokens: 9000, BytesPerToken: 2}).For("gpt-4o"); b.ContextTokens != 9000 || b.BytesPerToken != 2 {
		t.Errorf("configured values overridden: %+v", b)
	}
}

// Every chunk's prompt fits the window with the answer's room left, whatever
// the mix of file sizes; files too large are cut and named, never dropped.
func TestPlanFitsTheBudget(t *testing.T) {
	cs := domain.Changeset{Changelist: 1, Description: strings.Repeat("d", 20000)}
	for i := 0; i < 300; i++ {
		size := 100 + (i*7919)%6000
		if i%50 == 0 {
			size = 90000 // larger than a chunk
		}
		cs.Files = append(cs.Files, domain.FileChange{DepotPath: fmt.Sprintf("//depot/f%03d.c", i),
			Diff: "@@ -1 +1 @@\n" + strings.Repeat("+x = y;\n", size/8)})
	}
	b := Budget{ContextTokens: 16000, OutputTokens: 2000, MaxChunkFiles: 40}.For("gpt-4o")
	plan := b.Plan(cs, StablePromptVersion, RuleSet{})
	limitTokens := b.ContextTokens - b.OutputTokens
	covered := map[string]bool{}
	for _, c := range plan.Chunks {
		p := plan.Prompt(cs, c, StablePromptVersion)
		if est := float64(p.Size()) / b.BytesPerToken; est > float64(limitTokens) {
			t.Errorf("chunk of %d files is ~%.0f tokens, over %d", len(c.Files()), est, limitTokens)
		}
		if len(c.Files()) > 40 {
			t.Errorf("chunk has %d files", len(c.Files()))
		}
		for _, f := range c.Files() {
			covered[f] = true
		}
	}
	if len(covered) != len(cs.Files) || len(plan.Skipped) != 0 {
		t.Errorf("covered %d of %d, skipped %v", len(covered), len(cs.Files), plan.Skipped)
	}
	if len(plan.Truncated) != 6 || !plan.DescriptionTruncated {
		t.Errorf("truncated %d files (want the 6 oversized), description %v", len(plan.Truncated), plan.DescriptionTruncated)
	}
}

func TestPlanLimitsNameWhatIsSkipped(t *testing.T) {
	cs := domain.Changeset{}
	for i := 0; i < 10; i++ {
		cs.Files = append(cs.Files, domain.FileChange{DepotPath: fmt.Sprintf("//d/%d", i), Diff: strings.Repeat("+a\n", 100)})
	}
	cs.Files = append(cs.Files, domain.FileChange{DepotPath: "//d/bin", Type: "binary"},
		domain.FileChange{DepotPath: "//d/huge.sql", Type: "text", NotDiffed: domain.OverFileBytes}, domain.FileChange{DepotPath: "//d/empty.txt", Type: "text"})
	plan := Budget{MaxFiles: 6, MaxBytes: 1000}.For("gpt-4o").Plan(cs, StablePromptVersion, RuleSet{})
	reasons := map[string]int{}
	for _, s := range plan.Skipped {
		reasons[s.Reason]++
	}
	// 1000 bytes: three files of 300 and a fourth cut to 100; then the byte
	// limit. The file fetch did not print for its size says so, not "no
	// textual diff" (which an empty text file is).
	if reasons[SkipOverByteLimit] != 6 || reasons[SkipBinary] != 1 || reasons[SkipOverFileBytes] != 1 || reasons[SkipNoTextualDiff] != 1 || len(plan.Truncated) != 1 {
		t.Errorf("skipped %v truncated %v", reasons, plan.Truncated)
	}
}

func TestMergeStableIDsAndDuplicates(t *testing.T) {
	f := func(sev, title, msg string, line int) domain.Finding {
		return domain.Finding{ID: "F1", Severity: sev, Category: "security", Title: title, File: "//d/a.c", Line: line, Message: msg, Confidence: "medium"}
	}
	a := ChunkResult{Summary: "Part one.", Findings: []domain.Finding{f("medium", "Unbounded copy", "short", 10), f("low", "Other", "x", 3)}}
	b := ChunkResult{Summary: "Part two.", Findings: []domain.Finding{f("high", "unbounded  COPY", "longer message", 10)}}
	res, _ := Merge([]ChunkResult{a, b, {Summary: "Part one."}}, ChunkAwarePromptVersion, nil)
	if len(res.Findings) != 2 {
		t.Fatalf("findings = %+v", res.Findings)
	}
	if res.Findings[1].Line != 3 || res.Findings[0].Severity != "high" || res.Findings[0].Message != "longer message" {
		t.Errorf("merged = %+v", res.Findings)
	}
	if res.Findings[0].ID == res.Findings[1].ID || !strings.HasPrefix(res.Findings[0].ID, "F-") {
		t.Errorf("ids = %s %s", res.Findings[0].ID, res.Findings[1].ID)
	}
	again, _ := Merge([]ChunkResult{b, a}, ChunkAwarePromptVersion, nil)
	if fmt.Sprint(again.Findings) != fmt.Sprint(res.Findings) {
		t.Error("merge depends on chunk order")
	}
	if res.Summary != "Part one.\nPart two." || res.PromptVersion != ChunkAwarePromptVersion {
		t.Errorf("summary %q version %s", res.Summary, res.PromptVersion)
	}
}

func TestRolloutPick(t *testing.T) {
	r := Rollout{Candidate: ChunkAwarePromptVersion, Percent: 25}
	n := 0
	for i := 0; i < 2000; i++ {
		id := fmt.Sprintf("job-%d", i)
		v := r.Pick(id)
		if v != r.Pick(id) {
			t.Fatal("not deterministic")
		}
		if v == ChunkAwarePromptVersion {
			n++
		}
	}
	if n < 400 || n > 600 {
		t.Errorf("candidate served to %d of 2000 jobs, want about 500", n)
	}
	for _, bad := range []Rollout{{Candidate: "9.9.9", Percent: 10}} {
		if bad.Validate() == nil {
			t.Errorf("%+v validated", bad)
		}
	}
	if (Rollout{Candidate: ChunkAwarePromptVersion, Percent: 100}).Pick("x") != ChunkAwarePromptVersion ||
		(Rollout{Candidate: ChunkAwarePromptVersion, Percent: 0}).Pick("x") != StablePromptVersion {
		t.Error("0% / 100% not honoured")
	}
}

// Merge reports what it adjusts silently otherwise: a duplicate merged and
// a model's finding id replaced by the fingerprint's, each with its reason.
func TestMergeReportsItsAdjustments(t *testing.T) {
	f := domain.Finding{ID: "F1", Severity: "high", Category: "bug", Title: "Off by one", File: "//d/a.go", Line: 3, Message: "m"}
	again := f
	again.ID, again.Severity = "F7", "low"
	res, diags := Merge([]ChunkResult{{Findings: []domain.Finding{f}}, {Findings: []domain.Finding{again}}}, StablePromptVersion, nil)
	if len(res.Findings) != 1 {
		t.Fatalf("findings %+v, want one", res.Findings)
	}
	id := res.Findings[0].ID
	if diags.Counts()[KindFindingMerged+"/"+ReasonDuplicateFinding] == 0 || diags.Counts()[KindCoercion+"/"+ReasonFindingIDReplaced] == 0 {
		t.Fatalf("diagnostics %v, want a merged duplicate and a replaced id", diags)
	}
	for _, d := range diags {
		if d.Reason == ReasonFindingIDReplaced && (d.Old != "F1" || d.New != id) {
			t.Errorf("id replacement %+v, want F1 → %s", d, id)
		}
	}
	// A finding that already carries its fingerprint id, alone: nothing to report.
	if _, diags := Merge([]ChunkResult{{Findings: res.Findings}}, StablePromptVersion, nil); len(diags) != 0 {
		t.Errorf("an unchanged finding reported %v", diags)
	}
}
