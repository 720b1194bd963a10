//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/criticizer/criticizer/shared/obs"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/result"
)

// TestPromoteRefusesWorseAcceptance: `criticizer promote`, run as an
// operator runs it against the emulator's CloudWatch, refuses a candidate
// prompt that meets its job SLOs but whose findings reviewers accepted
// well below the stable prompt's, naming both shares and counts, and
// leaves cdk.json as it was; with acceptance as good, it promotes. The
// acceptance data are what outcome.FateMoved emits, flips of class included:
// a finding liked and then dismissed counts as one judged finding. The
// environment ("gate-N") is the test's own, so the data of other tests
// and of the refused run do not count (CloudWatch keeps each dimension
// combination apart; so does the emulator's GetMetricStatistics). The data
// are two days old, inside promote's window but outside every alarm's
// evaluation range (an hour for the SLO alarms, a day for acceptance): the
// emulator evaluates an alarm over all dimensions of its metric name
// (MiniStack's cloudwatch service, _evaluate_alarm), so recent data here
// would sway TestRollbackAlarmsFire's.
func TestPromoteRefusesWorseAcceptance(t *testing.T) {
	cw := cloudwatch.NewFromConfig(env.local.AWS)
	const candidate, model = "1.1.0", "gate-model"
	for i, tt := range []struct {
		candidateAccepted, flipped int // of 40 judged, flipped of the rest liked then dismissed; the stable prompt: 32 of 40
		refuse                     string
	}{
		{20, 10, "candidate 50.0% accepted of 40 judged, current 80.0% accepted of 40 judged"},
		{31, 5, ""},
	} {
		llm := map[string]string{"Stage": "llm", "PromptVersion": candidate}
		var jobs []datum
		for range 5 {
			jobs = append(jobs, datum{"ReviewValidFindings", 1, llm}, datum{"ReviewFindingsDropped", 0, llm})
		}
		envName := seedEnv(t, cw, "gate-"+string(rune('a'+i)), jobs,
			judgedData(t, candidate, model, tt.candidateAccepted, 40-tt.candidateAccepted-tt.flipped, tt.flipped),
			judgedData(t, result.StablePromptVersion, model, 32, 8, 0))

		cdk := `{"context": {"environments": {"` + envName + `": {"llmModel": "` + model + `", "promptCandidateVersion": "` + candidate + `", "promptCandidatePercent": 10,
  "validFindingsSlo": {"` + candidate + `": 0.1}, "droppedFindingsSlo": {"` + candidate + `": 0.5}}}}}
`
		path := filepath.Join(t.TempDir(), "cdk.json")
		if err := os.WriteFile(path, []byte(cdk), 0o644); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, err := runCriticizer(t, "promote", "--env", envName, "--cdk", path, "--min-jobs", "5", "--window", "72h")
		got, _ := os.ReadFile(path)
		if tt.refuse == "" {
			if err != nil || !strings.Contains(string(got), `"promptCandidatePercent": 100`) {
				t.Errorf("acceptance as good: promote %v\n%s%s\ncdk.json %s", err, stdout, stderr, got)
			}
			continue
		}
		if err == nil || !strings.Contains(stderr, tt.refuse) || !strings.Contains(stderr, "margin of 5.0") {
			t.Errorf("worse acceptance: promote %v, stderr %q: want a refusal saying %q", err, stderr, tt.refuse)
		}
		if string(got) != cdk {
			t.Errorf("a refused promotion changed cdk.json:\n%s", got)
		}
	}
}

// seedEnv puts each batch of points in a new environment, named prefix and
// the time, two days ago, and returns its name. Each batch is one call,
// attempted once: a retried call is not idempotent (the emulator, like
// CloudWatch, keeps both), and the SDK's own retry of a call whose reply it
// lost (a 200 whose body read failed, "use of closed network connection")
// doubled one arm's judged findings in about one run in three. A failed
// call may have stored its points or not, so its environment is abandoned
// and every batch put again in a fresh one.
func seedEnv(t *testing.T, cw *cloudwatch.Client, prefix string, batches ...[]datum) string {
	t.Helper()
	for attempt := 0; ; attempt++ {
		envName := fmt.Sprintf("%s%s-%d", prefix, time.Now().Format("150405"), attempt)
		var err error
		for _, b := range batches {
			if err = putData(cw, envName, b); err != nil {
				break
			}
		}
		switch {
		case err == nil:
			return envName
		case attempt == 2:
			t.Fatalf("put metric data in %s: %v", envName, err)
		}
		t.Logf("put metric data in %s: %v; seeding a fresh environment", envName, err)
	}
}

// putData puts points in environment envName, two days ago, in as few
// calls as may be, each attempted once (seedEnv).
func putData(cw *cloudwatch.Client, envName string, points []datum) error {
	var data []cwtypes.MetricDatum
	for _, p := range points {
		d := cwtypes.MetricDatum{MetricName: aws.String(p.metric), Value: aws.Float64(p.value), Unit: cwtypes.StandardUnitCount, Timestamp: aws.Time(time.Now().Add(-48 * time.Hour)),
			Dimensions: []cwtypes.Dimension{{Name: aws.String("Environment"), Value: aws.String(envName)}}}
		for k, v := range p.dims {
			d.Dimensions = append(d.Dimensions, cwtypes.Dimension{Name: aws.String(k), Value: aws.String(v)})
		}
		data = append(data, d)
	}
	for len(data) > 0 { // PutMetricData takes at most 1000 data
		n := min(len(data), 1000)
		if _, err := cw.PutMetricData(context.Background(), &cloudwatch.PutMetricDataInput{Namespace: aws.String("Criticizer"), MetricData: data[:n]},
			func(o *cloudwatch.Options) { o.RetryMaxAttempts = 1 }); err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

// datum is one metric value of an EMF line, with the line's dimensions
// other than Environment.
type datum struct {
	metric string
	value  float64
	dims   map[string]string
}

// judgedData is what CloudWatch makes of the EMF lines outcome.FateMoved
// writes for findings of version and model (their Environment left to
// putData):
// accepted accepted, dismissed dismissed, and flipped liked then
// dismissed. Each metric of a line, per dimension set, becomes a data
// point (the EMF specification).
func judgedData(t *testing.T, version, model string, accepted, dismissed, flipped int) []datum {
	t.Helper()
	var buf bytes.Buffer
	m := obs.NewMetrics(&buf, "any")
	rec := outcome.Record{PromptVersion: version, Model: model}
	for range accepted {
		outcome.FateMoved(m, rec, outcome.Open, outcome.Addressed)
	}
	for range dismissed {
		outcome.FateMoved(m, rec, outcome.Open, outcome.Dismissed)
	}
	for range flipped {
		outcome.FateMoved(m, rec, outcome.Open, outcome.Liked)
		outcome.FateMoved(m, rec, outcome.Liked, outcome.Dismissed)
	}
	var out []datum
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		var rec map[string]any
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatal(err)
		}
		cwm := rec["_aws"].(map[string]any)["CloudWatchMetrics"].([]any)[0].(map[string]any)
		d := datum{dims: map[string]string{}}
		d.metric = cwm["Metrics"].([]any)[0].(map[string]any)["Name"].(string)
		d.value = rec[d.metric].(float64)
		for _, k := range cwm["Dimensions"].([]any)[0].([]any) {
			if k != "Environment" {
				d.dims[k.(string)] = rec[k.(string)].(string)
			}
		}
		out = append(out, d)
	}
	return out
}
