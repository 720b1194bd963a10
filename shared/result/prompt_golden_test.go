package result

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/domain"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestPromptTemplatesGolden pins each prompt version's rendering, system and
// user message, byte for byte: a change to a served prompt must be a new
// version (the spec's rollout), never a silent edit. Run with -update after
// adding a version and review the new file.
func TestPromptTemplatesGolden(t *testing.T) {
	cs := domain.Changeset{Changelist: 4242, Status: "shelved", Description: "Bound the copy\n\nDetails.",
		Files: []domain.FileChange{
			{DepotPath: "//depot/projectA/src/net/buffer.c", Action: "edit", Type: "text", Rev: 7,
				Diff: "@@ -10,2 +10,3 @@\n void f(char *d, const char *s) {\n+    strcpy(d, s);\n }\n"},
			{DepotPath: "//depot/projectA/img/logo.png", Action: "add", Type: "binary", Rev: 1},
			{DepotPath: "//depot/projectA/src/net/socket.c", Action: "add", Type: "text", Rev: 1,
				Diff: "@@ -0,0 +1,2 @@\n+int s;\n+/* TODO */\n"},
		}}
	for _, version := range []string{BasePromptVersion, ChunkAwarePromptVersion, RulesPromptVersion} {
		t.Run(version, func(t *testing.T) {
			b := Budget{ContextTokens: 8000, MaxChunkFiles: 1}.For("gpt-4o")
			plan := b.Plan(cs, version, RuleSet{})
			var got strings.Builder
			got.WriteString("=== system ===\n" + SystemPrompt(version))
			for i, c := range plan.Chunks {
				p := plan.Prompt(cs, c, version)
				got.WriteString("=== user, chunk " + string(rune('1'+i)) + " ===\n" + p.User)
			}
			path := filepath.Join("testdata", "prompt-"+version+".golden")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./shared/result -run TestPromptTemplatesGolden -update)", err)
			}
			if got.String() != string(want) {
				t.Errorf("prompt %s differs from %s:\n%s", version, path, got.String())
			}
			if len(plan.Chunks) != 2 || len(plan.Skipped) != 1 || !strings.Contains(got.String(), "prompt_version: "+version) {
				t.Errorf("chunks %d skipped %v", len(plan.Chunks), plan.Skipped)
			}
		})
	}
	if SystemPrompt(BasePromptVersion) == SystemPrompt(ChunkAwarePromptVersion) {
		t.Error("the candidate template is the same text as the stable one")
	}
}
