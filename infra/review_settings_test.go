package main

import (
	"strings"
	"testing"

	"github.com/aws/jsii-runtime-go"
)

// envContext is cdk.json's context (cdkContext) for env, with a p4 layer
// outside local.
func envContext(t *testing.T, env string) map[string]any {
	t.Helper()
	ctx := cdkContext(t)
	ctx[ctxEnv] = env
	delete(ctx, ctxAssetRoot)
	if env != "local" {
		ctx[ctxOverrides] = map[string]any{"p4LayerPath": fakeLayer(t), "p4LayerSha256": fakeLayerSHA256, "smtpHost": "smtp.example.com"}
	}
	return ctx
}

// TestReviewSettingsPerEnvironment: dev, staging and prod set a review token
// budget, a daily budget with its 80 % alarm, and default review rules from
// cdk.json, and the llm function gets them.
func TestReviewSettingsPerEnvironment(t *testing.T) {
	for _, env := range []string{"dev", "staging", "prod"} {
		t.Run(env, func(t *testing.T) {
			tmpl, m := synth(t, envContext(t, env))
			check(t, "daily budget alarm", func() {
				tmpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), map[string]any{
					"MetricName": "DailyTokenBudgetUsedPercent", "Namespace": "Criticizer", "Threshold": 80,
					"ComparisonOperator": "GreaterThanOrEqualToThreshold", "Statistic": "Maximum",
					"Dimensions": []any{map[string]any{"Name": "Environment", "Value": env}},
				})
			})
			vars, _ := props(m, "ReviewFunction")["Environment"].(map[string]any)["Variables"].(map[string]any)
			for _, k := range []string{"REVIEW_MAX_TOKENS", "REVIEW_DAILY_TOKEN_BUDGET", "REVIEW_RULES"} {
				if s, _ := vars[k].(string); s == "" {
					t.Errorf("%s unset: %v", k, vars)
				}
			}
			if !strings.Contains(vars["REVIEW_RULES"].(string), `"max_findings":25`) {
				t.Errorf("REVIEW_RULES = %v", vars["REVIEW_RULES"])
			}
		})
	}
}

// TestReviewSettingsValidated: bad review settings fail the synth with an
// error naming them; without a daily budget there is no alarm.
func TestReviewSettingsValidated(t *testing.T) {
	for over, want := range map[string]string{
		`{"reviewMaxTokens": -1}`:                           "reviewMaxTokens -1",
		`{"reviewMaxChunkFiles": 20000}`:                    "reviewMaxChunkFiles 20000",
		`{"dailyTokenBudget": 100, "reviewMaxTokens": 200}`: "above dailyTokenBudget",
		`{"reviewRules": {"max_findings": 0}}`:              "reviewRules: /max_findings",
		`{"reviewRules": {"ignore": "x"}}`:                  "reviewRules: /ignore",
	} {
		app := testApp(t, map[string]any{ctxEnv: "local", ctxOverrides: over})
		if _, _, err := LoadConfig(app.Node()); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", over, err, want)
		}
	}
	tmpl, _ := synth(t, map[string]any{ctxEnv: "local"})
	check(t, "no budget, no alarm", func() {
		tmpl.ResourcePropertiesCountIs(jsii.String("AWS::CloudWatch::Alarm"), map[string]any{"MetricName": "DailyTokenBudgetUsedPercent"}, jsii.Number(0))
	})
}
