package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
)

// modelMetrics answers GetMetricStatistics only for the dimension sets a
// model canary is measured by in staging, under the stable prompt 1.0.0:
// the llm stage's per-model set (Environment, Stage, PromptVersion, Model)
// and FindingAccepted's (Environment, PromptVersion, Model); any other
// combination is another metric to CloudWatch (User Guide, "Dimensions")
// and has no data here.
type modelMetrics struct {
	jobs   map[string]map[string][]cwtypes.Datapoint // model → metric → points
	accept map[string][]acceptancePoint              // model → acceptance periods
}

func (c *modelMetrics) GetMetricStatistics(_ context.Context, in *cloudwatch.GetMetricStatisticsInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricStatisticsOutput, error) {
	dims := map[string]string{}
	for _, d := range in.Dimensions {
		dims[aws.ToString(d.Name)] = aws.ToString(d.Value)
	}
	if dims["Environment"] != "staging" || dims["PromptVersion"] != "1.0.0" || aws.ToString(in.Namespace) != "Criticizer" {
		return &cloudwatch.GetMetricStatisticsOutput{}, nil
	}
	model := dims["Model"]
	if name := aws.ToString(in.MetricName); name == "FindingAccepted" || name == "FindingJudged" {
		if len(dims) != 3 {
			return &cloudwatch.GetMetricStatisticsOutput{}, nil
		}
		return &cloudwatch.GetMetricStatisticsOutput{Datapoints: acceptanceSums(c.accept[model], name)}, nil
	}
	if len(dims) != 4 || dims["Stage"] != "llm" {
		return &cloudwatch.GetMetricStatisticsOutput{}, nil
	}
	return &cloudwatch.GetMetricStatisticsOutput{Datapoints: c.jobs[model][aws.ToString(in.MetricName)]}, nil
}

const modelFixture = `{
  "context": {
    "environments": {
      "dev": { "llmModel": "model-s", "llmModelCandidate": "model-c", "llmModelCandidatePercent": 5 },
      "staging": {
        "promptCandidateVersion": "1.1.0",
        "promptCandidatePercent": 10,
        "validFindingsSlo": { "1.0.0": 0.1, "1.1.0": 0.2 },
        "droppedFindingsSlo": { "1.0.0": 0.5, "1.1.0": 0.4 },
        "llmModel": "model-s",
        "llmModelCandidate": "model-c",
        "llmModelCandidatePercent": 10,
        "llmPricesPerMTok": "input=3,output=15",
        "llmModelCandidatePricesPerMTok": "input=1,output=5",
        "llmTokensPerMinute": 200000,
        "llmModelCandidateTokensPerMinute": 400000,
        "logLevel": "info"
      }
    }
  }
}
`

// `criticizer promote --model` makes the candidate model llmModel only when
// its canary, under the stable prompt, meets that prompt's rollout SLOs
// and reviewers accepted its findings no less than the stable model's; it
// edits only staging's model settings, the candidate's prices and limits
// becoming llmModel's. Any failed check refuses, says the
// numbers (both shares and counts for acceptance) and leaves cdk.json as it
// was.
func TestPromoteModel(t *testing.T) {
	goodJobs := map[string][]cwtypes.Datapoint{"ReviewValidFindings": {point(0.3, 30)}, "ReviewFindingsDropped": {point(0.1, 30)}}
	goodAccept := map[string][]acceptancePoint{"model-s": {judged(60, 100)}, "model-c": {judged(30, 50)}}
	for _, tt := range []struct {
		name   string
		jobs   map[string][]cwtypes.Datapoint // the candidate model's
		accept map[string][]acceptancePoint
		refuse []string // nil: promoted
	}{
		{"as good as the stable model", goodJobs, goodAccept, nil},
		{"too few jobs", map[string][]cwtypes.Datapoint{"ReviewValidFindings": {point(1, 5)}, "ReviewFindingsDropped": {point(0, 5)}}, goodAccept,
			[]string{"promote model model-c in staging refused", "5 job(s) measured, at least 20"}},
		{"finds too little", map[string][]cwtypes.Datapoint{"ReviewValidFindings": {point(0.05, 30)}, "ReviewFindingsDropped": {point(0, 30)}}, goodAccept,
			[]string{"valid findings per job 0.050 below the SLO 0.100"}},
		{"accepted less", goodJobs, map[string][]acceptancePoint{"model-s": {judged(60, 100)}, "model-c": {judged(25, 50)}},
			[]string{"promote model model-c in staging refused (current model model-s, prompt 1.0.0", "candidate 50.0% accepted of 50 judged", "current 60.0% accepted of 100 judged", "margin of 5.0"}},
		{"too few judged findings", goodJobs, map[string][]acceptancePoint{"model-s": {judged(60, 100)}, "model-c": {judged(10, 10)}},
			[]string{"candidate has 10 judged finding(s), at least 30 needed"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cdk.json")
			if err := os.WriteFile(path, []byte(modelFixture), 0o644); err != nil {
				t.Fatal(err)
			}
			now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
			// The stable model's own canary numbers are poor: only the
			// candidate's may be judged by the SLOs.
			cw := &modelMetrics{accept: tt.accept, jobs: map[string]map[string][]cwtypes.Datapoint{"model-c": tt.jobs,
				"model-s": {"ReviewValidFindings": {point(0, 100)}, "ReviewFindingsDropped": {point(9, 100)}}}}
			var out bytes.Buffer
			err := promote(context.Background(), cw, &out, now, []string{"--env", "staging", "--model", "--cdk", path})
			got, _ := os.ReadFile(path)
			if tt.refuse != nil {
				if err == nil || string(got) != modelFixture {
					t.Fatalf("promote --model: %v, want a refusal leaving cdk.json as it was:\n%s", err, got)
				}
				for _, w := range tt.refuse {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("refusal %q does not say %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := strings.NewReplacer(`"llmModel": "model-s",
        "llmModelCandidate": "model-c",
        "llmModelCandidatePercent": 10,
        "llmPricesPerMTok": "input=3,output=15",
        "llmModelCandidatePricesPerMTok": "input=1,output=5",
        "llmTokensPerMinute": 200000,
        "llmModelCandidateTokensPerMinute": 400000,`, `"llmModel": "model-c",
        "llmModelCandidate": "",
        "llmModelCandidatePercent": 0,
        "llmPricesPerMTok": "input=1,output=5",
        "llmModelCandidatePricesPerMTok": "",
        "llmTokensPerMinute": 400000,
        "llmModelCandidateTokensPerMinute": 0,`).Replace(modelFixture)
			if string(got) != want {
				t.Errorf("cdk.json after promotion:\n%s\nwant only staging's model settings changed:\n%s", got, want)
			}
			for _, w := range []string{"llmModel model-s → model-c", "llmModelCandidatePercent 10 → 0", "acceptance 60.0% accepted of 50 judged vs model-s's 60.0% accepted of 100 judged",
				`llmPricesPerMTok "input=3,output=15" → model-c's "input=1,output=5"`, "llmTokensPerMinute 200000 → 400000 (model-c's)"} {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output %q does not say %q", out.String(), w)
				}
			}
		})
	}
}

