//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
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

// TestRollbackAlarmsFire: the deployed rollback alarms of the stable prompt
// (cdk.json's local validFindingsSlo and droppedFindingsSlo) and on
// acceptance (acceptanceAlarmThreshold) go to ALARM,
// with the alarm topic as their action, when the llm stage's per-job
// metrics breach the SLOs. The emulator evaluates an alarm on every
// PutMetricData over the points of its namespace and metric name within
// Period × EvaluationPeriods (MiniStack's cloudwatch service; it does not
// filter by dimension nor count DatapointsToAlarm), so the test puts
// breaching points only.
func TestRollbackAlarmsFire(t *testing.T) {
	ctx := context.Background()
	cw := cloudwatch.NewFromConfig(env.local.AWS)
	id := strings.ReplaceAll(result.StablePromptVersion, ".", "x")
	perJob := []cwtypes.Dimension{{Name: aws.String("Environment"), Value: aws.String("local")},
		{Name: aws.String("Stage"), Value: aws.String("llm")}, {Name: aws.String("PromptVersion"), Value: aws.String(result.StablePromptVersion)}}
	for _, tt := range []struct {
		alarm, metric string
		value         float64 // one job's value, breaching the SLO
		data          []cwtypes.MetricDatum
	}{
		{alarm: "ValidFindingsSloAlarm" + id, metric: "ReviewValidFindings", value: 0},     // SLO: at least 0.1 per job
		{alarm: "DroppedFindingsSloAlarm" + id, metric: "ReviewFindingsDropped", value: 3}, // SLO: at most 0.5 per job
		// Acceptance (cdk.json local acceptanceAlarmThreshold 0.3): a day
		// of findings reviewers dismissed, as the settled fates emit it.
		{alarm: "AcceptanceAlarm", data: settledData(t, 1, 9)},
	} {
		before := alarmNamed(ctx, t, cw, tt.alarm)
		if before.StateValue == cwtypes.StateValueAlarm {
			t.Fatalf("%s is in ALARM before any breaching data", tt.alarm)
		}
		if len(before.AlarmActions) != 1 || before.AlarmActions[0] != env.out["AlarmTopicArn"] {
			t.Errorf("%s actions %v, want the alarm topic %s", tt.alarm, before.AlarmActions, env.out["AlarmTopicArn"])
		}
		data := tt.data
		for i := 0; tt.metric != "" && i < 5; i++ {
			data = append(data, cwtypes.MetricDatum{MetricName: aws.String(tt.metric), Value: aws.Float64(tt.value), Unit: cwtypes.StandardUnitCount,
				Timestamp: aws.Time(time.Now()), Dimensions: perJob})
		}
		if _, err := cw.PutMetricData(ctx, &cloudwatch.PutMetricDataInput{Namespace: aws.String("Criticizer"), MetricData: data}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for a := alarmNamed(ctx, t, cw, tt.alarm); a.StateValue != cwtypes.StateValueAlarm; a = alarmNamed(ctx, t, cw, tt.alarm) {
			if time.Now().After(deadline) {
				t.Fatalf("%s stayed %s after jobs breaching its SLO (%s)", tt.alarm, a.StateValue, aws.ToString(a.StateReason))
			}
			time.Sleep(200 * time.Millisecond) // polling the emulator's state, not waiting for an event
		}
	}
}

// alarmNamed finds the deployed alarm whose logical name is id (CDK names
// it <stack>-<id>-<suffix>).
func alarmNamed(ctx context.Context, t *testing.T, cw *cloudwatch.Client, id string) cwtypes.MetricAlarm {
	t.Helper()
	out, err := cw.DescribeAlarms(ctx, &cloudwatch.DescribeAlarmsInput{})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range out.MetricAlarms {
		if strings.Contains(aws.ToString(a.AlarmName), id) {
			return a
		}
	}
	t.Fatalf("no alarm %s deployed (of %d)", id, len(out.MetricAlarms))
	return cwtypes.MetricAlarm{}
}

// settledData is what CloudWatch makes of the EMF lines outcome.Settled
// writes for accepted and dismissed findings in the local environment: one
// datum per line and dimension set (the EMF specification: each metric of
// a record, per dimension set, becomes a data point).
func settledData(t *testing.T, accepted, dismissed int) []cwtypes.MetricDatum {
	t.Helper()
	var buf bytes.Buffer
	m := obs.NewMetrics(&buf, "local")
	rec := outcome.Record{PromptVersion: result.StablePromptVersion, Model: "local-test-model"}
	for i := range accepted + dismissed {
		to := outcome.Dismissed
		if i < accepted {
			to = outcome.Addressed
		}
		outcome.Settled(m, rec, outcome.Open, to)
	}
	var data []cwtypes.MetricDatum
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		var rec map[string]any
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatal(err)
		}
		cwm := rec["_aws"].(map[string]any)["CloudWatchMetrics"].([]any)[0].(map[string]any)
		var dims []cwtypes.Dimension
		for _, k := range cwm["Dimensions"].([]any)[0].([]any) {
			dims = append(dims, cwtypes.Dimension{Name: aws.String(k.(string)), Value: aws.String(rec[k.(string)].(string))})
		}
		data = append(data, cwtypes.MetricDatum{MetricName: aws.String(outcome.AcceptanceMetric), Value: aws.Float64(rec[outcome.AcceptanceMetric].(float64)),
			Unit: cwtypes.StandardUnitCount, Timestamp: aws.Time(time.Now()), Dimensions: dims})
	}
	return data
}
