package main

import (
	"testing"
)

// TestModelCanaryEnvironments: in dev, staging and prod as checked in the
// model canary is off (the llm function gets no candidate, the role may
// invoke llmModel only); with a candidate and a share set, the llm
// function gets both and its role may invoke the candidate too (Bedrock
// authorizes Converse per model, so without the grant every canary job
// would be denied).
func TestModelCanaryEnvironments(t *testing.T) {
	const candidate = "eu.anthropic.claude-3-7-sonnet-20250219-v1:0"
	for _, env := range []string{"dev", "staging", "prod"} {
		t.Run(env, func(t *testing.T) {
			_, m := synth(t, checkedInContext(t, env, nil))
			rv := props(m, "ReviewFunction")["Environment"].(map[string]any)["Variables"].(map[string]any)
			if c, _ := rv["LLM_MODEL_CANDIDATE"].(string); c != "" || rv["LLM_MODEL_CANDIDATE_PERCENT"] != nil {
				t.Errorf("checked in: LLM_MODEL_CANDIDATE %q, percent %v: want the canary off", c, rv["LLM_MODEL_CANDIDATE_PERCENT"])
			}
			if grantedOn(grants(t, m, "ReviewFunction"), "bedrock:InvokeModel", "claude-3-7-sonnet") {
				t.Error("checked in: the role may invoke a model no one configured")
			}

			_, m = synth(t, checkedInContext(t, env, map[string]any{"llmModelCandidate": candidate, "llmModelCandidatePercent": 10}))
			rv = props(m, "ReviewFunction")["Environment"].(map[string]any)["Variables"].(map[string]any)
			if rv["LLM_MODEL_CANDIDATE"] != candidate || rv["LLM_MODEL_CANDIDATE_PERCENT"] != "10" {
				t.Errorf("canary: LLM_MODEL_CANDIDATE %v, percent %v", rv["LLM_MODEL_CANDIDATE"], rv["LLM_MODEL_CANDIDATE_PERCENT"])
			}
			g := grants(t, m, "ReviewFunction")
			model, _ := rv["LLM_MODEL"].(string)
			for _, want := range []string{"foundation-model/" + model, "foundation-model/anthropic.claude-3-7-sonnet", "inference-profile/" + candidate} {
				if !grantedOn(g, "bedrock:InvokeModel", want) {
					t.Errorf("canary: grants %v, want bedrock:InvokeModel on %s", g, want)
				}
			}
		})
	}
}
