package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/result"
)

// metricsAPI is the CloudWatch call promote reads the canary with.
type metricsAPI interface {
	GetMetricStatistics(context.Context, *cloudwatch.GetMetricStatisticsInput, ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricStatisticsOutput, error)
}

// rolloutSettings is the part of an environment in cdk.json promote reads.
type rolloutSettings struct {
	Candidate string             `json:"promptCandidateVersion"`
	Percent   int                `json:"promptCandidatePercent"`
	Valid     map[string]float64 `json:"validFindingsSlo"`
	Dropped   map[string]float64 `json:"droppedFindingsSlo"`
	Model     string             `json:"llmModel"`
	// The model canary (promote --model).
	ModelCandidate string `json:"llmModelCandidate"`
	ModelPercent   int    `json:"llmModelCandidatePercent"`
	Prices         string `json:"llmPricesPerMTok"`
	// The candidate model's own prices and limits, and the stable model's
	// limits: promote --model moves the candidate's to llmModel's.
	CandidatePrices   string `json:"llmModelCandidatePricesPerMTok"`
	Requests          int    `json:"llmRequestsPerMinute"`
	Tokens            int    `json:"llmTokensPerMinute"`
	CandidateRequests int    `json:"llmModelCandidateRequestsPerMinute"`
	CandidateTokens   int    `json:"llmModelCandidateTokensPerMinute"`
	// The acceptance gate (outcome.Gate); unset takes outcome's defaults.
	Margin    *float64 `json:"acceptanceMargin"`
	MinSample *int     `json:"acceptanceMinSample"`
}

// gate is the environment's acceptance gate, its defaults where unset.
func (s rolloutSettings) gate() outcome.Gate {
	g := outcome.Gate{Margin: outcome.DefaultMargin, MinSample: outcome.DefaultMinSample}
	if s.Margin != nil {
		g.Margin = *s.Margin
	}
	if s.MinSample != nil {
		g.MinSample = *s.MinSample
	}
	return g
}

// promote is the gate of a rollout. A prompt rollout (rule RC-7): the
// environment's candidate prompt version serves every job
// (promptCandidatePercent 100 in cdk.json, deployed as usual) only when its
// canary — the llm stage's metrics for that version over the window — meets
// the environment's rollout SLOs, and reviewers accepted its findings no
// less than the stable version's within acceptanceMargin, on at least
// acceptanceMinSample judged findings each (issue 32). A model rollout
// (--model, result.ModelRollout): the candidate model (llmModelCandidate)
// replaces llmModel by the same judgement, like with like: both models under
// the stable prompt version, whatever share a prompt canary has at the same
// time (the two buckets are independent, so each model's stable-prompt jobs
// are a fair sample); on success its prices and own limits become
// llmModel's and the candidate's settings are cleared (modelEdits). A
// refusal changes nothing. Reactions come days after a review: a window of
// a week judges acceptance on more of them.
//
//	criticizer promote --env staging [--model] [--cdk cdk.json] [--window 24h] [--min-jobs 20]
func promote(ctx context.Context, cw metricsAPI, out io.Writer, now time.Time, args []string) error {
	fs := flag.NewFlagSet("promote", flag.ContinueOnError)
	env := fs.String("env", "", "the environment whose candidate prompt is promoted (dev, staging, prod)")
	cdkPath := fs.String("cdk", "cdk.json", "the CDK context file holding the environment's settings")
	window := fs.Duration("window", 24*time.Hour, "how far back the canary is measured")
	minJobs := fs.Int("min-jobs", 20, "the fewest candidate jobs the judgement needs")
	model := fs.Bool("model", false, "judge the candidate model (llmModelCandidate) instead of the candidate prompt")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *env == "" || fs.NArg() != 0 || *window < time.Minute {
		return errors.New("usage: criticizer promote --env ENV [--model] [--cdk cdk.json] [--window 24h] [--min-jobs 20]")
	}
	raw, err := os.ReadFile(*cdkPath)
	if err != nil {
		return err
	}
	set, err := readRollout(raw, *env)
	if err != nil {
		return err
	}
	// The prompt's canary is its per-version metrics (at every model).
	v, stable := set.Candidate, result.StablePromptVersion
	cand, current, canaryArm := arm{v, set.Model}, arm{stable, set.Model}, arm{v, ""}
	switch {
	case *model && set.ModelCandidate == "":
		return fmt.Errorf("%s has no llmModelCandidate: no candidate model to promote", *env)
	case *model && set.Model == "":
		return fmt.Errorf("%s states no llmModel in cdk.json: nothing to compare the candidate model with", *env)
	case *model:
		v = stable
		cand, current = arm{v, set.ModelCandidate}, arm{v, set.Model}
		canaryArm = cand
	case v == "":
		return fmt.Errorf("%s has no promptCandidateVersion: no candidate to promote", *env)
	}
	canary, slo, err := judgeCanary(ctx, cw, set, *env, canaryArm, *window, now, *minJobs)
	if err != nil {
		return err
	}
	judged, err := judgeAcceptance(ctx, cw, set, *env, cand, current, *window, now)
	if err != nil {
		return err
	}
	var edited []byte
	if *model {
		edited, err = setModel(raw, *env, set)
	} else {
		edited, err = editEnvironment(raw, *env, "", []modelEdit{{key: "promptCandidatePercent", value: "100", add: true}},
			func(got rolloutSettings) bool { return got.Percent == 100 })
	}
	if err != nil {
		return err
	}
	if err := os.WriteFile(*cdkPath, edited, 0o644); err != nil {
		return err
	}
	measured := fmt.Sprintf("%d jobs, %.3f valid and %.3f dropped findings per job (SLO ≥ %.3f, ≤ %.3f); %s: promoted",
		canary.Jobs, canary.ValidPerJob, canary.DroppedPerJob, slo.MinValidPerJob, slo.MaxDroppedPerJob, judged)
	if !*model {
		fmt.Fprintf(out, "prompt %s in %s: %s, promptCandidatePercent %d → 100 in %s; deploy to apply\n", v, *env, measured, set.Percent, *cdkPath)
		return nil
	}
	fmt.Fprintf(out, "model %s in %s under prompt %s: %s, llmModel %s → %s, llmModelCandidate cleared and llmModelCandidatePercent %d → 0 in %s; deploy to apply\n",
		set.ModelCandidate, *env, v, measured, set.Model, set.ModelCandidate, set.ModelPercent, *cdkPath)
	sayTerms(out, set, *env)
	return nil
}

