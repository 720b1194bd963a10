package main

import (
	"encoding/json"
	"strings"
	"testing"
)

var digestOn = map[string]any{"weeklyDigest": true, "recipientDomains": []string{"studio.test"},
	"digestOwners": map[string]any{"//depot/engine/...": []string{"lead@studio.test", "other@studio.test"}},
	"digestOptIn":  []string{"lead@studio.test"}}

// TestDigestOnlyWhereEnabled synthesizes dev, staging and prod as checked
// in (digest off) and each with the digest on: the digest function, its
// weekly schedule, the review's week entry (decided and written by the
// review function; notify never touches the digest) exist exactly when
// weeklyDigest is set, and the function reads keyed items, never a scan.
func TestDigestOnlyWhereEnabled(t *testing.T) {
	for _, env := range []string{"dev", "staging", "prod"} {
		for _, on := range []bool{false, true} {
			t.Run(env+map[bool]string{false: " as checked in", true: " turned on"}[on], func(t *testing.T) {
				ctx := cdkContext(t)
				ctx[ctxEnv] = env
				delete(ctx, ctxAssetRoot)
				over := map[string]any{"p4LayerPath": fakeLayer(t), "p4LayerSha256": fakeLayerSHA256}
				if on {
					for k, v := range digestOn {
						over[k] = v
					}
				}
				ctx[ctxOverrides] = over
				_, m := synth(t, ctx)
				res := resources(m)
				_, fn := res["DigestFunction"]
				_, rule := res["DigestSchedule"]
				_, flag := envVars(m, "ReviewFunction")["WEEKLY_DIGEST"]
				writes := func(fn string) bool {
					w := false
					for _, st := range policyStatements(t, m, fn) {
						cond, _ := json.Marshal(st["Condition"])
						for _, a := range stringsOf(st["Action"]) {
							w = w || (a == "dynamodb:PutItem" && strings.Contains(string(cond), `"DIGEST#*"`))
						}
					}
					return w
				}
				if fn != on || rule != on || flag != on || writes("ReviewFunction") != on {
					t.Fatalf("function %v, schedule %v, review WEEKLY_DIGEST %v, review writes DIGEST# %v; want all %v", fn, rule, flag, writes("ReviewFunction"), on)
				}
				if writes("NotifyFunction") {
					t.Fatal("notify may write DIGEST#: the week entry is the review function's to record")
				}
				if !on {
					return
				}
				p := props(m, "DigestSchedule")
				targets, _ := json.Marshal(p["Targets"])
				if p["ScheduleExpression"] != "cron(0 6 ? * MON *)" || !strings.Contains(string(targets), "DigestFunction") {
					t.Errorf("schedule %v targets %s: want %s on the digest function", p["ScheduleExpression"], targets, "cron(0 6 ? * MON *)")
				}
				vars := envVars(m, "DigestFunction")
				if vars["DIGEST_OPT_IN"] != "lead@studio.test" || !strings.Contains(vars["DIGEST_OWNERS"].(string), `"//depot/engine/..."`) {
					t.Errorf("digest function environment %v", vars)
				}
				for _, st := range policyStatements(t, m, "DigestFunction") {
					for _, a := range stringsOf(st["Action"]) {
						cond, _ := json.Marshal(st["Condition"])
						if a == "dynamodb:Scan" || (strings.HasPrefix(a, "dynamodb:") && !strings.Contains(string(cond), "dynamodb:LeadingKeys")) {
							t.Errorf("the digest function may %s with %s: it reads keyed items only", a, cond)
						}
					}
				}
			})
		}
	}
}

func TestDigestSettingsValidated(t *testing.T) {
	with := func(k string, v any) map[string]any {
		o := map[string]any{}
		for kk, vv := range digestOn {
			o[kk] = vv
		}
		o[k] = v
		return o
	}
	for _, c := range []struct {
		over map[string]any
		want string
	}{
		{with("digestOptIn", []string{}), "digestOptIn is empty"},
		{with("digestOptIn", []string{"nobody@studio.test"}), "owns no path"},
		{with("digestOwners", map[string]any{"//depot/engine": []string{"lead@studio.test"}}), "digestOwners"},
		{with("recipientDomains", []string{"corp.test"}), "outside recipientDomains"},
		{with("digestSchedule", "every monday"), "digestSchedule"},
	} {
		over := map[string]any{"p4LayerPath": fakeLayer(t), "p4LayerSha256": fakeLayerSHA256}
		for k, v := range c.over {
			over[k] = v
		}
		_, _, err := LoadConfig(testApp(t, map[string]any{ctxEnv: "prod", ctxOverrides: over}).Node())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err %v, want one naming %q", c.over, err, c.want)
		}
	}
}
