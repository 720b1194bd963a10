package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/jsii-runtime-go"

	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/result"
)

// alarm is one CloudWatch alarm paging the environment's alarm topic. Every
// alarm the stack defines is a row of newAlarms; each has a runbook in
// docs/operating.md (TestEveryAlarmHasARunbook).
type alarm struct {
	id, desc  string
	metric    awscloudwatch.IMetric
	threshold float64
	// op is how the metric breaches the threshold (default: above it).
	op awscloudwatch.ComparisonOperator
	// periods is how many evaluation periods are looked at (default 1);
	// every one must breach when all is set.
	periods int
	all     bool
	// breaching: missing data pages (a metric that must keep reporting).
	breaching bool
}

// alarmer defines alarms and the application metrics they watch.
type alarmer struct {
	stack  awscdk.Stack
	env    string
	action awscloudwatch.IAlarmAction
}

func (a alarmer) add(spec alarm) {
	props := &awscloudwatch.AlarmProps{
		AlarmDescription:   jsii.String(spec.desc),
		Metric:             spec.metric,
		Threshold:          jsii.Number(spec.threshold),
		EvaluationPeriods:  jsii.Number(max(spec.periods, 1)),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
	}
	if spec.op != "" {
		props.ComparisonOperator = spec.op
	}
	if spec.all {
		props.DatapointsToAlarm = props.EvaluationPeriods
	}
	if spec.breaching {
		props.TreatMissingData = awscloudwatch.TreatMissingData_BREACHING
	}
	al := awscloudwatch.NewAlarm(a.stack, jsii.String(spec.id), props)
	pinID(al, spec.id)
	al.AddAlarmAction(a.action)
}

// metric is an application metric (obs.Metrics, EMF, namespace Criticizer);
// obs.Metrics adds the Environment dimension to every one.
func (a alarmer) metric(name, stat string, period awscdk.Duration, dims map[string]*string) awscloudwatch.IMetric {
	d := map[string]*string{"Environment": jsii.String(a.env)}
	maps.Copy(d, dims)
	return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
		Namespace: jsii.String("Criticizer"), MetricName: jsii.String(name), DimensionsMap: &d,
		Period: period, Statistic: jsii.String(stat),
	})
}

// sum is an application metric summed over 5 minutes.
func (a alarmer) sum(name string, dims map[string]*string) awscloudwatch.IMetric {
	return a.metric(name, "Sum", fiveMinutes(), dims)
}

// insights sums an application metric over its other dimensions with a
// Metrics Insights query.
func (a alarmer) insights(metric, where string) awscloudwatch.IMetric {
	q := "SELECT SUM(" + metric + ") FROM Criticizer WHERE Environment = '" + a.env + "'"
	if where != "" {
		q += " AND " + where
	}
	return awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		Expression: jsii.String(q), Period: fiveMinutes(),
		UsingMetrics: &map[string]awscloudwatch.IMetric{},
		Label:        jsii.String(metric),
	})
}

func fiveMinutes() awscdk.Duration { return awscdk.Duration_Minutes(jsii.Number(5)) }

// retentionRoundAgeHours is how long after the last complete retention
// round began RetentionRoundAgeAlarm pages: a round a day, and a day's slack.
const retentionRoundAgeHours = 48

// newAlarms is the alarms section: the environment's alarm topic (given or
// created, optional e-mail subscription), every alarm paging it, and the
// pipeline dashboard. It returns the topic.
func newAlarms(stack awscdk.Stack, env string, cfg EnvConfig, mathAlarms bool, stages []*stage, fns stackFunctions) awssns.ITopic {
	// Every environment pages somewhere: the given topic, or one of its own.
	var topic awssns.ITopic
	if cfg.AlarmTopicArn != "" {
		topic = awssns.Topic_FromTopicArn(stack, jsii.String("AlarmTopic"), jsii.String(cfg.AlarmTopicArn))
	} else {
		t := awssns.NewTopic(stack, jsii.String("AlarmTopic"), &awssns.TopicProps{DisplayName: jsii.String(StackName(env) + " alarms"),
			MasterKey: dataKey(stack, cfg), EnforceSSL: jsii.Bool(true)})
		pinID(t, "AlarmTopic")
		topic = t
	}
	if cfg.AlarmEmail != "" {
		topic.AddSubscription(awssnssubscriptions.NewEmailSubscription(jsii.String(cfg.AlarmEmail), nil))
	}
	a := alarmer{stack: stack, env: env, action: awscloudwatchactions.NewSnsAction(topic)}
	for _, al := range alarms(a, cfg, mathAlarms, stages, fns) {
		a.add(al)
	}
	newDashboard(a, stages)
	return topic
}

