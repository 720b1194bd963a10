package main

import (
	"bytes"
	"cmp"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
)

// canaryMetrics answers GetMetricStatistics from per-metric datapoints for
// the one dimension set the llm stage emits, and nothing for any other
// (CloudWatch treats each combination of dimensions as its own metric:
// User Guide, "Dimensions"), nor for a start more than 15 days before now
// with a period that is not a multiple of 300 s (API reference,
// GetMetricStatistics, Period).
type canaryMetrics struct {
	now    time.Time
	points map[string][]cwtypes.Datapoint
	// accept holds the acceptance points by prompt version, for the model
	// staging runs only (outcome.FateMoved's PromptVersion and Model
	// dimension set), each the Sums of FindingAccepted and FindingJudged
	// over one period; nil: goodAcceptance.
	accept map[string][]acceptancePoint
	asked  []*cloudwatch.GetMetricStatisticsInput
}

// goodAcceptance: both versions accepted alike, on plenty of findings.
var goodAcceptance = map[string][]acceptancePoint{"1.0.0": {judged(60, 100)}, "1.1.0": {judged(30, 50)}}

// acceptancePoint is one period of outcome.FateMoved's deltas: the Sums of
// FindingAccepted and FindingJudged.
type acceptancePoint struct{ accepted, judged float64 }

// judged is a period in which n findings judged, accepted of them
// accepted (net of flips).
func judged(accepted, n float64) acceptancePoint { return acceptancePoint{accepted, n} }

func (c *canaryMetrics) GetMetricStatistics(_ context.Context, in *cloudwatch.GetMetricStatisticsInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricStatisticsOutput, error) {
	c.asked = append(c.asked, in)
	dims := map[string]string{}
	for _, d := range in.Dimensions {
		dims[aws.ToString(d.Name)] = aws.ToString(d.Value)
	}
	old := c.now.Sub(aws.ToTime(in.StartTime)) > 15*24*time.Hour && aws.ToInt32(in.Period)%300 != 0
	if name := aws.ToString(in.MetricName); name == "FindingAccepted" || name == "FindingJudged" {
		if old || len(dims) != 3 || dims["Environment"] != "staging" || dims["Model"] != "model-s" || aws.ToString(in.Namespace) != "Criticizer" {
			return &cloudwatch.GetMetricStatisticsOutput{}, nil
		}
		accept := c.accept
		if accept == nil {
			accept = goodAcceptance
		}
		return &cloudwatch.GetMetricStatisticsOutput{Datapoints: acceptanceSums(accept[dims["PromptVersion"]], name)}, nil
	}
	if old || dims["Environment"] != "staging" || dims["Stage"] != "llm" || dims["PromptVersion"] != "1.1.0" || aws.ToString(in.Namespace) != "Criticizer" {
		return &cloudwatch.GetMetricStatisticsOutput{}, nil
	}
	return &cloudwatch.GetMetricStatisticsOutput{Datapoints: c.points[aws.ToString(in.MetricName)]}, nil
}

// acceptanceSums are the data points of metric (FindingAccepted or
// FindingJudged) over periods: their Sums. A delta's SampleCount counts
// emissions, not findings: left out, so the acceptance is read from the
// Sums only.
func acceptanceSums(periods []acceptancePoint, metric string) []cwtypes.Datapoint {
	var out []cwtypes.Datapoint
	for _, p := range periods {
		v := p.accepted
		if metric == "FindingJudged" {
			v = p.judged
		}
		out = append(out, cwtypes.Datapoint{Sum: aws.Float64(v)})
	}
	return out
}

func point(avg, n float64) cwtypes.Datapoint {
	return cwtypes.Datapoint{Average: aws.Float64(avg), SampleCount: aws.Float64(n)}
}

