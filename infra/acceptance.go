package main

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/jsii-runtime-go"

	"github.com/criticizer/criticizer/shared/outcome"
)

// addAcceptanceAlarm adds the rollback alarm on acceptance (issue 32): the
// share of judged findings reviewers accepted over a day, below the
// environment's acceptanceAlarmThreshold, pages once at least
// acceptanceAlarmMinSample findings judged that day. The share is
// Sum(outcome.AcceptanceMetric) / Sum(outcome.JudgedMetric), the deltas
// outcome.FateMoved emits by Environment alone, so a finding that flips
// class counts once; a day with fewer judged findings reads 1 (never a
// breach: one dismissal is not a trend), and a day with none is missing
// data, not a breach. A day is the period because reactions come over
// days, not minutes. 0 turns it off.
//
// Metric math (CloudWatch User Guide, "Using metric math": IF(condition,
// trueValue, falseValue) over time series; "Create a CloudWatch alarm
// based on a metric math expression"; AWS::CloudWatch::Alarm Metrics),
// which MiniStack's CloudFormation rejects: like EscalationsAlarm, it is
// left out where the emulator harness sets metricMathAlarms=false, and
// infra's TestAcceptanceAlarm evaluates the synthesized expression instead.
func addAcceptanceAlarm(stack awscdk.Stack, env string, cfg EnvConfig, mathAlarms bool, action awscloudwatch.IAlarmAction) {
	if cfg.AcceptanceAlarmThreshold <= 0 || !mathAlarms {
		return
	}
	daily := func(name string) awscloudwatch.IMetric {
		return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
			Namespace: jsii.String("Criticizer"), MetricName: jsii.String(name),
			DimensionsMap: &map[string]*string{"Environment": jsii.String(env)},
			Period:        awscdk.Duration_Days(jsii.Number(1)), Statistic: jsii.String("Sum"),
		})
	}
	share := awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		Expression: jsii.String(fmt.Sprintf("IF(judged >= %d, accepted / judged, 1)", cfg.AcceptanceAlarmMinSample)),
		UsingMetrics: &map[string]awscloudwatch.IMetric{
			"accepted": daily(outcome.AcceptanceMetric),
			"judged":   daily(outcome.JudgedMetric),
		},
		Period: awscdk.Duration_Days(jsii.Number(1)),
		Label:  jsii.String("share of judged findings accepted"),
	})
	a := awscloudwatch.NewAlarm(stack, jsii.String("AcceptanceAlarm"), &awscloudwatch.AlarmProps{
		AlarmDescription: jsii.String(fmt.Sprintf("Reviewers accepted under %v of at least %d findings they reacted to over a day: see docs/operating.md#acceptancealarm; roll the prompt or model back",
			cfg.AcceptanceAlarmThreshold, cfg.AcceptanceAlarmMinSample)),
		Metric:             share,
		Threshold:          jsii.Number(cfg.AcceptanceAlarmThreshold),
		EvaluationPeriods:  jsii.Number(1),
		ComparisonOperator: awscloudwatch.ComparisonOperator_LESS_THAN_THRESHOLD,
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
	})
	pinID(a, "AcceptanceAlarm")
	a.AddAlarmAction(action)
}