func readRollout(raw []byte, env string) (rolloutSettings, error) {
	var s rolloutSettings
	return s, cdkEnvironment(raw, env, &s)
}

// cdkEnvironment decodes the environment env of cdk.json's context into v.
func cdkEnvironment(raw []byte, env string, v any) error {
	var doc struct {
		Context struct {
			Environments map[string]json.RawMessage `json:"environments"`
		} `json:"context"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("read cdk.json: %w", err)
	}
	e, ok := doc.Context.Environments[env]
	if !ok {
		return fmt.Errorf("cdk.json has no environment %q", env)
	}
	if err := json.Unmarshal(e, v); err != nil {
		return fmt.Errorf("read cdk.json environment %s: %w", env, err)
	}
	return nil
}

// hourPeriod is one period over from..to in whole hours: CloudWatch
// returns no data points for a start more than 15 days ago unless the
// period is a multiple of 300 s, or of 3600 s past 63 days (API reference,
// GetMetricStatistics, Period); a multiple of 3600 suits every window.
func hourPeriod(from, to time.Time) int32 {
	return int32((to.Sub(from) + time.Hour - 1) / time.Hour * 3600)
}

// measure reads the candidate's canary: jobs and the averages per job of
// ReviewValidFindings and ReviewFindingsDropped (one data point per job,
// emitted by the llm stage per prompt version, and again per prompt version
// and model) between from and to; model "" reads the per-version set.
func measure(ctx context.Context, cw metricsAPI, env, version, model string, from, to time.Time) (result.Canary, error) {
	dims := []string{"Environment", env, "Stage", string(domain.StageLLM), "PromptVersion", version}
	if model != "" {
		dims = append(dims, "Model", model)
	}
	var c result.Canary
	for i, m := range []struct { // the jobs are the valid findings' samples
		metric string
		avg    *float64
	}{{"ReviewValidFindings", &c.ValidPerJob}, {"ReviewFindingsDropped", &c.DroppedPerJob}} {
		points, err := statistics(ctx, cw, m.metric, dims, from, to, cwtypes.StatisticAverage, cwtypes.StatisticSampleCount)
		if err != nil {
			return result.Canary{}, fmt.Errorf("read %s of prompt %s: %w", m.metric, version, err)
		}
		var sum, count float64
		for _, d := range points {
			sum += aws.ToFloat64(d.Average) * aws.ToFloat64(d.SampleCount)
			count += aws.ToFloat64(d.SampleCount)
		}
		if count > 0 {
			*m.avg = sum / count
		}
		if i == 0 {
			c.Jobs = int(count)
		}
	}
	return c, nil
}

// statistics reads metric's data points with dims (name, value pairs) in
// the namespace Criticizer between from and to, one period over the window.
func statistics(ctx context.Context, cw metricsAPI, metric string, dims []string, from, to time.Time, stats ...cwtypes.Statistic) ([]cwtypes.Datapoint, error) {
	var ds []cwtypes.Dimension
	for i := 0; i < len(dims); i += 2 {
		ds = append(ds, cwtypes.Dimension{Name: aws.String(dims[i]), Value: aws.String(dims[i+1])})
	}
	res, err := cw.GetMetricStatistics(ctx, &cloudwatch.GetMetricStatisticsInput{
		Namespace: aws.String("Criticizer"), MetricName: aws.String(metric), Dimensions: ds,
		StartTime: aws.Time(from), EndTime: aws.Time(to), Period: aws.Int32(hourPeriod(from, to)), Statistics: stats,
	})
	if err != nil {
		return nil, err
	}
	return res.Datapoints, nil
}

// arm is one side of a rollout's comparison: a prompt version at a model
// (model "" in judgeCanary: at every model, the llm stage's per-version
// metrics). A prompt rollout varies the version, a model rollout the model.
type arm struct{ version, model string }

// judgeCanary measures the candidate arm's canary over the window and
// refuses it unless it meets the rollout SLOs of its prompt version on at
// least minJobs jobs; it returns the canary and the SLOs it met.
func judgeCanary(ctx context.Context, cw metricsAPI, set rolloutSettings, env string, cand arm, window time.Duration, now time.Time, minJobs int) (result.Canary, result.SLO, error) {
	what, refused := "canary", fmt.Sprintf("promote prompt %s in %s refused", cand.version, env)
	if cand.model != "" {
		what, refused = "model canary", fmt.Sprintf("promote model %s in %s refused (prompt %s)", cand.model, env, cand.version)
	}
	valid, okV := set.Valid[cand.version]
	dropped, okD := set.Dropped[cand.version]
	if !okV || !okD {
		return result.Canary{}, result.SLO{}, fmt.Errorf("%s states no rollout SLO for prompt %s (validFindingsSlo and droppedFindingsSlo): nothing to judge the %s by", env, cand.version, what)
	}
	slo := result.SLO{MinValidPerJob: valid, MaxDroppedPerJob: dropped}
	canary, err := measure(ctx, cw, env, cand.version, cand.model, now.Add(-window), now)
	if err != nil {
		return result.Canary{}, result.SLO{}, err
	}
	if err := slo.Promotable(canary, minJobs); err != nil {
		return result.Canary{}, result.SLO{}, fmt.Errorf("%s: %w", refused, err)
	}
	return canary, slo, nil
}

// judgeAcceptance compares the candidate arm's acceptance over the window
// with the current arm's (outcome.Gate), and says how they compared.
// acceptanceMinSample 0 judges nothing: a deployment that posts no Swarm
// comments has no reactions to judge by.
func judgeAcceptance(ctx context.Context, cw metricsAPI, set rolloutSettings, env string, cand, current arm, window time.Duration, now time.Time) (string, error) {
	if set.MinSample != nil && *set.MinSample == 0 {
		return "acceptance not judged (acceptanceMinSample 0)", nil
	}
	if current.model == "" {
		return "", fmt.Errorf("%s states no llmModel in cdk.json: acceptance is measured per prompt version and model", env)
	}
	accepted, err := acceptance(ctx, cw, env, cand.version, cand.model, now.Add(-window), now)
	if err != nil {
		return "", err
	}
	was, err := acceptance(ctx, cw, env, current.version, current.model, now.Add(-window), now)
	if err != nil {
		return "", err
	}
	what, c, s, shared := "prompt", cand.version, current.version, "model "+current.model
	if cand.model != current.model {
		what, c, s, shared = "model", cand.model, current.model, "prompt "+current.version
	}
	if err := set.gate().Promotable(accepted, was); err != nil {
		return "", fmt.Errorf("promote %s %s in %s refused (current %s %s, %s, over %s): %w", what, c, env, what, s, shared, window, err)
	}
	return fmt.Sprintf("acceptance %s vs %s's %s", accepted, s, was), nil
}

// acceptance reads a prompt version's acceptance at model between from and
// to: the Sums of outcome.AcceptanceMetric and outcome.JudgedMetric by
// PromptVersion and Model, the deltas outcome.FateMoved emits, whose ratio is
// the share accepted and whose judged Sum the findings judged (each once,
// however often it flipped).
func acceptance(ctx context.Context, cw metricsAPI, env, version, model string, from, to time.Time) (outcome.Measured, error) {
	var sums [2]float64
	for i, metric := range []string{outcome.AcceptanceMetric, outcome.JudgedMetric} {
		points, err := statistics(ctx, cw, metric, []string{"Environment", env, "PromptVersion", version, "Model", model}, from, to, cwtypes.StatisticSum)
		if err != nil {
			return outcome.Measured{}, fmt.Errorf("read the acceptance of prompt %s (%s): %w", version, metric, err)
		}
		for _, d := range points {
			sums[i] += aws.ToFloat64(d.Sum)
		}
	}
	m := outcome.Measured{Judged: int(sums[1])}
	if sums[1] > 0 {
		m.Share = sums[0] / sums[1]
	}
	return m, nil
}

// editEnvironment applies edits to one environment's block in cdk.json's
// text, leaving every other byte as it was, and checks with ok that the
// result reads back so. An added setting follows the setting anchor,
// indented alike (which the block must state), or with no anchor opens the
// block.
func editEnvironment(raw []byte, env, anchor string, edits []modelEdit, ok func(rolloutSettings) bool) ([]byte, error) {
	start, end, err := objectSpan(raw, env)
	if err != nil {
		return nil, err
	}
	block := append([]byte{}, raw[start:end]...)
	ws, after := "", 1
	if anchor != "" {
		at := settingValue(anchor).FindIndex(block)
		if at == nil {
			return nil, fmt.Errorf("cdk.json: %s states no %s of its own to replace", env, anchor)
		}
		indent := at[0] // the whitespace before the anchor, for added settings
		for indent > 0 && strings.ContainsRune(" \t\r\n", rune(block[indent-1])) {
			indent--
		}
		ws, after = string(block[indent:at[0]]), at[1]
	}
	for _, e := range edits {
		setting := fmt.Sprintf(`"%s": %s`, e.key, e.value)
		loc := settingValue(e.key).FindIndex(block)
		switch {
		case loc != nil:
			block = append(append(append([]byte{}, block[:loc[0]]...), setting...), block[loc[1]:]...)
			if loc[0] < after {
				after += len(setting) - (loc[1] - loc[0])
			}
		case e.add:
			if setting = "," + ws + setting; anchor == "" {
				setting = " " + setting[1:] + ","
			}
			block = append(append(append([]byte{}, block[:after]...), setting...), block[after:]...)
			after += len(setting)
		}
	}
	out := append(append(append([]byte{}, raw[:start]...), block...), raw[end:]...)
	if got, err := readRollout(out, env); err != nil || !ok(got) {
		return nil, fmt.Errorf("cdk.json: could not set %s's %s (%v)", env, edits[0].key, err)
	}
	return out, nil
}

// objectSpan finds the object value of the environments entry named env:
// the bytes from its '{' to just past its '}' (its decoded bytes, verbatim,
// found after its key).
func objectSpan(raw []byte, env string) (int, int, error) {
	var e json.RawMessage
	if err := cdkEnvironment(raw, env, &e); err != nil {
		return 0, 0, err
	}
	if e[0] != '{' {
		return 0, 0, fmt.Errorf("cdk.json environment %q is not an object", env)
	}
	envs := bytes.Index(raw, []byte(`"environments"`))
	key := envs + bytes.Index(raw[envs:], []byte(`"`+env+`"`))
	start := key + bytes.Index(raw[key:], e)
	return start, start + len(e), nil
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

// modelEdit is one setting promote writes in the environment's block:
// key := value (JSON), added (editEnvironment's anchor) when the block lacks
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
