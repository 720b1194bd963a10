package main

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/jsii-runtime-go"

	"github.com/criticizer/criticizer/shared/result"
)

var promptVersionRe = regexp.MustCompile(`^\d+\.\d+\.\d+$`)

// validateGuarantees checks the settings of the newer guarantees: how long
// uniqueness lasts (at least a year and never shorter than the data it
// protects, or 0 for forever) and the rollback SLO per prompt version.
func validateGuarantees(c EnvConfig, p *problems) {
	// Its range (0 or a year to a century) is the declaration's.
	if u := c.UniquenessRetentionDays; u != 0 && u < c.RetentionDays {
		p.add("uniquenessRetentionDays %d: below retentionDays (%d); a promise must outlive the data it protects", u, c.RetentionDays)
	}
	for v, slo := range c.ValidFindingsSLO {
		if !promptVersionRe.MatchString(v) {
			p.add("validFindingsSlo key %q: want a prompt version MAJOR.MINOR.PATCH", v)
		}
		if slo <= 0 || slo > 1000 {
			p.add("validFindingsSlo[%s] %v: want a positive average of valid findings per job", v, slo)
		}
	}
	for v, slo := range c.DroppedFindingsSLO {
		if !promptVersionRe.MatchString(v) {
			p.add("droppedFindingsSlo key %q: want a prompt version MAJOR.MINOR.PATCH", v)
		}
		if slo < 0 || slo > 1000 {
			p.add("droppedFindingsSlo[%s] %v: want a non-negative average of dropped findings per job", v, slo)
		}
	}
	if c.isLocal {
		return
	}
	// Outside local every prompt version that serves jobs states both
	// rollout SLOs: the rollback alarms and `criticizer promote` judge by them.
	for _, v := range servedPromptVersions(c) {
		if _, ok := c.ValidFindingsSLO[v]; !ok {
			p.add("validFindingsSlo has no entry for prompt %s: every environment outside local states the valid-findings SLO of each prompt version it serves", v)
		}
		if _, ok := c.DroppedFindingsSLO[v]; !ok {
			p.add("droppedFindingsSlo has no entry for prompt %s: every environment outside local states the dropped-findings SLO of each prompt version it serves", v)
		}
	}
}

// servedPromptVersions are the prompt versions an environment's jobs get:
// the build's stable one and the candidate on trial, if any.
func servedPromptVersions(c EnvConfig) []string {
	out := []string{result.StablePromptVersion}
	if c.PromptCandidateVersion != "" && c.PromptCandidateVersion != result.StablePromptVersion {
		out = append(out, c.PromptCandidateVersion)
	}
	return out
}

// sloAlarm is one of the two rollback alarms per prompt version (the spec's
// rollout gate): the llm stage's per-job average of metric on the wrong side
// of the version's SLO for an hour (12 × 5 min) pages — roll the version
// back (promptCandidatePercent 0, or redeploy the previous prompt).
type sloAlarm struct {
	idPrefix, metric, what string
	op                     awscloudwatch.ComparisonOperator
	slo                    map[string]float64
}

// addSLOAlarms adds the valid-findings alarm (average below its SLO) and
// the dropped-findings alarm (average above its SLO) for every prompt
// version that states them.
func addSLOAlarms(stack awscdk.Stack, env string, cfg EnvConfig, action awscloudwatch.IAlarmAction) {
	for _, k := range []sloAlarm{
		{"ValidFindingsSloAlarm", "ReviewValidFindings", "valid findings per job below", awscloudwatch.ComparisonOperator_LESS_THAN_THRESHOLD, cfg.ValidFindingsSLO},
		{"DroppedFindingsSloAlarm", "ReviewFindingsDropped", "dropped findings per job above", awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD, cfg.DroppedFindingsSLO},
	} {
		versions := make([]string, 0, len(k.slo))
		for v := range k.slo {
			versions = append(versions, v)
		}
		sort.Strings(versions)
		for _, v := range versions {
			id := k.idPrefix + strings.ReplaceAll(v, ".", "x")
			a := awscloudwatch.NewAlarm(stack, jsii.String(id), &awscloudwatch.AlarmProps{
				AlarmDescription: jsii.String(fmt.Sprintf("Prompt %s: %s the SLO %v for an hour; roll the prompt version back", v, k.what, k.slo[v])),
				Metric: awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
					Namespace: jsii.String("Criticizer"), MetricName: jsii.String(k.metric),
					DimensionsMap: &map[string]*string{"Environment": jsii.String(env), "Stage": jsii.String("llm"), "PromptVersion": jsii.String(v)},
					Period:        awscdk.Duration_Minutes(jsii.Number(5)), Statistic: jsii.String("Average"),
				}),
				Threshold:          jsii.Number(k.slo[v]),
				EvaluationPeriods:  jsii.Number(12),
				DatapointsToAlarm:  jsii.Number(12),
				ComparisonOperator: k.op,
				TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
			})
			pinID(a, id)
			a.AddAlarmAction(action)
		}
	}
}
