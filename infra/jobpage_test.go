package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/settings"
)

func envVars(m map[string]any, fnID string) map[string]any {
	env, _ := props(m, fnID)["Environment"].(map[string]any)
	vars, _ := env["Variables"].(map[string]any)
	return vars
}

// TestJobPageOnlyWhereEnabled synthesizes every AWS environment from
// cdk.json as checked in (dev on, staging and prod off), and prod with the
// page turned on: the secret, function, route and the link-minting grants
// exist exactly when the environment sets jobPage.
func TestJobPageOnlyWhereEnabled(t *testing.T) {
	cases := []struct {
		name, env string
		over      map[string]any
		want      bool
	}{
		{"dev as checked in", "dev", nil, true},
		{"staging as checked in", "staging", nil, false},
		{"prod as checked in", "prod", nil, false},
		{"prod turned on, custom domain", "prod", map[string]any{"jobPage": true, "publicBaseUrl": "https://reviews.example.com/prod"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := cdkContext(t)
			ctx[ctxEnv] = tc.env
			delete(ctx, ctxAssetRoot) // dummy bootstraps
			over := map[string]any{"p4LayerPath": fakeLayer(t), "p4LayerSha256": fakeLayerSHA256}
			for k, v := range tc.over {
				over[k] = v
			}
			ctx[ctxOverrides] = over
			_, m := synth(t, ctx)
			res := resources(m)
			_, fn := res["JobPageFunction"]
			_, secret := res["JobPageSecret"]
			route := false
			for _, r := range res {
				if r["Type"] == "AWS::ApiGateway::Resource" && r["Properties"].(map[string]any)["PathPart"] == "view" {
					route = true
				}
			}
			if fn != tc.want || secret != tc.want || route != tc.want {
				t.Fatalf("function %v, secret %v, /view route %v; want all %v", fn, secret, route, tc.want)
			}
			for _, minter := range []string{"WebhookFunction", "ReviewFunction"} {
				_, hasKey := envVars(m, minter)["JOB_PAGE_SECRET_ID"]
				reads := allowed(grants(t, m, minter), "secretsmanager:GetSecretValue", "JobPageSecret")
				if hasKey != tc.want || reads != tc.want {
					t.Errorf("%s: JOB_PAGE_SECRET_ID set %v, reads the page secret %v; want %v", minter, hasKey, reads, tc.want)
				}
			}
			if !tc.want {
				return
			}
			if _, reads := envVars(m, "NotifyFunction")["JOB_PAGE_SECRET_ID"]; reads {
				t.Error("notify reads the page key: the link is minted with the decided review")
			}
			base, _ := json.Marshal(envVars(m, "ReviewFunction")["JOB_PAGE_BASE_URL"])
			if want := tc.over["publicBaseUrl"]; want != nil && string(base) != `"`+want.(string)+`"` {
				t.Errorf("review JOB_PAGE_BASE_URL = %s, want %v", base, want)
			} else if want == nil && !strings.Contains(string(base), `"Api"`) {
				t.Errorf("review JOB_PAGE_BASE_URL = %s, want the API's own URL", base)
			}
			assertPageFunctionReadOnly(t, m)
			// prod encrypts the table and the artifacts with its own key:
			// without kms:Decrypt every page would fail to read its job.
			_, hasKey := res["DataKey"]
			if decrypts := allowed(grants(t, m, "JobPageFunction"), "kms:Decrypt", "DataKey"); decrypts != hasKey {
				t.Errorf("the page function may decrypt with the data key: %v; the environment has one: %v", decrypts, hasKey)
			}
		})
	}
}

