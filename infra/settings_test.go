package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/internal/fnsettings"
)

// everything sets every optional setting cdk.json has, for one e-mail and
// one LLM provider.
func everything(email, llm string) map[string]any {
	o := map[string]any{
		"swarmUrl": "https://swarm.example.com", "p4TrustFingerprint": testFingerprint, "p4Charset": "utf8", "p4Parallelism": 8, "p4MaxFileBytes": 4 << 20,
		"promptCandidateVersion": "1.1.0", "promptCandidatePercent": 10, "sendCompletionWindowSeconds": 600, "promptPatchDrift": true,
		"llmModelCandidate": "anthropic.claude-3-7-sonnet-20250219-v1:0", "llmModelCandidatePercent": 10,
		"llmModelCandidatePricesPerMTok": "input=3,cached_input=0.3,cache_write=3.75,output=15", "llmModelCandidateRequestsPerMinute": 50, "llmModelCandidateTokensPerMinute": 400000,
		"validFindingsSlo": map[string]any{"1.1.0": 0.2}, "droppedFindingsSlo": map[string]any{"1.1.0": 0.4},
		"confidentialDomains": []string{"corp.example.com"}, "confidentialCidrs": []string{"10.0.0.0/8"},
		"emailProvider": email, "llmProvider": llm, "llmEndpoint": "https://llm.example.com",
		"recipientDomains": []string{"studio.test"}, "maxRecipients": 20, "jobPage": true, "publicBaseUrl": "https://criticizer.example.com",
		"llmContextTokens": 128000, "llmBytesPerToken": 3.5, "llmRequestsPerMinute": 500, "llmTokensPerMinute": 200000, "llmPricesPerMTok": "input=3,output=15", "llmMaxOutputTokens": 8192, "llmParallelism": 8,
		"reviewMaxFiles": 1000, "reviewMaxBytes": 1 << 24, "reviewMaxFileBytes": 1 << 18, "reviewMaxChunkFiles": 50,
		"reviewMaxTokens": 200000, "dailyTokenBudget": 5000000, "reviewRules": map[string]any{"version": 1, "ignore": []string{"*.generated.cs"}},
		"notifyChannels": []string{"email", "swarm-comments"}, "swarmCommentWindowSeconds": 180, "swarmMaxInlineComments": 40,
		"swarmGateSeverity": "high", "swarmEmailParticipants": true,
		"swarmEvents": map[string]any{"enabled": true, "timestampHeader": "X-Swarm-Timestamp"}, "dismissThreshold": 4, "dismissScopeDepth": 2,
		"dismissMinPeople": 3, "dismissMinReviews": 3, "dismissDeciders": []string{"lead"}, "dismissBotLogins": []string{"lintbot"}, "dismissConfirm": true,
		"weeklyDigest": true, "digestOwners": map[string]any{"//depot/engine/...": []string{"lead@studio.test"}}, "digestOptIn": []string{"lead@studio.test"},
	}
	if email == "smtp" {
		o["smtpHost"], o["smtpLookupUrl"] = "smtp.example.com", "https://relay.example.com/lookup"
	} else {
		o["sesConfigurationSet"] = "criticizer-test"
	}
	if llm == "openai" {
		o["llmResponseFormat"] = "json_object"
	}
	return o
}

// TestEverySettingCanBeSet fails if a function reads a setting the stack
// cannot set through cdk.json, or if the stack gives a function a value its
// own loader refuses at cold start. Each function's loaders (the list its
// main must call, internal/fnsettings) run over the environment the stack
// synthesizes for it: for the checked-in environments every value must be
// accepted; with every optional cdk.json setting given, every variable a
// loader looks up must also be set.
func TestEverySettingCanBeSet(t *testing.T) {
	checkedIn := cdkContext(t)
	layer := fakeLayer(t)
	commonKeys, _ := fnsettings.Read("", map[string]string{})
	cases := []struct {
		name, env string
		overrides map[string]any
		complete  bool // every optional setting given: every variable read must be set
	}{
		{name: "dev", env: "dev"},
		{name: "staging", env: "staging"},
		{name: "prod", env: "prod"},
		{name: "everything, smtp and openai", env: "staging", overrides: everything("smtp", "openai"), complete: true},
		{name: "everything, ses and bedrock", env: "prod", overrides: everything("ses", "bedrock"), complete: true},
		{name: "everything, smtp and anthropic", env: "dev", overrides: everything("smtp", "anthropic"), complete: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := map[string]any{}
			for k, v := range checkedIn {
				ctx[k] = v
			}
			delete(ctx, ctxAssetRoot)
			ctx[ctxEnv] = tc.env
			o := map[string]any{"p4LayerPath": layer, "p4LayerSha256": fakeLayerSHA256}
			for k, v := range tc.overrides {
				o[k] = v
			}
			ctx[ctxOverrides] = o
			_, m := synth(t, ctx)
			seen := 0
			for id, r := range resources(m) {
				dir, ok := functionDirs[id]
				if !ok {
					if r["Type"] == "AWS::Lambda::Function" && !strings.HasPrefix(id, "CustomResource") && !strings.Contains(id, "Provider") {
						t.Logf("function %s is not checked (not one of functions/)", id)
					}
					continue
				}
				seen++
				env := map[string]string{}
				if e, ok := props(m, id)["Environment"].(map[string]any); ok {
					for k, v := range e["Variables"].(map[string]any) {
						if s, ok := v.(string); ok {
							env[k] = s
						} else {
							env[k] = "resolved-at-deploy" // a Ref or GetAtt: a queue URL, a secret ARN, a table name
						}
					}
				}
				keys, err := fnsettings.Read(dir, env)
				if err != nil {
					t.Errorf("%s refuses the environment the stack gives it: %v", dir, err)
				}
				if !tc.complete {
					continue
				}
				var unset []string
				for _, k := range keys {
					// The read-only job page gets only what it uses; coldstart's
					// common settings all have defaults it does not depend on.
					if dir == "jobpage" && slices.Contains(commonKeys, k) {
						continue
					}
					if _, ok := env[k]; !ok {
						unset = append(unset, k)
					}
				}
				if len(unset) > 0 {
					slices.Sort(unset)
					t.Errorf("%s reads %s, which the stack does not set even with every cdk.json setting given", dir, strings.Join(unset, ", "))
				}
			}
			if seen < 5 {
				t.Errorf("checked %d functions; want every function of functions/", seen)
			}
		})
	}
}

