package main

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestReviewSizedToWaitOutRateLimits: in every environment as checked in,
// the llm function runs long enough to wait out a provider's rate limits
// inside one attempt, its queue's visibility timeout is at least its
// timeout (AWS requires it for the event source mapping), and the function
// is told that visibility so it shortens each claimed message's to the
// lease; the other stages keep visibility = lease = timeout. Configured
// provider limits reach the function; bad ones are refused at synth.
func TestReviewSizedToWaitOutRateLimits(t *testing.T) {
	checkedIn := cdkContext(t)
	for _, env := range knownEnvs {
		t.Run(env, func(t *testing.T) {
			ctx := map[string]any{}
			for k, v := range checkedIn {
				ctx[k] = v
			}
			ctx[ctxEnv] = env
			over := map[string]any{"llmTokensPerMinute": 450000, "llmPricesPerMTok": "input=3,output=15"}
			if env != "local" {
				over["p4LayerPath"], over["p4LayerSha256"] = fakeLayer(t), fakeLayerSHA256
			}
			ctx[ctxOverrides] = over
			delete(ctx, ctxAssetRoot)
			_, m := synth(t, ctx)
			_, cfg, err := LoadConfig(testApp(t, map[string]any{ctxEnv: env, ctxOverrides: over,
				ctxEnvironments: checkedIn[ctxEnvironments]}).Node())
			if err != nil {
				t.Fatal(err)
			}
			review := props(m, "ReviewFunction")
			timeout, _ := review["Timeout"].(float64)
			visibility, _ := props(m, "LlmQueue")["VisibilityTimeout"].(float64)
			vars := review["Environment"].(map[string]any)["Variables"].(map[string]any)
			lease := float64(cfg.LeaseSeconds)
			if timeout != float64(cfg.ReviewTimeoutSeconds) || timeout <= lease {
				t.Errorf("review timeout %v, want reviewTimeoutSeconds %d, above the %v s lease", timeout, cfg.ReviewTimeoutSeconds, lease)
			}
			if env != "local" && timeout < 600 {
				t.Errorf("review timeout %v: want minutes of room to wait out per-minute limits", timeout)
			}
			if visibility < timeout {
				t.Errorf("llm queue visibility %v below the llm function's timeout %v: AWS refuses the event source mapping", visibility, timeout)
			}
			if vars["QUEUE_VISIBILITY_SECONDS"] != itoaStr(int(visibility)) || vars["LEASE_SECONDS"] != itoaStr(cfg.LeaseSeconds) {
				t.Errorf("review env QUEUE_VISIBILITY_SECONDS=%v LEASE_SECONDS=%v, want %v and %v", vars["QUEUE_VISIBILITY_SECONDS"], vars["LEASE_SECONDS"], visibility, lease)
			}
			if vars["LLM_PRICES_PER_MTOK"] != "input=3,output=15" {
				t.Errorf("prices in env: %v", vars["LLM_PRICES_PER_MTOK"])
			}
			if vars["LLM_TOKENS_PER_MINUTE"] != "450000" || vars["LLM_REQUESTS_PER_MINUTE"] != nil {
				t.Errorf("rate limits in env: tokens %v requests %v", vars["LLM_TOKENS_PER_MINUTE"], vars["LLM_REQUESTS_PER_MINUTE"])
			}
			for _, s := range []string{"Fetch", "Notify"} {
				if v := props(m, s+"Queue")["VisibilityTimeout"]; v != lease {
					t.Errorf("%sQueue visibility %v, want the lease %v", s, v, lease)
				}
			}
		})
	}

	for _, c := range []struct {
		over map[string]any
		want string
	}{
		{map[string]any{"reviewTimeoutSeconds": 5}, "reviewTimeoutSeconds 5"},
		{map[string]any{"reviewTimeoutSeconds": 901}, "reviewTimeoutSeconds 901"},
		{map[string]any{"llmTokensPerMinute": 500}, "llmTokensPerMinute 500"},
		{map[string]any{"llmRequestsPerMinute": -1}, "llmRequestsPerMinute -1"},
		{map[string]any{"llmPricesPerMTok": "input=three"}, "llmPricesPerMTok"},
	} {
		ctx := map[string]any{ctxEnv: "local", ctxOverrides: c.over}
		if _, _, err := LoadConfig(testApp(t, ctx).Node()); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one naming %q", c.over, err, c.want)
		}
	}
}