// assertPageFunctionReadOnly: the page function reads one job item or one
// job's delivery rows per request, the stored review results and its key —
// nothing else, and nothing it could write with.
func assertPageFunctionReadOnly(t *testing.T, m map[string]any) {
	t.Helper()
	sts := policyStatements(t, m, "JobPageFunction")
	if len(sts) == 0 {
		t.Fatal("the page function has no policy")
	}
	seen := map[string]bool{}
	for _, st := range sts {
		res, _ := json.Marshal(st["Resource"])
		cond, _ := json.Marshal(st["Condition"])
		for _, a := range stringsOf(st["Action"]) {
			seen[a] = true
			switch a {
			case "dynamodb:GetItem":
				if !strings.Contains(string(res), `"JobsTable"`) || strings.Contains(string(res), "/index/") || string(cond) != `{"ForAllValues:StringLike":{"dynamodb:LeadingKeys":["JOB#*"]}}` {
					t.Errorf("GetItem on %s when %s: want the jobs table, job items only", res, cond)
				}
			case "dynamodb:Query":
				okCond := string(cond) == `{"ForAllValues:StringLike":{"dynamodb:LeadingKeys":["OUTBOX#*"]}}` ||
					string(cond) == `{"ForAllValues:StringLike":{"dynamodb:LeadingKeys":["OUTCOME#review#*","OUTCOME#cl#*"]}}`
				if !strings.Contains(string(res), `"JobsTable"`) || !okCond {
					t.Errorf("Query on %s when %s: want the jobs table, delivery rows or finding outcomes only", res, cond)
				}
				seen[string(cond)] = true
			case "s3:GetObject":
				if !strings.Contains(string(res), `"RedactedArtifacts"`) || !strings.Contains(string(res), "/jobs/*/review.json") || strings.Contains(string(res), `"RawArtifacts"`) {
					t.Errorf("s3:GetObject on %s: want the redacted bucket's review results only", res)
				}
			case "secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret":
				if !strings.Contains(string(res), `"JobPageSecret"`) {
					t.Errorf("%s on %s: want the page secret only", a, res)
				}
			case "kms:Decrypt":
				if !strings.Contains(string(res), `"DataKey"`) {
					t.Errorf("kms:Decrypt on %s: want the data key only", res)
				}
			default:
				t.Errorf("the page function may not %s (on %s)", a, res)
			}
		}
	}
	if !seen[`{"ForAllValues:StringLike":{"dynamodb:LeadingKeys":["OUTCOME#review#*","OUTCOME#cl#*"]}}`] {
		t.Error("the page function may not read finding outcomes: its acceptance section cannot be served")
	}
	for _, a := range []string{"dynamodb:GetItem", "dynamodb:Query", "s3:GetObject", "secretsmanager:GetSecretValue"} {
		if !seen[a] {
			t.Errorf("the page function lacks %s: the page cannot be served", a)
		}
	}
	vars := envVars(m, "JobPageFunction")
	keys := make([]string, 0, len(vars))
	for k := range vars {
		// Its settings are those declared with it (TestEachFunctionGetsExactlyItsSettings).
		if _, setting := settings.Variable(k); !setting || k == "JOB_PAGE_SECRET_ID" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	if want := []string{"CRITICIZER_ENV", "JOBS_TABLE", "JOB_PAGE_SECRET_ID", "REDACTED_BUCKET"}; !slices.Equal(keys, want) {
		t.Errorf("page function environment %v, want %v (no queue, no raw bucket, no other secret)", keys, want)
	}
}

func TestJobPageSettingsValidated(t *testing.T) {
	bad := []struct {
		env  string
		over map[string]any
		want string
	}{
		{"prod", map[string]any{"publicBaseUrl": "https://reviews.example.com"}, "jobPage is off"},
		{"prod", map[string]any{"jobPage": true, "publicBaseUrl": "http://reviews.example.com"}, "want https"},
		{"prod", map[string]any{"jobPage": true, "publicBaseUrl": "https://u:p@reviews.example.com"}, "publicBaseUrl"},
		{"prod", map[string]any{"jobPage": true, "publicBaseUrl": "reviews.example.com/prod"}, "publicBaseUrl"},
		{"prod", map[string]any{"jobPage": "yes"}, "jobPage"},
	}
	for _, c := range bad {
		over := map[string]any{"p4LayerPath": fakeLayer(t), "p4LayerSha256": fakeLayerSHA256}
		for k, v := range c.over {
			over[k] = v
		}
		ctx := map[string]any{ctxEnv: c.env, ctxOverrides: over}
		_, _, err := LoadConfig(testApp(t, ctx).Node())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err %v, want one naming %q", c.over, err, c.want)
		}
	}
	ok := map[string]any{ctxEnv: "local", ctxOverrides: map[string]any{"jobPage": true, "publicBaseUrl": "http://127.0.0.1:4566/_aws/execute-api/x/local"}}
	if _, _, err := LoadConfig(testApp(t, ok).Node()); err != nil {
		t.Errorf("local may use http: %v", err)
	}
}