// TestLLMSettingsValidatedAtSynth: a model limit the llm function would
// refuse at its cold start fails the synth, with the variable named, and a
// set limit reaches the function.
func TestLLMSettingsValidatedAtSynth(t *testing.T) {
	layer, assets := fakeLayer(t), dummyAssets(t)
	vars := map[string]string{"llmContextTokens": "LLM_CONTEXT_TOKENS", "llmBytesPerToken": "LLM_BYTES_PER_TOKEN", "llmMaxOutputTokens": "LLM_MAX_OUTPUT_TOKENS",
		"llmParallelism": "LLM_PARALLELISM", "llmResponseFormat": "LLM_RESPONSE_FORMAT"}
	tests := []struct {
		name     string
		settings map[string]any
		llm      string
		want     string // "" = accepted
	}{
		{"all limits", map[string]any{"llmContextTokens": 200000, "llmBytesPerToken": 3.5, "llmMaxOutputTokens": 8192, "llmParallelism": 8, "llmResponseFormat": "json_object"}, "openai", ""},
		{"bytes per token too high", map[string]any{"llmBytesPerToken": 20}, "openai", "LLM_BYTES_PER_TOKEN"},
		{"parallelism too high", map[string]any{"llmParallelism": 1000}, "openai", "LLM_PARALLELISM"},
		{"output tokens too few", map[string]any{"llmMaxOutputTokens": 10}, "anthropic", "LLM_MAX_OUTPUT_TOKENS"},
		{"unknown response format", map[string]any{"llmResponseFormat": "text"}, "openai", "LLM_RESPONSE_FORMAT"},
		{"response format for anthropic", map[string]any{"llmResponseFormat": "json_object"}, "anthropic", "takes no response format"},
		{"negative context window", map[string]any{"llmContextTokens": -1}, "bedrock", "LLM_CONTEXT_TOKENS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := map[string]any{"p4LayerPath": layer, "p4LayerSha256": fakeLayerSHA256, "p4Port": "ssl:p4:1666", "p4TrustFingerprint": testFingerprint, "recipientDomains": []any{"studio.test"},
				"depotAllowList": []any{"//depot/a/..."}, "smtpHost": "smtp.example.com", "llmEndpoint": "https://llm.example.com", "llmProvider": tt.llm}
			for k, v := range tt.settings {
				o[k] = v
			}
			_, stack, err := newApp(t.TempDir(), withSamples(map[string]any{ctxEnv: "dev", ctxAssetRoot: assets, ctxOverrides: o}))
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("rejected: %v", err)
			case tt.want == "":
				envs, err := functionEnvs(stack)
				if err != nil {
					t.Fatal(err)
				}
				for k, v := range tt.settings {
					if _, ok := envs["llm"][vars[k]]; !ok {
						t.Errorf("%s = %v does not reach the llm function as %s", k, v, vars[k])
					}
				}
			case err == nil || !strings.Contains(err.Error(), tt.want):
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestSynthRefusesWhatAFunctionWouldRefuse: the synth runs each function's
// loaders over the environment it gives the function, so a value infra's own
// checks let through but the function would refuse at its cold start fails
// the synth, naming the function and the variable.
func TestSynthRefusesWhatAFunctionWouldRefuse(t *testing.T) {
	envs := func(overrides map[string]any) error {
		o := map[string]any{"p4LayerPath": fakeLayer(t), "p4LayerSha256": fakeLayerSHA256, "llmEndpoint": "https://api.openai.com", "p4Port": "ssl:p4:1666", "p4TrustFingerprint": testFingerprint, "recipientDomains": []any{"studio.test"}, "smtpHost": "smtp.example.com",
			"depotAllowList": []any{"//depot/projectA/..."}}
		for k, v := range overrides {
			o[k] = v
		}
		_, _, err := newApp(t.TempDir(), withSamples(map[string]any{ctxEnv: "dev", ctxOverrides: o, ctxAssetRoot: dummyAssets(t)}))
		return err
	}
	if err := envs(nil); err != nil {
		t.Fatalf("the base configuration is refused: %v", err)
	}
	tests := []struct {
		name      string
		overrides map[string]any
		want      string
	}{
		// The declared range refuses it first, in the key's and the variable's names.
		{"replay window below the webhook's minimum", map[string]any{"replayWindowSeconds": 10}, "replayWindowSeconds 10 (REPLAY_WINDOW_SECONDS): must be an integer in 30–3600"},
		{"sender without a domain", map[string]any{"smtpFrom": "criticizer"}, "SMTP_FROM"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := envs(tt.overrides); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
