package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/criticizer/criticizer/shared/obs"
	"github.com/criticizer/criticizer/shared/outcome"
)

// TestAcceptanceAlarm: every environment deploys the rollback alarm on
// acceptance with its own acceptanceAlarmThreshold from cdk.json, and the
// alarm as synthesized fires on a day of settled findings whose acceptance
// is below it, and only then.
//
// The alarm is evaluated here in Go from its definition (namespace, metric,
// dimensions, statistic, threshold, operator, missing data) against the EMF
// lines outcome.Settled writes, because the emulator's CloudWatch matches
// an alarm's points by namespace and metric name only, not by dimension
// (MiniStack's cloudwatch service, _evaluate_alarm), which is what would let
// a wrongly dimensioned alarm pass; integration's TestRollbackAlarmsFire
// shows the deployed alarm firing there too. CloudWatch treats each
// dimension combination as a metric of its own (User Guide, "Dimensions"),
// as the evaluation below does.
func TestAcceptanceAlarm(t *testing.T) {
	checkedIn := cdkContext(t)
	envs := checkedIn[ctxEnvironments].(map[string]any)
	var alarm map[string]any
	for _, env := range []string{"dev", "staging", "prod"} {
		stated, _ := envs[env].(map[string]any)["acceptanceAlarmThreshold"].(float64)
		if stated <= 0 {
			t.Errorf("cdk.json %s states no acceptanceAlarmThreshold", env)
			continue
		}
		ctx := map[string]any{}
		for k, v := range checkedIn {
			ctx[k] = v
		}
		ctx[ctxEnv], ctx[ctxOverrides] = env, map[string]any{"p4LayerPath": fakeLayer(t), "p4LayerSha256": fakeLayerSHA256}
		delete(ctx, ctxAssetRoot)
		_, m := synth(t, ctx)
		alarm = props(m, "AcceptanceAlarm")
		if alarm == nil {
			t.Fatalf("%s: no AcceptanceAlarm", env)
		}
		if alarm["Threshold"] != stated || alarm["ComparisonOperator"] != "LessThanThreshold" || alarm["Statistic"] != "Average" || alarm["Period"] != float64(86400) {
			t.Errorf("%s AcceptanceAlarm = %v: want the daily average below %v", env, alarm, stated)
		}
		if dims, _ := json.Marshal(alarm["Dimensions"]); string(dims) != `[{"Name":"Environment","Value":"`+env+`"}]` {
			t.Errorf("%s AcceptanceAlarm dimensions %s: want this environment's only", env, dims)
		}
		if acts, _ := alarm["AlarmActions"].([]any); len(acts) == 0 {
			t.Errorf("%s AcceptanceAlarm pages nobody", env)
		}
	}
	if alarm == nil {
		return
	}
	threshold := alarm["Threshold"].(float64) // prod's
	day := func(accepted, dismissed int) []byte {
		var buf bytes.Buffer
		m := obs.NewMetrics(&buf, "prod")
		rec := outcome.Record{PromptVersion: "1.1.0", Model: "claude"}
		for range accepted {
			outcome.Settled(m, rec, outcome.Open, outcome.Addressed)
		}
		for range dismissed {
			outcome.Settled(m, rec, outcome.Open, outcome.Dismissed)
		}
		return buf.Bytes()
	}
	for _, tt := range []struct {
		name                string
		accepted, dismissed int
		fires               bool
	}{
		{"acceptance below the threshold", 2, 8, true},
		{"acceptance at the threshold's level or above", 5, 5, false},
		{"no settled findings (missing data)", 0, 0, false},
	} {
		if got := fires(t, alarm, day(tt.accepted, tt.dismissed)); got != tt.fires {
			t.Errorf("%s (%d accepted, %d dismissed, threshold %v): fires %v, want %v", tt.name, tt.accepted, tt.dismissed, threshold, got, tt.fires)
		}
	}
}

// fires evaluates a one-period metric alarm's definition over EMF lines
// all in its period: the points of its namespace, metric and exact
// dimension set, reduced by its statistic and compared with its threshold;
// no point is missing data, which breaches only when the alarm says so.
func fires(t *testing.T, alarm map[string]any, lines []byte) bool {
	t.Helper()
	want := map[string]string{}
	for _, d := range alarm["Dimensions"].([]any) {
		d := d.(map[string]any)
		want[d["Name"].(string)] = d["Value"].(string)
	}
	metric := alarm["MetricName"].(string)
	var sum, n float64
	for _, line := range bytes.Split(bytes.TrimSpace(lines), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatal(err)
		}
		cwm := rec["_aws"].(map[string]any)["CloudWatchMetrics"].([]any)[0].(map[string]any)
		keys := cwm["Dimensions"].([]any)[0].([]any)
		same := cwm["Namespace"] == alarm["Namespace"] && len(keys) == len(want)
		for _, k := range keys {
			same = same && rec[k.(string)] == want[k.(string)]
		}
		if v, ok := rec[metric].(float64); ok && same {
			sum += v
			n++
		}
	}
	if n == 0 {
		return alarm["TreatMissingData"] == "breaching"
	}
	var stat float64
	switch alarm["Statistic"] {
	case "Average":
		stat = sum / n
	case "Sum":
		stat = sum
	default:
		t.Fatalf("statistic %v not evaluated here", alarm["Statistic"])
	}
	th := alarm["Threshold"].(float64)
	switch op := alarm["ComparisonOperator"]; op {
	case "LessThanThreshold":
		return stat < th
	case "GreaterThanThreshold":
		return stat > th
	default:
		panic(fmt.Sprint("operator not evaluated here: ", op))
	}
}
