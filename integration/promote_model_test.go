//go:build integration

package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"

	"github.com/criticizer/criticizer/shared/result"
)

// TestPromoteModelRefusesWorseAcceptance: `criticizer promote --model`, run
// as an operator runs it against the emulator's CloudWatch, refuses a
// candidate model that meets the stable prompt's job SLOs but whose
// findings reviewers accepted well below the stable model's, naming both
// shares and counts, and leaves cdk.json as it was; with acceptance as
// good, it makes the candidate llmModel, its prices llmPricesPerMTok, and
// clears the canary. Each run has its own environment and two-day-old
// data, for the reasons TestPromoteRefusesWorseAcceptance gives.
func TestPromoteModelRefusesWorseAcceptance(t *testing.T) {
	cw := cloudwatch.NewFromConfig(env.local.AWS)
	const stable, candidate = "gate-model-s", "gate-model-c"
	prompt := result.StablePromptVersion
	for i, tt := range []struct {
		candidateAccepted int // of 40 judged; the stable model: 32 of 40
		refuse            string
	}{
		{20, "candidate 50.0% accepted of 40 judged, current 80.0% accepted of 40 judged"},
		{31, ""},
	} {
		// The candidate model's jobs under the stable prompt, as the llm
		// stage emits them by model; the per-version set alone would not do.
		llm := map[string]string{"Stage": "llm", "PromptVersion": prompt, "Model": candidate}
		var jobs []datum
		for range 5 {
			jobs = append(jobs, datum{"ReviewValidFindings", 1, llm}, datum{"ReviewFindingsDropped", 0, llm})
		}
		envName := seedEnv(t, cw, "mgate-"+string(rune('a'+i)), jobs,
			judgedData(t, prompt, candidate, tt.candidateAccepted, 40-tt.candidateAccepted, 0),
			judgedData(t, prompt, stable, 32, 8, 0))

		cdk := `{"context": {"environments": {"` + envName + `": {"llmModel": "` + stable + `", "llmModelCandidate": "` + candidate + `", "llmModelCandidatePercent": 10,
  "llmPricesPerMTok": "input=3,output=15", "llmModelCandidatePricesPerMTok": "input=1,output=5",
  "validFindingsSlo": {"` + prompt + `": 0.1}, "droppedFindingsSlo": {"` + prompt + `": 0.5}}}}}
`
		path := filepath.Join(t.TempDir(), "cdk.json")
		if err := os.WriteFile(path, []byte(cdk), 0o644); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, err := runCriticizer(t, "promote", "--env", envName, "--model", "--cdk", path, "--min-jobs", "5", "--window", "72h")
		got, _ := os.ReadFile(path)
		if tt.refuse == "" {
			want := strings.NewReplacer(`"llmModel": "`+stable+`", "llmModelCandidate": "`+candidate+`", "llmModelCandidatePercent": 10`,
				`"llmModel": "`+candidate+`", "llmModelCandidate": "", "llmModelCandidatePercent": 0`,
				`"llmPricesPerMTok": "input=3,output=15", "llmModelCandidatePricesPerMTok": "input=1,output=5"`,
				`"llmPricesPerMTok": "input=1,output=5", "llmModelCandidatePricesPerMTok": ""`).Replace(cdk)
			if err != nil || string(got) != want {
				t.Errorf("acceptance as good: promote --model %v\n%s%s\ncdk.json %s", err, stdout, stderr, got)
			}
			continue
		}
		if err == nil || !strings.Contains(stderr, tt.refuse) || !strings.Contains(stderr, "current model "+stable) {
			t.Errorf("worse acceptance: promote --model %v, stderr %q: want a refusal saying %q", err, stderr, tt.refuse)
		}
		if string(got) != cdk {
			t.Errorf("a refused promotion changed cdk.json:\n%s", got)
		}
	}
}