// Without a candidate model, or with the stable prompt's SLOs missing,
// there is nothing to judge: promote --model says so and edits nothing.
func TestPromoteModelNothingToJudge(t *testing.T) {
	for _, tt := range []struct{ fixture, want string }{
		{strings.Replace(modelFixture, `"llmModelCandidate": "model-c",
        "llmModelCandidatePercent": 10,`, "", 1), "staging has no llmModelCandidate"},
		{strings.Replace(modelFixture, `"1.0.0": 0.5, `, "", 1), "no rollout SLO for prompt 1.0.0"},
	} {
		path := filepath.Join(t.TempDir(), "cdk.json")
		if err := os.WriteFile(path, []byte(tt.fixture), 0o644); err != nil {
			t.Fatal(err)
		}
		err := promote(context.Background(), &modelMetrics{}, &bytes.Buffer{}, time.Now(), []string{"--env", "staging", "--model", "--cdk", path})
		if got, _ := os.ReadFile(path); err == nil || !strings.Contains(err.Error(), tt.want) || string(got) != tt.fixture {
			t.Errorf("promote --model: %v, want %q and cdk.json untouched", err, tt.want)
		}
	}
}

// Promoting moves the candidate's prices and its own limits to llmModel's,
// adding them after llmModel, indented alike, where the environment had
// none; a candidate without prices clears the stable model's (they are not
// the new model's); limits the candidate did not set stay (it ran at them).
func TestSetModelMovesTheCandidatesTerms(t *testing.T) {
	for _, tt := range []struct {
		name, block, want, says string
	}{
		{"no candidate prices: the old model's cleared",
			`{ "llmModel": "model-s", "llmModelCandidate": "model-c", "llmModelCandidatePercent": 5, "llmPricesPerMTok": "input=3,output=15", "llmTokensPerMinute": 200000 }`,
			`{ "llmModel": "model-c", "llmModelCandidate": "", "llmModelCandidatePercent": 0, "llmPricesPerMTok": "", "llmTokensPerMinute": 200000 }`,
			"llmPricesPerMTok cleared: they were model-s's"},
		{"added inline",
			`{ "llmModel": "model-s", "llmModelCandidate": "model-c", "llmModelCandidatePercent": 5, "llmModelCandidatePricesPerMTok": "input=1", "llmModelCandidateRequestsPerMinute": 50 }`,
			`{ "llmModel": "model-c", "llmPricesPerMTok": "input=1", "llmRequestsPerMinute": 50, "llmModelCandidate": "", "llmModelCandidatePercent": 0, "llmModelCandidatePricesPerMTok": "", "llmModelCandidateRequestsPerMinute": 0 }`,
			"llmRequestsPerMinute 0 → 50 (model-c's)"},
		{"added on lines of their own",
			"{\n        \"llmModel\": \"model-s\",\n        \"llmModelCandidate\": \"model-c\",\n        \"llmModelCandidateTokensPerMinute\": 400000\n      }",
			"{\n        \"llmModel\": \"model-c\",\n        \"llmTokensPerMinute\": 400000,\n        \"llmModelCandidate\": \"\",\n        \"llmModelCandidateTokensPerMinute\": 0\n      }",
			"llmTokensPerMinute 0 → 400000"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc := func(block string) []byte {
				return []byte(`{"context": {"environments": {"dev": {"llmModel": "x"}, "staging": ` + block + `}}}`)
			}
			set, err := readRollout(doc(tt.block), "staging")
			if err != nil {
				t.Fatal(err)
			}
			got, err := setModel(doc(tt.block), "staging", set)
			if err != nil || string(got) != string(doc(tt.want)) {
				t.Fatalf("setModel: %v\n%s\nwant\n%s", err, got, doc(tt.want))
			}
			var out bytes.Buffer
			sayTerms(&out, set, "staging")
			if !strings.Contains(out.String(), tt.says) {
				t.Errorf("says %q, want %q", out.String(), tt.says)
			}
		})
	}
}