// alarms are the alarms of the environment, one row each; optional
// features add theirs only when on.
func alarms(a alarmer, cfg EnvConfig, mathAlarms bool, stages []*stage, fns stackFunctions) []alarm {
	minute := awscdk.Duration_Seconds(jsii.Number(60))
	perMinute := func(stat string) *awscloudwatch.MetricOptions {
		return &awscloudwatch.MetricOptions{Period: minute, Statistic: jsii.String(stat)}
	}
	stage := func(name string) map[string]*string { return map[string]*string{"Stage": jsii.String(name)} }
	var out []alarm
	for _, s := range stages {
		// Backlog: a stage message waiting longer than a few leases means the
		// stage is stuck (for llm, beyond the time a long review may run).
		backlog := 5 * cfg.LeaseSeconds
		if s.name == "llm" {
			backlog += cfg.ReviewTimeoutSeconds
		}
		out = append(out,
			alarm{id: s.id + "DlqAlarm", desc: "Messages in the " + s.name + " DLQ: triage and replay",
				metric: s.dlq.MetricApproximateNumberOfMessagesVisible(perMinute("Maximum"))},
			alarm{id: s.id + "BacklogAgeAlarm", desc: "Oldest " + s.name + " message older than 5 leases: the stage is not keeping up",
				metric: s.queue.MetricApproximateAgeOfOldestMessage(perMinute("Maximum")), threshold: float64(backlog), periods: 5},
			alarm{id: s.id + "LeaseLostAlarm", desc: "Workers of " + s.name + " lose their lease: leaseSeconds too short or a host clock off",
				metric: a.sum("LeaseLost", stage(s.name))})
	}
	// Each function's errors and throttles, under its id without "Function".
	for _, f := range fns.factory.made {
		out = append(out,
			alarm{id: f.id + "ErrorsAlarm", desc: f.id + " function errors", metric: f.fn.MetricErrors(perMinute("Sum"))},
			alarm{id: f.id + "ThrottlesAlarm", desc: f.id + " function throttled", metric: f.fn.MetricThrottles(perMinute("Sum"))})
	}
	if fns.sesEventsDLQ != nil {
		out = append(out, alarm{id: "SesEventsDlqAlarm",
			desc:   "SES events not recorded: delivery evidence is missing and uncertain sends may be resent; re-invoke SesEventsFunctionName with each SesEventsDlqUrl message body (docs/network-and-iam.md)",
			metric: fns.sesEventsDLQ.MetricApproximateNumberOfMessagesVisible(perMinute("Maximum"))})
	}
	deadLettered := func(stage, class string) awscloudwatch.IMetric {
		return a.sum("DeadLettered", map[string]*string{"Stage": jsii.String(stage), "ErrorClass": jsii.String(class)})
	}
	out = append(out,
		alarm{id: "DeliveryUnconfirmedAlarm", desc: "A notification could not be confirmed sent or unsent: check the provider, then confirm or requeue",
			metric: deadLettered("notify", "DELIVERY_UNCONFIRMED")},
		// A security failure (the Perforce server's key changed, or the
		// service user's protections cannot prove whole changes) pages on its
		// first dead letter: only an operator can settle it.
		alarm{id: "SecurityFailureAlarm", desc: "The fetch stage refused Perforce for a security reason (server key changed, or protections that hide files under the allow-list): see docs/operating.md, SecurityFailureAlarm",
			metric: deadLettered("fetch", "SECURITY_FAILURE")})
	for _, m := range []string{"RetentionRowsOverdue", "RetentionRowsWithoutTTL", "RetentionObjectsOverdue"} {
		out = append(out, alarm{id: m + "Alarm", desc: "The daily retention check found data past its TTL (" + m + "): see the sweeper's retention_violation log lines",
			metric: a.sum(m, nil)})
	}
	out = append(out,
		// A retention round a day: pages when none has completed for two days
		// (a round that stops completing), and when the hourly runs stop
		// reporting for three hours (missing data breaches).
		alarm{id: "RetentionRoundAgeAlarm", desc: "No retention round has completed for 2 days, or the hourly retention runs stopped: see docs/operating.md#retentionroundagealarm",
			metric:    a.metric("RetentionRoundAgeHours", "Maximum", awscdk.Duration_Hours(jsii.Number(1)), nil),
			threshold: retentionRoundAgeHours, periods: 3, breaching: true},
		alarm{id: "OutboxReconcilingAlarm", desc: "Outbox rows sent without provider evidence or stuck sending: sends blocked, see `criticizer outbox`",
			metric: a.sum("OutboxReconciling", nil)},
		// Rule OB-5: every ordering-contract violation the reconciler detects
		// pages, also the ones it repairs itself; a redelivery that failed for
		// good pages too.
		alarm{id: "OutboxViolationsAlarm", desc: "The outbox ordering contract was violated (row stuck sending or marked sent without provider evidence); repaired or not, see the sweeper's log and `criticizer outbox reconcile`",
			metric: a.sum("OutboxViolations", nil)},
		alarm{id: "RedeliveryFailedAlarm", desc: "A repaired delivery of a succeeded job failed for good: see the job's history, fix the recipient, `criticizer outbox reconcile resolve`",
			metric: a.sum("RedeliveryFailed", stage("notify"))})
	// The sweeper's passes are bounded in time and resume where they
	// stopped; work they leave for the next pass in every pass of 15
	// minutes (3 periods) is a backlog they cannot drain.
	for _, m := range []string{"SweepBacklog", "ReconcileBacklog"} {
		out = append(out, alarm{id: m + "Alarm", desc: "The sweeper's passes leave work behind for 15 minutes (" + m + "): see docs/operating.md#sweeper-backlog-alarms",
			metric: a.sum(m, nil), periods: 3})
	}
	if cfg.DailyTokenBudget > 0 {
		// The llm function emits DailyTokenBudgetUsedPercent after each
		// review that counts tokens, and at the gate.
		out = append(out, alarm{id: "DailyTokenBudgetAlarm",
			desc: fmt.Sprintf("%s has used 80%% of its daily model token budget (%d): above 100%% reviews run without the model",
				a.env, cfg.DailyTokenBudget),
			metric:    a.metric("DailyTokenBudgetUsedPercent", "Maximum", fiveMinutes(), nil),
			threshold: 80, op: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD})
	}
	out = append(out, sloAlarms(a, cfg)...)
	// MiniStack rejects metric-math alarms, so the emulator harness sets
	// context metricMathAlarms=false and these are left out there.
	if mathAlarms {
		// Escalations carry an ErrorClass dimension: summed by a query.
		out = append(out, alarm{id: "EscalationsAlarm", desc: "A stage escalated a job to an operator", metric: a.insights("Escalations", "")})
		if cfg.PromptCandidatePercent > 0 {
			out = append(out, promptCanaryAlarm(a, cfg))
		}
		if cfg.AcceptanceAlarmThreshold > 0 {
			out = append(out, acceptanceAlarm(a, cfg))
		}
	}
	return out
}

