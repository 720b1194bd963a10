package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"time"

	"github.com/criticizer/criticizer/shared/result"
)

// modelJudgement is what promote --model was asked: where and over when.
type modelJudgement struct {
	env, cdkPath string
	window       time.Duration
	minJobs      int
	now          time.Time
}

// promoteModel is the gate of a model rollout (result.ModelRollout): the
// environment's candidate model (llmModelCandidate) replaces llmModel only
// when its canary meets the rollout SLOs of the stable prompt version and
// reviewers accepted its findings no less than the stable model's within
// acceptanceMargin, on at least acceptanceMinSample judged findings each.
// It compares like with like: both models under the stable prompt version,
// whatever share a prompt canary has at the same time (the two buckets are
// independent, so each model's stable-prompt jobs are a fair sample). On
// success it edits cdk.json — llmModel := the candidate, its prices and
// own limits llmModel's, the candidate's settings cleared (modelEdits) —
// and says so; a refusal changes nothing.
func promoteModel(ctx context.Context, cw metricsAPI, out io.Writer, raw []byte, set rolloutSettings, j modelJudgement) error {
	cand, stable, v := set.ModelCandidate, set.Model, result.StablePromptVersion
	if cand == "" {
		return fmt.Errorf("%s has no llmModelCandidate: no candidate model to promote", j.env)
	}
	if stable == "" {
		return fmt.Errorf("%s states no llmModel in cdk.json: nothing to compare the candidate model with", j.env)
	}
	canary, slo, err := judgeCanary(ctx, cw, set, j.env, arm{v, cand}, j.window, j.now, j.minJobs)
	if err != nil {
		return err
	}
	judged, err := judgeAcceptance(ctx, cw, set, j.env, arm{v, cand}, arm{v, stable}, j.window, j.now)
	if err != nil {
		return err
	}
	edited, err := setModel(raw, j.env, set)
	if err != nil {
		return err
	}
	if err := os.WriteFile(j.cdkPath, edited, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(out, "model %s in %s: %d jobs under prompt %s, %.3f valid and %.3f dropped findings per job (SLO ≥ %.3f, ≤ %.3f); %s: promoted, llmModel %s → %s, llmModelCandidate cleared and llmModelCandidatePercent %d → 0 in %s; deploy to apply\n",
		cand, j.env, canary.Jobs, v, canary.ValidPerJob, canary.DroppedPerJob, slo.MinValidPerJob, slo.MaxDroppedPerJob, judged, stable, cand, set.ModelPercent, j.cdkPath)
	sayTerms(out, set, j.env)
	return nil
}

// sayTerms says what promoting set's candidate did to the environment's
// prices and limits (modelEdits).
func sayTerms(out io.Writer, set rolloutSettings, env string) {
	cand, stable := set.ModelCandidate, set.Model
	switch {
	case set.CandidatePrices != "":
		fmt.Fprintf(out, "llmPricesPerMTok %q → %s's %q, llmModelCandidatePricesPerMTok cleared\n", set.Prices, cand, set.CandidatePrices)
	case set.Prices != "":
		fmt.Fprintf(out, "llmPricesPerMTok cleared: they were %s's, and %s had no llmModelCandidatePricesPerMTok; set %s's list prices in %s to estimate its reviews' cost\n", stable, cand, cand, env)
	}
	if set.CandidateRequests > 0 {
		fmt.Fprintf(out, "llmRequestsPerMinute %d → %d (%s's), llmModelCandidateRequestsPerMinute cleared\n", set.Requests, set.CandidateRequests, cand)
	}
	if set.CandidateTokens > 0 {
		fmt.Fprintf(out, "llmTokensPerMinute %d → %d (%s's), llmModelCandidateTokensPerMinute cleared\n", set.Tokens, set.CandidateTokens, cand)
	}
}

// modelEdit is one setting promote --model writes in the environment's
// block: key := value (JSON), added after llmModel when the block lacks
// the key and add is set, else only replaced where present.
type modelEdit struct {
	key, value string
	add        bool
}

// modelEdits are what promoting set's candidate model writes: it becomes
// llmModel, its prices llmPricesPerMTok (none: the stable model's are
// cleared, for they are not the new model's), and its own limits, where
// set, llmModel's (unset, it ran at llmModel's, which stay); the canary's
// settings are cleared.
func modelEdits(set rolloutSettings) []modelEdit {
	quoted, _ := json.Marshal(set.ModelCandidate)
	prices, _ := json.Marshal(set.CandidatePrices)
	edits := []modelEdit{{key: "llmModel", value: string(quoted)}, {key: "llmModelCandidate", value: `""`},
		{key: "llmModelCandidatePercent", value: "0"}, {key: "llmPricesPerMTok", value: string(prices), add: set.CandidatePrices != ""},
		{key: "llmModelCandidatePricesPerMTok", value: `""`}}
	for _, l := range []struct {
		stable, candidate string
		n                 int
	}{{"llmRequestsPerMinute", "llmModelCandidateRequestsPerMinute", set.CandidateRequests}, {"llmTokensPerMinute", "llmModelCandidateTokensPerMinute", set.CandidateTokens}} {
		if l.n > 0 {
			edits = append(edits, modelEdit{key: l.stable, value: strconv.Itoa(l.n), add: true}, modelEdit{key: l.candidate, value: "0"})
		}
	}
	return edits
}

// settingValue matches key's setting, a JSON string or integer value.
func settingValue(key string) *regexp.Regexp {
	return regexp.MustCompile(`"` + regexp.QuoteMeta(key) + `"\s*:\s*(?:"(?:[^"\\]|\\.)*"|-?\d+)`)
}

// setModel applies modelEdits(set) to one environment's block in
// cdk.json's text (editEnvironment). llmModel must be in the environment's
// own block (promote read it from there); added settings follow it.
func setModel(raw []byte, env string, set rolloutSettings) ([]byte, error) {
	return editEnvironment(raw, env, "llmModel", modelEdits(set), func(got rolloutSettings) bool {
		return got.Model == set.ModelCandidate && got.ModelCandidate == "" && got.ModelPercent == 0 &&
			got.Prices == set.CandidatePrices && got.CandidatePrices == "" && (set.CandidateRequests <= 0 || got.Requests == set.CandidateRequests) &&
			(set.CandidateTokens <= 0 || got.Tokens == set.CandidateTokens)
	})
}
