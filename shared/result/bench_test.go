package result

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/domain"
)

// A large review: 200 changed files, 100 findings. Parse runs once per job,
// so its cost matters only against the LLM's latency; this keeps it honest.
func BenchmarkParse(b *testing.B) {
	var files []string
	for i := range 200 {
		files = append(files, fmt.Sprintf("//depot/projectA/src/mod%03d/file.c", i))
	}
	res := domain.ReviewResult{SchemaVersion: SchemaVersion, PromptVersion: StablePromptVersion, Summary: "s"}
	for i := range 100 {
		res.Findings = append(res.Findings, domain.Finding{ID: fmt.Sprint("f", i), Severity: "medium", Category: "correctness",
			Title: "t", File: files[i%len(files)], Line: i + 1, Message: strings.Repeat("m", 200)})
	}
	raw, _ := json.Marshal(res)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, _, err := Parse(raw, files, Options{PromptVersion: StablePromptVersion}); err != nil {
			b.Fatal(err)
		}
	}
}

// Building the prompt for a changelist at the diff budget.
func BenchmarkBuildPrompt(b *testing.B) {
	cs := domain.Changeset{Changelist: 1, Description: "d"}
	for i := range 100 {
		cs.Files = append(cs.Files, domain.FileChange{DepotPath: fmt.Sprintf("//depot/p/f%d.c", i), Action: "edit", Type: "text", Rev: 2,
			Diff: "@@ -1,3 +1,3 @@\n" + strings.Repeat("+int x = compute(y);\n", 100)})
	}
	budget := Budget{}.For("gpt-4o")
	for b.Loop() {
		plan := budget.Plan(cs, StablePromptVersion, RuleSet{})
		for _, c := range plan.Chunks {
			_ = plan.Prompt(cs, c, StablePromptVersion)
		}
	}
}