// promptCanaryAlarm: while a candidate prompt version serves a share of
// jobs, page when its rejected-response rate per model call stays above
// twice the stable version's for 30 minutes (6 × 5 min).
func promptCanaryAlarm(a alarmer, cfg EnvConfig) alarm {
	perVersion := func(name, version string) awscloudwatch.IMetric {
		return a.sum(name, map[string]*string{"Stage": jsii.String("llm"), "PromptVersion": jsii.String(version)})
	}
	canary := awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		Expression: jsii.String("IF(sc > 0 AND cc > 0, (cr / cc) - 2 * (sr / sc), 0)"),
		UsingMetrics: &map[string]awscloudwatch.IMetric{
			"cr": perVersion("ReviewResponsesRejected", cfg.PromptCandidateVersion),
			"cc": perVersion("ReviewModelCalls", cfg.PromptCandidateVersion),
			"sr": perVersion("ReviewResponsesRejected", result.StablePromptVersion),
			"sc": perVersion("ReviewModelCalls", result.StablePromptVersion),
		},
		Period: fiveMinutes(),
		Label:  jsii.String("candidate rejection rate above 2x stable"),
	})
	return alarm{id: "PromptCanaryAlarm",
		desc:   "Prompt " + cfg.PromptCandidateVersion + ": response_rejected above 2x the stable prompt's for 30 min; set promptCandidatePercent to 0",
		metric: canary, periods: 6, all: true}
}

