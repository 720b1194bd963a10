//go:build integration

package integration

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/result"
)

// TestPromoteModelRefusesWorseAcceptance: `criticizer promote --model`, run
// as an operator runs it against the emulator's CloudWatch, refuses a
// candidate model that meets the stable prompt's job SLOs but whose
// findings reviewers accepted well below the stable model's, naming both
// shares and counts, and leaves cdk.json as it was; with acceptance as
// good, it makes the candidate llmModel and clears the canary. Each run has
// its own environment and two-day-old data, for the reasons
// TestPromoteRefusesWorseAcceptance gives.
func TestPromoteModelRefusesWorseAcceptance(t *testing.T) {
	ctx := context.Background()
	cw := cloudwatch.NewFromConfig(env.local.AWS)
	bin := filepath.Join(t.TempDir(), "criticizer")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/criticizer").CombinedOutput(); err != nil {
		t.Fatalf("build the CLI: %v\n%s", err, out)
	}
	const stable, candidate = "gate-model-s", "gate-model-c"
	prompt := result.StablePromptVersion
	for i, tt := range []struct {
		candidateAccepted int // of 40 settled; the stable model: 32 of 40
		refuse            string
	}{
		{20, "candidate 50.0% accepted of 40 settled, current 80.0% accepted of 40 settled"},
		{31, ""},
	} {
		envName := "mgate-" + string(rune('a'+i)) + time.Now().Format("150405")
		put := func(metric string, dims map[string]string, values ...float64) {
			var data []cwtypes.MetricDatum
			for _, v := range values {
				d := cwtypes.MetricDatum{MetricName: aws.String(metric), Value: aws.Float64(v), Unit: cwtypes.StandardUnitCount, Timestamp: aws.Time(time.Now().Add(-48 * time.Hour)),
					Dimensions: []cwtypes.Dimension{{Name: aws.String("Environment"), Value: aws.String(envName)}}}
				for k, v := range dims {
					d.Dimensions = append(d.Dimensions, cwtypes.Dimension{Name: aws.String(k), Value: aws.String(v)})
				}
				data = append(data, d)
			}
			if _, err := cw.PutMetricData(ctx, &cloudwatch.PutMetricDataInput{Namespace: aws.String("Criticizer"), MetricData: data}); err != nil {
				t.Fatal(err)
			}
		}
		ones := func(accepted, of int) []float64 {
			v := make([]float64, of)
			for i := range accepted {
				v[i] = 1
			}
			return v
		}
		// The candidate model's jobs under the stable prompt, as the llm
		// stage emits them by model; the per-version set alone would not do.
		llm := map[string]string{"Stage": "llm", "PromptVersion": prompt, "Model": candidate}
		put("ReviewValidFindings", llm, 1, 1, 1, 1, 1)
		put("ReviewFindingsDropped", llm, 0, 0, 0, 0, 0)
		put(outcome.AcceptanceMetric, map[string]string{"PromptVersion": prompt, "Model": candidate}, ones(tt.candidateAccepted, 40)...)
		put(outcome.AcceptanceMetric, map[string]string{"PromptVersion": prompt, "Model": stable}, ones(32, 40)...)

		cdk := `{"context": {"environments": {"` + envName + `": {"llmModel": "` + stable + `", "llmModelCandidate": "` + candidate + `", "llmModelCandidatePercent": 10,
  "validFindingsSlo": {"` + prompt + `": 0.1}, "droppedFindingsSlo": {"` + prompt + `": 0.5}}}}}
`
		path := filepath.Join(t.TempDir(), "cdk.json")
		if err := os.WriteFile(path, []byte(cdk), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "promote", "--env", envName, "--model", "--cdk", path, "--min-jobs", "5", "--window", "72h")
		cmd.Env = append(os.Environ(), "AWS_ENDPOINT_URL="+env.local.Emulator.Endpoint, "AWS_ACCESS_KEY_ID=test",
			"AWS_SECRET_ACCESS_KEY=test", "AWS_REGION=us-east-1")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		got, _ := os.ReadFile(path)
		if tt.refuse == "" {
			want := strings.Replace(cdk, `"llmModel": "`+stable+`", "llmModelCandidate": "`+candidate+`", "llmModelCandidatePercent": 10`,
				`"llmModel": "`+candidate+`", "llmModelCandidate": "", "llmModelCandidatePercent": 0`, 1)
			if err != nil || string(got) != want {
				t.Errorf("acceptance as good: promote --model %v\n%s%s\ncdk.json %s", err, stdout.String(), stderr.String(), got)
			}
			continue
		}
		if err == nil || !strings.Contains(stderr.String(), tt.refuse) || !strings.Contains(stderr.String(), "current model "+stable) {
			t.Errorf("worse acceptance: promote --model %v, stderr %q: want a refusal saying %q", err, stderr.String(), tt.refuse)
		}
		if string(got) != cdk {
			t.Errorf("a refused promotion changed cdk.json:\n%s", got)
		}
	}
}
