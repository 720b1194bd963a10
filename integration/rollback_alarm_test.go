//go:build integration

package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/criticizer/criticizer/shared/result"
)

// TestRollbackAlarmsFire: the deployed rollback alarms of the stable prompt
// (cdk.json's local validFindingsSlo and droppedFindingsSlo) go to ALARM,
// with the alarm topic as their action, when the llm stage's per-job
// metrics breach the SLOs. The emulator evaluates an alarm on every
// PutMetricData over the points of its namespace and metric name within
// Period × EvaluationPeriods (MiniStack's cloudwatch service; it does not
// filter by dimension nor count DatapointsToAlarm), so the test puts
// breaching points only.
//
// The rollback alarm on acceptance, AcceptanceAlarm, is metric math (a
// share with a minimum sample), which MiniStack's CloudFormation rejects:
// the harness deploys without it (metricMathAlarms=false), as the test
// checks, and infra's TestAcceptanceAlarm fires it by evaluating its
// synthesized expression over the metrics outcome.FateMoved writes.
func TestRollbackAlarmsFire(t *testing.T) {
	ctx := context.Background()
	cw := cloudwatch.NewFromConfig(env.local.AWS)
	id := strings.ReplaceAll(result.StablePromptVersion, ".", "x")
	all, err := cw.DescribeAlarms(ctx, &cloudwatch.DescribeAlarmsInput{})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range all.MetricAlarms {
		if strings.Contains(aws.ToString(a.AlarmName), "AcceptanceAlarm") {
			t.Errorf("%s deployed on the emulator, which evaluates no metric math: its state would mean nothing", aws.ToString(a.AlarmName))
		}
	}
	perJob := []cwtypes.Dimension{{Name: aws.String("Environment"), Value: aws.String("local")},
		{Name: aws.String("Stage"), Value: aws.String("llm")}, {Name: aws.String("PromptVersion"), Value: aws.String(result.StablePromptVersion)}}
	for _, tt := range []struct {
		alarm, metric string
		value         float64 // one job's value, breaching the SLO
	}{
		{alarm: "ValidFindingsSloAlarm" + id, metric: "ReviewValidFindings", value: 0},     // SLO: at least 0.1 per job
		{alarm: "DroppedFindingsSloAlarm" + id, metric: "ReviewFindingsDropped", value: 3}, // SLO: at most 0.5 per job
	} {
		before := alarmNamed(ctx, t, cw, tt.alarm)
		if before.StateValue == cwtypes.StateValueAlarm {
			t.Fatalf("%s is in ALARM before any breaching data", tt.alarm)
		}
		if len(before.AlarmActions) != 1 || before.AlarmActions[0] != env.out["AlarmTopicArn"] {
			t.Errorf("%s actions %v, want the alarm topic %s", tt.alarm, before.AlarmActions, env.out["AlarmTopicArn"])
		}
		var data []cwtypes.MetricDatum
		for range 5 {
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