// sloAlarms are the two rollback alarms per prompt version (the spec's
// rollout gate): the llm stage's per-job average of valid findings below,
// or of dropped findings above, the version's SLO for an hour (12 × 5 min)
// pages — roll the version back (promptCandidatePercent 0, or redeploy the
// previous prompt).
func sloAlarms(a alarmer, cfg EnvConfig) []alarm {
	var out []alarm
	for _, k := range []struct {
		idPrefix, metric, what string
		op                     awscloudwatch.ComparisonOperator
		slo                    map[string]float64
	}{
		{"ValidFindingsSloAlarm", "ReviewValidFindings", "valid findings per job below", awscloudwatch.ComparisonOperator_LESS_THAN_THRESHOLD, cfg.ValidFindingsSLO},
		{"DroppedFindingsSloAlarm", "ReviewFindingsDropped", "dropped findings per job above", awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD, cfg.DroppedFindingsSLO},
	} {
		for _, v := range slices.Sorted(maps.Keys(k.slo)) {
			out = append(out, alarm{id: k.idPrefix + strings.ReplaceAll(v, ".", "x"),
				desc:      fmt.Sprintf("Prompt %s: %s the SLO %v for an hour; roll the prompt version back", v, k.what, k.slo[v]),
				metric:    a.metric(k.metric, "Average", fiveMinutes(), map[string]*string{"Stage": jsii.String("llm"), "PromptVersion": jsii.String(v)}),
				threshold: k.slo[v], op: k.op, periods: 12, all: true})
		}
	}
	return out
}

// acceptanceAlarm is the rollback alarm on acceptance (issue 32): the share
// of judged findings reviewers accepted over a day (reactions come over
// days), Sum(outcome.AcceptanceMetric) / Sum(outcome.JudgedMetric) by
// Environment alone (a finding that flips class counts once), below
// acceptanceAlarmThreshold pages once acceptanceAlarmMinSample findings were
// judged that day; a smaller day reads 1 (one dismissal is not a trend), an
// empty one is missing data. 0 turns it off.
//
// Metric math (CloudWatch User Guide, "Using metric math": IF(condition,
// trueValue, falseValue) over time series; "Create a CloudWatch alarm
// based on a metric math expression"; AWS::CloudWatch::Alarm Metrics),
// which MiniStack's CloudFormation rejects: like EscalationsAlarm, it is
// left out where the emulator harness sets metricMathAlarms=false, and
// infra's TestAcceptanceAlarm evaluates the synthesized expression instead.
func acceptanceAlarm(a alarmer, cfg EnvConfig) alarm {
	daily := func(name string) awscloudwatch.IMetric {
		return a.metric(name, "Sum", awscdk.Duration_Days(jsii.Number(1)), nil)
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
	return alarm{id: "AcceptanceAlarm",
		desc: fmt.Sprintf("Reviewers accepted under %v of at least %d findings they reacted to over a day: see docs/operating.md#acceptancealarm; roll the prompt or model back",
			cfg.AcceptanceAlarmThreshold, cfg.AcceptanceAlarmMinSample),
		metric: share, threshold: cfg.AcceptanceAlarmThreshold, op: awscloudwatch.ComparisonOperator_LESS_THAN_THRESHOLD}
}

// newDashboard is the pipeline dashboard: one row per stage.
func newDashboard(a alarmer, stages []*stage) {
	dash := awscloudwatch.NewDashboard(a.stack, jsii.String("Dashboard"), &awscloudwatch.DashboardProps{
		DashboardName: jsii.String(StackName(a.env) + "-pipeline"),
	})
	pinID(dash, "Dashboard")
	for _, s := range stages {
		stageWhere := "Stage = '" + s.name + "'"
		dash.AddWidgets(
			awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{
				Title: jsii.String(s.name + ": backlog"), Width: jsii.Number(6),
				Left: &[]awscloudwatch.IMetric{
					s.queue.MetricApproximateNumberOfMessagesVisible(nil),
					s.dlq.MetricApproximateNumberOfMessagesVisible(nil),
				},
				Right: &[]awscloudwatch.IMetric{s.queue.MetricApproximateAgeOfOldestMessage(nil)},
			}),
			awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{
				Title: jsii.String(s.name + ": outcomes"), Width: jsii.Number(6),
				Left: &[]awscloudwatch.IMetric{
					a.insights("StageSucceeded", stageWhere), a.insights("StageRetried", stageWhere),
					a.insights("DeadLettered", stageWhere), a.insights("LeaseLost", stageWhere),
				},
			}),
			awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{
				Title: jsii.String(s.name + ": function"), Width: jsii.Number(6),
				Left:  &[]awscloudwatch.IMetric{s.consumer.MetricInvocations(nil), s.consumer.MetricErrors(nil), s.consumer.MetricThrottles(nil)},
				Right: &[]awscloudwatch.IMetric{s.consumer.MetricDuration(nil)},
			}),
		)
	}
}