func itoaStr(n int) string { return strconv.Itoa(n) }

// TestModelCandidateHasItsOwnPricesAndLimits: in every environment, the
// model canary's own prices and limits reach the llm function beside the
// stable model's (providers price and limit each model apart), a canary
// without its own limits sends none (the function takes the stable
// model's), and bad ones are refused at synth.
func TestModelCandidateHasItsOwnPricesAndLimits(t *testing.T) {
	checkedIn := cdkContext(t)
	const candidate = "anthropic.claude-3-7-sonnet-20250219-v1:0"
	for _, env := range knownEnvs {
		for _, own := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/own terms %v", env, own), func(t *testing.T) {
				over := map[string]any{"llmModelCandidate": candidate, "llmModelCandidatePercent": 10,
					"llmPricesPerMTok": "input=0.8,output=4", "llmRequestsPerMinute": 100, "llmTokensPerMinute": 200000}
				if own {
					over["llmModelCandidatePricesPerMTok"] = "input=3,output=15"
					over["llmModelCandidateRequestsPerMinute"], over["llmModelCandidateTokensPerMinute"] = 50, 400000
				}
				if env != "local" {
					over["p4LayerPath"], over["p4LayerSha256"] = fakeLayer(t), fakeLayerSHA256
				}
				ctx := map[string]any{}
				for k, v := range checkedIn {
					ctx[k] = v
				}
				ctx[ctxEnv], ctx[ctxOverrides] = env, over
				delete(ctx, ctxAssetRoot)
				_, m := synth(t, ctx)
				vars := props(m, "ReviewFunction")["Environment"].(map[string]any)["Variables"].(map[string]any)
				want := map[string]any{"LLM_MODEL_CANDIDATE": candidate, "LLM_PRICES_PER_MTOK": "input=0.8,output=4",
					"LLM_REQUESTS_PER_MINUTE": "100", "LLM_TOKENS_PER_MINUTE": "200000",
					"LLM_MODEL_CANDIDATE_PRICES_PER_MTOK":     "input=3,output=15",
					"LLM_MODEL_CANDIDATE_REQUESTS_PER_MINUTE": "50", "LLM_MODEL_CANDIDATE_TOKENS_PER_MINUTE": "400000"}
				if !own {
					want["LLM_MODEL_CANDIDATE_PRICES_PER_MTOK"], want["LLM_MODEL_CANDIDATE_REQUESTS_PER_MINUTE"], want["LLM_MODEL_CANDIDATE_TOKENS_PER_MINUTE"] = "", nil, nil
				}
				for k, w := range want {
					if got := vars[k]; got != w && (w != "" || got != nil) {
						t.Errorf("%s = %v, want %v", k, got, w)
					}
				}
			})
		}
	}

	for _, c := range []struct {
		over map[string]any
		want string
	}{
		{map[string]any{"llmModelCandidatePricesPerMTok": "input=three"}, "llmModelCandidatePricesPerMTok"},
		{map[string]any{"llmModelCandidateTokensPerMinute": 500}, "llmModelCandidateTokensPerMinute 500"},
		{map[string]any{"llmModelCandidateRequestsPerMinute": -1}, "llmModelCandidateRequestsPerMinute -1"},
	} {
		ctx := map[string]any{ctxEnv: "local", ctxOverrides: c.over}
		if _, _, err := LoadConfig(testApp(t, ctx).Node()); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one naming %q", c.over, err, c.want)
		}
	}
}
