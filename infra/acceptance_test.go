package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"

	"github.com/criticizer/criticizer/shared/obs"
	"github.com/criticizer/criticizer/shared/outcome"
)

// TestAcceptanceAlarm: every environment deploys the rollback alarm on
// acceptance with its own acceptanceAlarmThreshold and
// acceptanceAlarmMinSample from cdk.json, and the alarm as synthesized
// fires on a day of at least the minimum sample of judged findings whose
// acceptance is below the threshold, and only then: a day with fewer
// judged findings stays OK however they went, and a finding that flips
// class (liked, then dismissed) counts once.
//
// The alarm is evaluated here in Go from its definition (metric math
// expression, the namespace, metrics, dimensions and statistics it reads,
// threshold, operator, missing data) against the EMF lines outcome.FateMoved
// writes, because the emulator evaluates no metric-math alarm (MiniStack's
// CloudFormation rejects one, so the harness deploys without it: infra's
// metricMathAlarms) and matches an alarm's points by namespace and metric
// name only, not by dimension (MiniStack's cloudwatch service,
// _evaluate_alarm). CloudWatch treats each dimension combination as a
// metric of its own (User Guide, "Dimensions"), as the evaluation below
// does.
func TestAcceptanceAlarm(t *testing.T) {
	checkedIn := cdkContext(t)
	envs := checkedIn[ctxEnvironments].(map[string]any)
	var alarm map[string]any
	for _, env := range []string{"dev", "staging", "prod"} {
		stated, _ := envs[env].(map[string]any)["acceptanceAlarmThreshold"].(float64)
		sample, _ := envs[env].(map[string]any)["acceptanceAlarmMinSample"].(float64)
		if stated <= 0 || sample < 1 {
			t.Errorf("cdk.json %s states no acceptanceAlarmThreshold or acceptanceAlarmMinSample", env)
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
		if alarm["Threshold"] != stated || alarm["ComparisonOperator"] != "LessThanThreshold" || alarm["EvaluationPeriods"] != float64(1) {
			t.Errorf("%s AcceptanceAlarm = %v: want one day's acceptance below %v", env, alarm, stated)
		}
		want := fmt.Sprintf("IF(judged >= %d, accepted / judged, 1)", int(sample))
		if e, _ := expression(alarm); e["Expression"] != want {
			t.Errorf("%s AcceptanceAlarm expression %v: want %s", env, e["Expression"], want)
		}
		for _, q := range alarm["Metrics"].([]any) {
			q := q.(map[string]any)
			ms, ok := q["MetricStat"].(map[string]any)
			if !ok {
				continue
			}
			if dims, _ := json.Marshal(ms["Metric"].(map[string]any)["Dimensions"]); string(dims) != `[{"Name":"Environment","Value":"`+env+`"}]` || ms["Period"] != float64(86400) || ms["Stat"] != "Sum" {
				t.Errorf("%s AcceptanceAlarm reads %v: want the daily Sum of this environment's only", env, ms)
			}
		}
		if acts, _ := alarm["AlarmActions"].([]any); len(acts) == 0 {
			t.Errorf("%s AcceptanceAlarm pages nobody", env)
		}
	}
	if alarm == nil {
		return
	}
	// prod's alarm, over a day of fates judged in prod.
	day := func(accepted, dismissed, flipped int) []byte {
		var buf bytes.Buffer
		m := obs.NewMetrics(&buf, "prod")
		rec := outcome.Record{PromptVersion: "1.1.0", Model: "claude"}
		for range accepted {
			outcome.FateMoved(m, rec, outcome.Open, outcome.Addressed)
		}
		for range dismissed {
			outcome.FateMoved(m, rec, outcome.Open, outcome.Dismissed)
		}
		for range flipped { // liked, then argued with, the same day
			outcome.FateMoved(m, rec, outcome.Open, outcome.Liked)
			outcome.FateMoved(m, rec, outcome.Liked, outcome.Dismissed)
		}
		return buf.Bytes()
	}
	threshold, sample := alarm["Threshold"].(float64), int(envs["prod"].(map[string]any)["acceptanceAlarmMinSample"].(float64))
	few := sample - 1
	for _, tt := range []struct {
		name                         string
		accepted, dismissed, flipped int
		fires                        bool
	}{
		{"enough judged, acceptance below the threshold", 2, sample, 0, true},
		{"enough judged, acceptance at the threshold's level or above", sample, sample, 0, false},
		{"fewer judged than the minimum sample, all dismissed", 0, few, 0, false},
		{"one dismissed finding", 0, 1, 0, false},
		// Each flip is one judged finding, not accepted: counted twice it
		// would make the sample (2 × few) and the share (few of 2 × few).
		{"flips counted once: below the sample", 0, 0, few, false},
		{"flips counted once: enough, and none accepted", 0, 1, few, true},
		{"no judged findings (missing data)", 0, 0, 0, false},
	} {
		if got := fires(t, alarm, day(tt.accepted, tt.dismissed, tt.flipped)); got != tt.fires {
			t.Errorf("%s (%d accepted, %d dismissed, %d flipped; threshold %v, sample %d): fires %v, want %v", tt.name, tt.accepted, tt.dismissed, tt.flipped, threshold, sample, got, tt.fires)
		}
	}
}

// expression returns the alarm's one returned metric-math query and the
// metric queries it reads, by id.
func expression(alarm map[string]any) (map[string]any, map[string]map[string]any) {
	var expr map[string]any
	stats := map[string]map[string]any{}
	for _, q := range alarm["Metrics"].([]any) {
		q := q.(map[string]any)
		if ms, ok := q["MetricStat"].(map[string]any); ok {
			stats[q["Id"].(string)] = ms
		} else if q["ReturnData"] != false {
			expr = q
		}
	}
	return expr, stats
}

// fires evaluates a one-period metric-math alarm's definition over EMF
// lines all in its period: each metric query's points of its namespace,
// metric and exact dimension set reduced by its stat, then the expression
// over them, compared with the threshold; no point in any query is
// missing data, which breaches only when the alarm says so.
func fires(t *testing.T, alarm map[string]any, lines []byte) bool {
	t.Helper()
	expr, stats := expression(alarm)
	if expr == nil || len(stats) == 0 {
		t.Fatalf("alarm %v is not a metric-math alarm", alarm)
	}
	values := map[string]float64{}
	for id, ms := range stats {
		sum, n := reduce(t, ms, lines)
		if n == 0 {
			return alarm["TreatMissingData"] == "breaching"
		}
		switch ms["Stat"] {
		case "Sum":
			values[id] = sum
		case "Average":
			values[id] = sum / n
		default:
			t.Fatalf("stat %v not evaluated here", ms["Stat"])
		}
	}
	v := evaluate(t, expr["Expression"].(string), values)
	th := alarm["Threshold"].(float64)
	switch op := alarm["ComparisonOperator"]; op {
	case "LessThanThreshold":
		return v < th
	case "GreaterThanThreshold":
		return v > th
	default:
		panic(fmt.Sprint("operator not evaluated here: ", op))
	}
}

// reduce adds up the points of one metric query (a MetricStat) in EMF
// lines: their sum and count.
func reduce(t *testing.T, ms map[string]any, lines []byte) (sum, n float64) {
	t.Helper()
	metric := ms["Metric"].(map[string]any)
	want := map[string]string{}
	for _, d := range metric["Dimensions"].([]any) {
		d := d.(map[string]any)
		want[d["Name"].(string)] = d["Value"].(string)
	}
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
		same := cwm["Namespace"] == metric["Namespace"] && len(keys) == len(want)
		for _, k := range keys {
			same = same && rec[k.(string)] == want[k.(string)]
		}
		if v, ok := rec[metric["MetricName"].(string)].(float64); ok && same {
			sum += v
			n++
		}
	}
	return sum, n
}

