package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
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
// success it edits cdk.json — llmModel := the candidate, the candidate and
// its share cleared — and says so; a refusal changes nothing.
func promoteModel(ctx context.Context, cw metricsAPI, out io.Writer, raw []byte, set rolloutSettings, j modelJudgement) error {
	cand, stable, v := set.ModelCandidate, set.Model, result.StablePromptVersion
	if cand == "" {
		return fmt.Errorf("%s has no llmModelCandidate: no candidate model to promote", j.env)
	}
	if stable == "" {
		return fmt.Errorf("%s states no llmModel in cdk.json: nothing to compare the candidate model with", j.env)
	}
	valid, okV := set.Valid[v]
	dropped, okD := set.Dropped[v]
	if !okV || !okD {
		return fmt.Errorf("%s states no rollout SLO for prompt %s (validFindingsSlo and droppedFindingsSlo): nothing to judge the model canary by", j.env, v)
	}
	from := j.now.Add(-j.window)
	canary, err := measure(ctx, cw, j.env, v, cand, from, j.now)
	if err != nil {
		return err
	}
	if err := (result.SLO{MinValidPerJob: valid, MaxDroppedPerJob: dropped}).Promotable(canary, j.minJobs); err != nil {
		return fmt.Errorf("promote model %s in %s refused (prompt %s): %w", cand, j.env, v, err)
	}
	judged, err := judgeModelAcceptance(ctx, cw, set, j)
	if err != nil {
		return err
	}
	edited, err := setModel(raw, j.env, cand)
	if err != nil {
		return err
	}
	if err := os.WriteFile(j.cdkPath, edited, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(out, "model %s in %s: %d jobs under prompt %s, %.3f valid and %.3f dropped findings per job (SLO ≥ %.3f, ≤ %.3f); %s: promoted, llmModel %s → %s, llmModelCandidate cleared and llmModelCandidatePercent %d → 0 in %s; deploy to apply\n",
		cand, j.env, canary.Jobs, v, canary.ValidPerJob, canary.DroppedPerJob, valid, dropped, judged, stable, cand, set.ModelPercent, j.cdkPath)
	if set.Prices != "" {
		fmt.Fprintf(out, "llmPricesPerMTok in %s are %s's: set %s's list prices before deploying, or costs are estimated at the old model's\n", j.env, stable, cand)
	}
	return nil
}

// judgeModelAcceptance compares the candidate model's acceptance over the
// window with the stable model's, both under the stable prompt version
// (outcome.Gate), and says how they compared.
func judgeModelAcceptance(ctx context.Context, cw metricsAPI, set rolloutSettings, j modelJudgement) (string, error) {
	if set.MinSample != nil && *set.MinSample == 0 {
		return "acceptance not judged (acceptanceMinSample 0)", nil
	}
	v, from := result.StablePromptVersion, j.now.Add(-j.window)
	accepted, err := acceptance(ctx, cw, j.env, v, set.ModelCandidate, from, j.now)
	if err != nil {
		return "", err
	}
	current, err := acceptance(ctx, cw, j.env, v, set.Model, from, j.now)
	if err != nil {
		return "", err
	}
	if err := set.gate().Promotable(accepted, current); err != nil {
		return "", fmt.Errorf("promote model %s in %s refused (current model %s, prompt %s, over %s): %w", set.ModelCandidate, j.env, set.Model, v, j.window, err)
	}
	return fmt.Sprintf("acceptance %s vs %s's %s", accepted, set.Model, current), nil
}

// modelSettings match the three settings setModel rewrites, each a JSON
// string or integer value.
var modelSettings = map[string]*regexp.Regexp{
	"llmModel":                 regexp.MustCompile(`"llmModel"\s*:\s*"(?:[^"\\]|\\.)*"`),
	"llmModelCandidate":        regexp.MustCompile(`"llmModelCandidate"\s*:\s*"(?:[^"\\]|\\.)*"`),
	"llmModelCandidatePercent": regexp.MustCompile(`"llmModelCandidatePercent"\s*:\s*-?\d+`),
}

// setModel rewrites one environment's llmModel to model and clears its
// model canary (llmModelCandidate "", llmModelCandidatePercent 0) in
// cdk.json's text, leaving every other byte as it was, and checks the
// result reads back so. llmModel must be in the environment's own block
// (promote read it from there); absent canary keys stay absent.
func setModel(raw []byte, env, model string) ([]byte, error) {
	start, end, err := objectSpan(raw, env)
	if err != nil {
		return nil, err
	}
	quoted, _ := json.Marshal(model)
	block := append([]byte{}, raw[start:end]...)
	for _, kv := range []struct{ key, value string }{
		{"llmModel", string(quoted)}, {"llmModelCandidate", `""`}, {"llmModelCandidatePercent", "0"},
	} {
		loc := modelSettings[kv.key].FindIndex(block)
		if loc == nil {
			if kv.key == "llmModel" {
				return nil, fmt.Errorf("cdk.json: %s states no llmModel of its own to replace", env)
			}
			continue
		}
		setting := fmt.Sprintf(`"%s": %s`, kv.key, kv.value)
		block = append(append(append([]byte{}, block[:loc[0]]...), setting...), block[loc[1]:]...)
	}
	out := append(append(append([]byte{}, raw[:start]...), block...), raw[end:]...)
	if got, err := readRollout(out, env); err != nil || got.Model != model || got.ModelCandidate != "" || got.ModelPercent != 0 {
		return nil, fmt.Errorf("cdk.json: could not set %s's llmModel (%v)", env, err)
	}
	return out, nil
}
