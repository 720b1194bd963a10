package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/result"
)

// The settings of the newer guarantees are validated at synth, each bad
// value rejected with an error that names it.
func TestGuaranteeSettings(t *testing.T) {
	checkedIn := cdkContext(t)
	layer := fakeLayer(t)
	// The checked-in dev environment with one setting changed.
	over := func(kv map[string]any) map[string]any {
		ctx := map[string]any{}
		for k, v := range checkedIn {
			ctx[k] = v
		}
		o := map[string]any{"p4LayerPath": layer, "p4LayerSha256": fakeLayerSHA256}
		for k, v := range kv {
			o[k] = v
		}
		ctx[ctxEnv], ctx[ctxOverrides] = "dev", o
		return ctx
	}
	for _, tt := range []struct {
		set  map[string]any
		want string // "" = accepted
	}{
		{map[string]any{"uniquenessRetentionDays": 0}, ""},
		{map[string]any{"uniquenessRetentionDays": 730}, ""},
		{map[string]any{"uniquenessRetentionDays": 30}, "uniquenessRetentionDays 30"},
		{map[string]any{"uniquenessRetentionDays": -1}, "uniquenessRetentionDays -1"},
		{map[string]any{"uniquenessRetentionDays": 40000}, "uniquenessRetentionDays 40000"},
		{map[string]any{"promptPatchDrift": true}, ""},
		{map[string]any{"validFindingsSlo": map[string]any{"1.0.0": 0.5}}, ""},
		{map[string]any{"validFindingsSlo": map[string]any{"1.0": 0.5}}, `validFindingsSlo key "1.0"`},
		{map[string]any{"validFindingsSlo": map[string]any{"1.0.0": 0}}, "validFindingsSlo[1.0.0] 0"},
		{map[string]any{"droppedFindingsSlo": map[string]any{"1.0.0": -1}}, "droppedFindingsSlo[1.0.0] -1"},
		// A candidate on trial needs both SLOs: promote and the alarms judge by them.
		{map[string]any{"promptCandidateVersion": "1.1.0", "promptCandidatePercent": 10}, "validFindingsSlo has no entry for prompt 1.1.0"},
		{map[string]any{"promptCandidateVersion": "1.1.0", "promptCandidatePercent": 10, "validFindingsSlo": map[string]any{"1.1.0": 0.2}},
			"droppedFindingsSlo has no entry for prompt 1.1.0"},
		{map[string]any{"promptCandidateVersion": "1.1.0", "promptCandidatePercent": 10, "validFindingsSlo": map[string]any{"1.1.0": 0.2},
			"droppedFindingsSlo": map[string]any{"1.1.0": 0.3}}, ""},
		// AcceptanceAlarm divides by the judged count once it reaches the sample.
		{map[string]any{"acceptanceAlarmMinSample": 1}, ""},
		{map[string]any{"acceptanceAlarmMinSample": 0}, "acceptanceAlarmMinSample 0"},
	} {
		ctx := over(tt.set)
		_, cfg, err := LoadConfig(testApp(t, ctx).Node())
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%v rejected: %v", tt.set, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%v: error %v, want one naming %q", tt.set, err, tt.want)
		case tt.want == "" && tt.set["uniquenessRetentionDays"] == nil && cfg.UniquenessRetentionDays != 365: // a year, as docs/guarantees.md promises
			t.Errorf("default uniquenessRetentionDays %d, want 365", cfg.UniquenessRetentionDays)
		}
	}
}

