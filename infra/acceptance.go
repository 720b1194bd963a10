package main

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/jsii-runtime-go"

	"github.com/criticizer/criticizer/shared/outcome"
)

// addAcceptanceAlarm adds the rollback alarm on acceptance (issue 32): the
// share of settled findings reviewers accepted (outcome.AcceptanceMetric, 1
// accepted / 0 dismissed, by Environment alone, so its daily Average is the
// share) below the environment's acceptanceAlarmThreshold pages. A day is
// the period because reactions come over days, not minutes; a day with no
// settled finding is missing data, not a breach. 0 turns it off.
func addAcceptanceAlarm(stack awscdk.Stack, env string, cfg EnvConfig, action awscloudwatch.IAlarmAction) {
	if cfg.AcceptanceAlarmThreshold <= 0 {
		return
	}
	a := awscloudwatch.NewAlarm(stack, jsii.String("AcceptanceAlarm"), &awscloudwatch.AlarmProps{
		AlarmDescription: jsii.String(fmt.Sprintf("Reviewers accepted under %v of the findings they reacted to over a day: see docs/operating.md#acceptancealarm; roll the prompt or model back",
			cfg.AcceptanceAlarmThreshold)),
		Metric: awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
			Namespace: jsii.String("Criticizer"), MetricName: jsii.String(outcome.AcceptanceMetric),
			DimensionsMap: &map[string]*string{"Environment": jsii.String(env)},
			Period:        awscdk.Duration_Days(jsii.Number(1)), Statistic: jsii.String("Average"),
		}),
		Threshold:          jsii.Number(cfg.AcceptanceAlarmThreshold),
		EvaluationPeriods:  jsii.Number(1),
		ComparisonOperator: awscloudwatch.ComparisonOperator_LESS_THAN_THRESHOLD,
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
	})
	pinID(a, "AcceptanceAlarm")
	a.AddAlarmAction(action)
}