// evaluate computes a metric-math expression of one period's values: the
// subset the alarms use — numbers, query ids, + - * /, comparisons and
// IF(condition, trueValue, falseValue) (CloudWatch User Guide, "Using
// metric math", "Metric math syntax and functions"). Its syntax is Go's
// expression syntax, so go/parser reads it; anything else fails the test.
func evaluate(t *testing.T, expr string, values map[string]float64) float64 {
	t.Helper()
	tree, err := parser.ParseExpr(expr)
	if err != nil {
		t.Fatalf("expression %q: %v", expr, err)
	}
	var eval func(ast.Expr) float64
	truth := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	eval = func(e ast.Expr) float64 {
		switch e := e.(type) {
		case *ast.ParenExpr:
			return eval(e.X)
		case *ast.BasicLit:
			v, err := strconv.ParseFloat(e.Value, 64)
			if err != nil {
				t.Fatalf("expression %q: %v", expr, err)
			}
			return v
		case *ast.Ident:
			v, ok := values[e.Name]
			if !ok {
				t.Fatalf("expression %q reads %s, which no query of the alarm defines", expr, e.Name)
			}
			return v
		case *ast.CallExpr:
			if fn, _ := e.Fun.(*ast.Ident); fn != nil && fn.Name == "IF" && len(e.Args) == 3 {
				if eval(e.Args[0]) != 0 {
					return eval(e.Args[1])
				}
				return eval(e.Args[2])
			}
		case *ast.BinaryExpr:
			x, y := eval(e.X), eval(e.Y)
			switch e.Op {
			case token.ADD:
				return x + y
			case token.SUB:
				return x - y
			case token.MUL:
				return x * y
			case token.QUO:
				return x / y
			case token.GEQ:
				return truth(x >= y)
			case token.GTR:
				return truth(x > y)
			case token.LEQ:
				return truth(x <= y)
			case token.LSS:
				return truth(x < y)
			}
		}
		t.Fatalf("expression %q: %T not evaluated here", expr, e)
		return 0
	}
	return eval(tree)
}