// Every checked-in environment keeps uniqueness at least a year (or
// forever), and the settings reach the functions that read them; the
// rollback alarm on valid findings per job pages per configured version.
func TestGuaranteeSettingsReachTheFunctions(t *testing.T) {
	checkedIn := cdkContext(t)
	for _, env := range knownEnvs {
		ctx := map[string]any{}
		for k, v := range checkedIn {
			ctx[k] = v
		}
		ctx[ctxEnv] = env
		if env != "local" {
			ctx[ctxOverrides] = map[string]any{"p4LayerPath": fakeLayer(t), "p4LayerSha256": fakeLayerSHA256}
		}
		_, cfg, err := LoadConfig(testApp(t, ctx).Node())
		if err != nil {
			t.Fatalf("%s: %v", env, err)
		}
		if u := cfg.UniquenessRetentionDays; u != 0 && u < 365 {
			t.Errorf("%s keeps uniqueness %d days: want at least a year", env, u)
		}
	}

	_, m := synth(t, map[string]any{ctxEnv: "local", ctxOverrides: map[string]any{
		"uniquenessRetentionDays": 0, "promptPatchDrift": true, "validFindingsSlo": map[string]any{"1.0.0": 0.5, "1.1.0": 0.4}}})
	envOf := func(fn string) map[string]any {
		return props(m, fn)["Environment"].(map[string]any)["Variables"].(map[string]any)
	}
	for _, fn := range []string{"WebhookFunction", "NotifyFunction", "SweeperFunction"} {
		if v := envOf(fn)["UNIQUENESS_RETENTION_DAYS"]; v != "0" {
			t.Errorf("%s UNIQUENESS_RETENTION_DAYS = %v, want 0 (forever)", fn, v)
		}
	}
	if v := envOf("ReviewFunction")["PROMPT_PATCH_DRIFT"]; v != "true" {
		t.Errorf("ReviewFunction PROMPT_PATCH_DRIFT = %v", v)
	}
	for id, want := range map[string]string{"ValidFindingsSloAlarm1x0x0": `"Threshold":0.5`, "ValidFindingsSloAlarm1x1x0": `"Threshold":0.4`} {
		a, _ := json.Marshal(props(m, id))
		for _, w := range []string{want, `"ComparisonOperator":"LessThanThreshold"`, `"MetricName":"ReviewValidFindings"`, `"Statistic":"Average"`, `"AlarmActions"`} {
			if !strings.Contains(string(a), w) {
				t.Errorf("%s lacks %s: %s", id, w, a)
			}
		}
	}
	_, m = synth(t, map[string]any{ctxEnv: "local"})
	if envOf := props(m, "WebhookFunction")["Environment"].(map[string]any)["Variables"].(map[string]any); envOf["UNIQUENESS_RETENTION_DAYS"] != "365" {
		t.Errorf("default UNIQUENESS_RETENTION_DAYS = %v, want 365", envOf["UNIQUENESS_RETENTION_DAYS"])
	}
}

// Every environment outside local states its rollout SLOs in cdk.json — the
// valid-findings-per-job floor and the dropped-findings-per-job ceiling of
// the stable prompt — and synthesizes the two rollback alarms with them.
func TestEveryEnvironmentStatesItsRolloutSLOs(t *testing.T) {
	checkedIn := cdkContext(t)
	envs := checkedIn[ctxEnvironments].(map[string]any)
	for _, env := range []string{"dev", "staging", "prod"} {
		stated := envs[env].(map[string]any)
		valid, _ := stated["validFindingsSlo"].(map[string]any)
		dropped, _ := stated["droppedFindingsSlo"].(map[string]any)
		if valid[result.StablePromptVersion] == nil || dropped[result.StablePromptVersion] == nil {
			t.Errorf("cdk.json %s states no rollout SLOs for prompt %s: %v / %v", env, result.StablePromptVersion, valid, dropped)
			continue
		}
		ctx := map[string]any{}
		for k, v := range checkedIn {
			ctx[k] = v
		}
		ctx[ctxEnv], ctx[ctxOverrides] = env, map[string]any{"p4LayerPath": fakeLayer(t), "p4LayerSha256": fakeLayerSHA256}
		delete(ctx, ctxAssetRoot) // synth stages dummy bootstraps
		_, m := synth(t, ctx)
		id := strings.ReplaceAll(result.StablePromptVersion, ".", "x")
		for alarm, want := range map[string][]string{
			"ValidFindingsSloAlarm" + id:   {fmt.Sprintf(`"Threshold":%v`, valid[result.StablePromptVersion]), `"ComparisonOperator":"LessThanThreshold"`, `"MetricName":"ReviewValidFindings"`},
			"DroppedFindingsSloAlarm" + id: {fmt.Sprintf(`"Threshold":%v`, dropped[result.StablePromptVersion]), `"ComparisonOperator":"GreaterThanThreshold"`, `"MetricName":"ReviewFindingsDropped"`},
		} {
			a, _ := json.Marshal(props(m, alarm))
			for _, w := range append(want, `"Statistic":"Average"`, `"AlarmActions"`, `"Value":"`+env+`"`) {
				if !strings.Contains(string(a), w) {
					t.Errorf("%s %s lacks %s: %s", env, alarm, w, a)
				}
			}
		}
	}
}