const promoteFixture = `{
  "app": "go run ./infra",
  "context": {
    "environments": {
      "dev": { "promptCandidatePercent": 5, "logLevel": "debug" },
      "staging": {
        "promptCandidateVersion": "1.1.0",
        "promptCandidatePercent": 10,
        "validFindingsSlo": { "1.0.0": 0.1, "1.1.0": 0.2 },
        "droppedFindingsSlo": { "1.0.0": 0.5, "1.1.0": 0.4 },
        "llmModel": "model-s",
        "logLevel": "info"
      }
    }
  }
}
`

// `criticizer promote` sets the candidate to every job only when its
// canary meets the environment's rollout SLOs, editing that one setting in
// cdk.json; any failed check refuses and leaves the file as it was.
func TestPromoteJudgesTheCanaryBySLOs(t *testing.T) {
	for _, tt := range []struct {
		name   string
		points map[string][]cwtypes.Datapoint
		refuse string // "" = promoted
		window string
	}{
		{"meets both SLOs", map[string][]cwtypes.Datapoint{"ReviewValidFindings": {point(0.3, 15), point(0.2, 15)}, "ReviewFindingsDropped": {point(0.1, 30)}}, "", ""},
		{"over a window past 15 days", map[string][]cwtypes.Datapoint{"ReviewValidFindings": {point(0.3, 30)}, "ReviewFindingsDropped": {point(0.1, 30)}}, "", "400h1m"},
		{"finds too little", map[string][]cwtypes.Datapoint{"ReviewValidFindings": {point(0.15, 30)}, "ReviewFindingsDropped": {point(0, 30)}}, "valid findings per job 0.150 below the SLO 0.200", ""},
		{"drops too much", map[string][]cwtypes.Datapoint{"ReviewValidFindings": {point(1, 30)}, "ReviewFindingsDropped": {point(0.5, 30)}}, "dropped findings per job 0.500 above the SLO 0.400", ""},
		{"too few jobs", map[string][]cwtypes.Datapoint{"ReviewValidFindings": {point(1, 5)}, "ReviewFindingsDropped": {point(0, 5)}}, "5 job(s) measured", ""},
		{"no canary at all", nil, "0 job(s) measured", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cdk.json")
			if err := os.WriteFile(path, []byte(promoteFixture), 0o644); err != nil {
				t.Fatal(err)
			}
			now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
			cw := &canaryMetrics{now: now, points: tt.points}
			var out bytes.Buffer
			args := []string{"--env", "staging", "--cdk", path, "--min-jobs", "20"}
			if tt.window != "" {
				args = append(args, "--window", tt.window)
			}
			err := promote(context.Background(), cw, &out, now, args)
			got, _ := os.ReadFile(path)
			if tt.refuse != "" {
				if err == nil || !strings.Contains(err.Error(), tt.refuse) {
					t.Fatalf("promote: %v, want a refusal saying %q", err, tt.refuse)
				}
				if string(got) != promoteFixture {
					t.Errorf("a refused promotion changed cdk.json:\n%s", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Replace(promoteFixture, `"promptCandidatePercent": 10`, `"promptCandidatePercent": 100`, 1)
			if string(got) != want {
				t.Errorf("cdk.json after promotion:\n%s\nwant only staging's percent changed:\n%s", got, want)
			}
			window, _ := time.ParseDuration(cmp.Or(tt.window, "24h"))
			// 2 SLO metrics, then FindingAccepted and FindingJudged for each of 2 versions.
			if len(cw.asked) != 6 || !cw.asked[0].StartTime.Equal(now.Add(-window)) || !strings.Contains(out.String(), "promoted") {
				t.Errorf("canary read %d times from %v; output %q", len(cw.asked), cw.asked[0].StartTime, out.String())
			}
		})
	}
	// No SLO stated for the candidate: nothing to judge by.
	path := filepath.Join(t.TempDir(), "cdk.json")
	noSLO := strings.Replace(promoteFixture, `"1.0.0": 0.5, "1.1.0": 0.4`, `"1.0.0": 0.5`, 1)
	if err := os.WriteFile(path, []byte(noSLO), 0o644); err != nil {
		t.Fatal(err)
	}
	cw := &canaryMetrics{points: map[string][]cwtypes.Datapoint{"ReviewValidFindings": {point(1, 50)}, "ReviewFindingsDropped": {point(0, 50)}}}
	if err := promote(context.Background(), cw, io.Discard, time.Now(), []string{"--env", "staging", "--cdk", path}); err == nil || !strings.Contains(err.Error(), "no rollout SLO for prompt 1.1.0") {
		t.Errorf("promote without the candidate's SLO: %v", err)
	}
}

// `criticizer promote` also refuses a candidate whose findings reviewers
// accepted less than the stable version's by more than the margin, or that
// has too few judged findings to judge (or to compare with), saying both
// shares and counts; margin and sample come from cdk.json or the defaults.
func TestPromoteJudgesTheCanaryByAcceptance(t *testing.T) {
	goodJobs := map[string][]cwtypes.Datapoint{"ReviewValidFindings": {point(0.3, 30)}, "ReviewFindingsDropped": {point(0.1, 30)}}
	for _, tt := range []struct {
		name     string
		accept   map[string][]acceptancePoint
		settings string // added to staging's settings
		refuse   []string
	}{
		{"as good as the current prompt", map[string][]acceptancePoint{"1.0.0": {judged(60, 100)}, "1.1.0": {judged(29, 50)}}, "", nil},
		{"worse by more than the default margin", map[string][]acceptancePoint{"1.0.0": {judged(60, 100)}, "1.1.0": {judged(20, 25), judged(5, 25)}}, "",
			[]string{"promote prompt 1.1.0 in staging refused", "candidate 50.0% accepted of 50 judged", "current 60.0% accepted of 100 judged", "margin of 5.0", "model model-s"}},
		{"worse, within a margin cdk.json widens", map[string][]acceptancePoint{"1.0.0": {judged(60, 100)}, "1.1.0": {judged(25, 50)}}, `"acceptanceMargin": 0.15,`, nil},
		{"too few judged findings", map[string][]acceptancePoint{"1.0.0": {judged(60, 100)}, "1.1.0": {judged(29, 29)}}, "",
			[]string{"candidate has 29 judged finding(s), at least 30 needed"}},
		{"too few for a sample cdk.json raises", goodAcceptance, `"acceptanceMinSample": 80,`, []string{"candidate has 50 judged finding(s), at least 80 needed"}},
		{"nothing judged for the current prompt", map[string][]acceptancePoint{"1.1.0": {judged(50, 50)}}, "", []string{"current version has 0 judged finding(s)"}},
		// A deployment without Swarm comments has no reactions: it says so.
		{"not judged where nothing can be", map[string][]acceptancePoint{}, `"acceptanceMinSample": 0,`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fixture := strings.Replace(promoteFixture, `"llmModel": "model-s",`, `"llmModel": "model-s", `+tt.settings, 1)
			path := filepath.Join(t.TempDir(), "cdk.json")
			if err := os.WriteFile(path, []byte(fixture), 0o644); err != nil {
				t.Fatal(err)
			}
			now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
			err := promote(context.Background(), &canaryMetrics{now: now, points: goodJobs, accept: tt.accept}, io.Discard, now, []string{"--env", "staging", "--cdk", path})
			got, _ := os.ReadFile(path)
			if tt.refuse == nil {
				if err != nil || !strings.Contains(string(got), `"promptCandidatePercent": 100`) {
					t.Fatalf("promote: %v; cdk.json:\n%s", err, got)
				}
				return
			}
			if err == nil || string(got) != fixture {
				t.Fatalf("promote: %v, want a refusal leaving cdk.json as it was", err)
			}
			for _, w := range tt.refuse {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("refusal %q does not say %q", err, w)
				}
			}
		})
	}
}
