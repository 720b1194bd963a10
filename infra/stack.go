package main

import (
	"strconv"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"

	"github.com/aws/jsii-runtime-go"
	"github.com/criticizer/criticizer/shared/result"
)

// StackProps configures NewCriticizerStack.
type StackProps struct {
	awscdk.StackProps
	EnvName   string    // local, dev, staging, prod
	Config    EnvConfig // resolved environment settings
	AssetRoot string    // directory with <function>/bootstrap
	// MetricMathAlarms: alarms on Metrics Insights queries (true except on the emulator).
	MetricMathAlarms bool
}

// StackName is the CloudFormation stack name of an environment.
func StackName(env string) string { return "Criticizer-" + env }

// stage is one pipeline stage: its queue, its DLQ and the function consuming it.
type stage struct {
	name        string // spec stage name: fetch, llm, notify
	id          string // logical id prefix: Fetch, Llm, Notify
	queue       awssqs.Queue
	dlq         awssqs.Queue
	consumer    awslambda.Function
	concurrency int
}

// NewCriticizerStack defines the whole Criticizer deployment of one environment.
// Logical ids of the main resources are pinned (overrideLogicalId) so that tests,
// operators and the devstack harness can rely on them.
func NewCriticizerStack(scope constructs.Construct, props *StackProps) awscdk.Stack {
	cfg, env := props.Config, props.EnvName
	local := isLocal(env)
	sp := props.StackProps
	if cfg.Account != "" || cfg.Region != "" {
		sp.Env = &awscdk.Environment{}
		if cfg.Account != "" {
			sp.Env.Account = jsii.String(cfg.Account)
		}
		if cfg.Region != "" {
			sp.Env.Region = jsii.String(cfg.Region)
		}
	}
	if sp.Description == nil {
		sp.Description = jsii.String("Criticizer: AI review of Perforce changelists (" + env + ")")
	}
	stack := awscdk.NewStack(scope, jsii.String(StackName(env)), &sp)
	awscdk.Tags_Of(stack).Add(jsii.String("Project"), jsii.String("Criticizer"), nil)
	awscdk.Tags_Of(stack).Add(jsii.String("Environment"), jsii.String(env), nil)

	removal := awscdk.RemovalPolicy_RETAIN
	if local {
		removal = awscdk.RemovalPolicy_DESTROY
	}

	table, raw, redacted := newData(stack, cfg, local, removal)

	sec := newSecrets(stack, cfg, removal)
	fetchStage, llmStage, notifyStage := newQueues(stack, cfg, removal)
	stages := []*stage{fetchStage, llmStage, notifyStage}
	fns := newFunctions(stack, functionsProps{env: env, cfg: cfg, assetRoot: props.AssetRoot, removal: removal,
		table: table, raw: raw, redacted: redacted, fetch: fetchStage, llm: llmStage, notify: notifyStage, secrets: sec})
	wireRecipientPolicy(cfg, fns.webhook, fns.fetch, fns.notify)
	wireNotifyChannels(cfg, sec, fns.notify, fns.sweeper)
	api := newAPI(stack, env, cfg, removal, fns.webhook)
	jobPageFn := newJobPage(stack, jobPageProps{env: env, cfg: cfg, assetRoot: props.AssetRoot, removal: removal, table: table, redacted: redacted, api: api, webhook: fns.webhook, notify: fns.notify})
	wireDismissals(cfg, fns.llm, fns.notify, fns.sweeper, fns.webhook, fns.digest, jobPageFn)
	alarmed := []namedFn{{"Webhook", fns.webhook}, {"Fetch", fns.fetch}, {"Review", fns.llm}, {"Notify", fns.notify}, {"Sweeper", fns.sweeper}}
	if fns.sesEvents != nil {
		alarmed = append(alarmed, namedFn{"SesEvents", fns.sesEvents})
	}
	if jobPageFn != nil {
		alarmed = append(alarmed, namedFn{"JobPage", jobPageFn})
	}
	if fns.digest != nil {
		alarmed = append(alarmed, namedFn{"Digest", fns.digest})
	}
	topic := newAlarms(stack, env, cfg, props.MetricMathAlarms, stages, alarmed)
	addDailyBudgetAlarm(stack, env, cfg, topic) // review_settings.go
	if fns.sesEventsDLQ != nil {
		alarmOnDLQ(stack, topic, "SesEventsDlqAlarm", "SES events not recorded: delivery evidence is missing and uncertain sends may be resent; re-invoke SesEventsFunctionName with each SesEventsDlqUrl message body (docs/network-and-iam.md)", fns.sesEventsDLQ)
	}
	newOutputs(stack, api, table, raw, redacted, stages, sec, fns, topic)
	return stack
}

// newOutputs lists what operators and the devstack harness read from the
// stack (no exports: nothing else imports them).
func newOutputs(stack awscdk.Stack, api awsapigateway.RestApi, table awsdynamodb.Table, raw, redacted awss3.Bucket,
	stages []*stage, sec stackSecrets, fns stackFunctions, topic awssns.ITopic) {

	out := func(id string, v *string) {
		awscdk.NewCfnOutput(stack, jsii.String(id), &awscdk.CfnOutputProps{Value: v})
	}
	out("ApiId", api.RestApiId())
	out("ApiStage", api.DeploymentStage().StageName())
	out("ApiUrl", api.Url())
	out("JobsTableName", table.TableName())
	for _, s := range stages {
		out(s.id+"QueueUrl", s.queue.QueueUrl())
		out(s.id+"DlqUrl", s.dlq.QueueUrl())
	}
	out("RawBucketName", raw.BucketName())
	out("RedactedBucketName", redacted.BucketName())
	out("WebhookSecretArn", sec.webhook.SecretArn())
	if sec.swarmToken != nil { // for criticizer secret rotate|revoke-previous swarm
		out("SwarmTokenSecretArn", sec.swarmToken.SecretArn())
	}
	out("LlmSecretArn", sec.llm.SecretArn())
	out("SmtpSecretArn", sec.smtp.SecretArn())
	out("DeliveryKeySecretArn", sec.delivery.SecretArn())
	out("P4SecretArn", sec.p4.SecretArn())
	out("AlarmTopicArn", topic.TopicArn())
	out("WebhookFunctionName", fns.webhook.FunctionName())
	out("FetchFunctionName", fns.fetch.FunctionName())
	out("LlmFunctionName", fns.llm.FunctionName())
	out("NotifyFunctionName", fns.notify.FunctionName())
	out("SweeperFunctionName", fns.sweeper.FunctionName())
	if fns.sesEvents != nil {
		out("SesEventsFunctionName", fns.sesEvents.FunctionName())
		out("SesEventsDlqUrl", fns.sesEventsDLQ.QueueUrl())
	}
}

// stackSecrets are the credentials the functions read (values generated at
// deploy, replaced by the operator; none is in the template).
type stackSecrets struct {
	webhook, llm, p4, smtp awssecretsmanager.Secret
	swarmToken, swarmAPI   awssecretsmanager.Secret // nil unless swarmUrl is set
	// delivery is the delivery key (not a credential): the HMAC key the
	// outbox rows name their recipient by (docs/operating.md: never rotated).
	delivery awssecretsmanager.Secret
}

// newSecrets defines the Secrets Manager secrets.
func newSecrets(stack awscdk.Stack, cfg EnvConfig, removal awscdk.RemovalPolicy) stackSecrets {
	secret := func(id, desc string, gen *awssecretsmanager.SecretStringGenerator) awssecretsmanager.Secret {
		s := awssecretsmanager.NewSecret(stack, jsii.String(id), &awssecretsmanager.SecretProps{
			Description:          jsii.String(desc),
			GenerateSecretString: gen,
			RemovalPolicy:        removal,
			EncryptionKey:        dataKey(stack, cfg), // nil: the AWS-managed key
		})
		pinID(s, id)
		return s
	}
	webhookSecret := secret("WebhookSecret", "HMAC key shared with the Perforce trigger / Swarm",
		&awssecretsmanager.SecretStringGenerator{PasswordLength: jsii.Number(48), ExcludePunctuation: jsii.Bool(true)})
	llmSecret := secret("LlmSecret", "LLM provider credentials: {\"api_key\": ...}",
		&awssecretsmanager.SecretStringGenerator{SecretStringTemplate: jsii.String("{}"), GenerateStringKey: jsii.String("api_key"), ExcludePunctuation: jsii.Bool(true)})
	p4Secret := secret("P4Secret", "Perforce service user credentials: {\"password\": ...} or {\"ticket\": ...}",
		&awssecretsmanager.SecretStringGenerator{SecretStringTemplate: jsii.String("{}"), GenerateStringKey: jsii.String("password"), ExcludePunctuation: jsii.Bool(true)})
	var swarmTokenSecret, swarmAPISecret awssecretsmanager.Secret
	if cfg.SwarmURL != "" {
		swarmTokenSecret = secret("SwarmTokenSecret", "Bearer token Swarm sends as a static header (source: swarm)",
			&awssecretsmanager.SecretStringGenerator{PasswordLength: jsii.Number(48), ExcludePunctuation: jsii.Bool(true)})
		swarmAPISecret = secret("SwarmApiSecret", "Swarm API credentials: {\"user\": ..., \"ticket\": ...}",
			&awssecretsmanager.SecretStringGenerator{SecretStringTemplate: jsii.String(`{"user":"criticizer"}`), GenerateStringKey: jsii.String("ticket"), ExcludePunctuation: jsii.Bool(true)})
	}
	smtpSecret := secret("SmtpSecret", "SMTP relay credentials: {\"username\": ..., \"password\": ...}",
		&awssecretsmanager.SecretStringGenerator{SecretStringTemplate: jsii.String(`{"username":"criticizer"}`), GenerateStringKey: jsii.String("password"), ExcludePunctuation: jsii.Bool(true)})

	deliverySecret := secret("DeliveryKeySecret", "Delivery key: HMAC key of the outbox rows' recipients and e-mail tokens; never rotate (docs/operating.md)",
		&awssecretsmanager.SecretStringGenerator{PasswordLength: jsii.Number(64), ExcludePunctuation: jsii.Bool(true)})

	return stackSecrets{webhook: webhookSecret, llm: llmSecret, p4: p4Secret, smtp: smtpSecret, swarmToken: swarmTokenSecret, swarmAPI: swarmAPISecret,
		delivery: deliverySecret}
}

// pinID gives an L2 construct's CloudFormation resource a fixed logical id.
func pinID(c constructs.IConstruct, id string) {
	c.Node().DefaultChild().(awscdk.CfnResource).OverrideLogicalId(jsii.String(id))
}

func appLogLevel(l string) awslambda.ApplicationLogLevel {
	switch l {
	case "debug":
		return awslambda.ApplicationLogLevel_DEBUG
	case "warn":
		return awslambda.ApplicationLogLevel_WARN
	case "error":
		return awslambda.ApplicationLogLevel_ERROR
	}
	return awslambda.ApplicationLogLevel_INFO
}

func itoa(n int) *string { return jsii.String(strconv.Itoa(n)) }

// optItoa leaves a zero (= "use the function's default") setting unset.
func optItoa(n int) *string {
	if n == 0 {
		return nil
	}
	return itoa(n)
}

// Artifact expiry (rule RT-1): raw content at most 7 days, redacted 30. The
// sweeper's retention check is told the same numbers.
const (
	rawArtifactDays      = 7
	redactedArtifactDays = 30
)

// newData is the state section: the jobs table (TTL on expires_at, sweep
// index) and the raw and redacted artifact buckets (lifecycle expiry, access
// logs outside local).
func newData(stack awscdk.Stack, cfg EnvConfig, local bool, removal awscdk.RemovalPolicy) (awsdynamodb.Table, awss3.Bucket, awss3.Bucket) {
	// ---- state: jobs table -------------------------------------------------
	tp := &awsdynamodb.TableProps{
		PartitionKey:        &awsdynamodb.Attribute{Name: jsii.String("pk"), Type: awsdynamodb.AttributeType_STRING},
		SortKey:             &awsdynamodb.Attribute{Name: jsii.String("sk"), Type: awsdynamodb.AttributeType_STRING},
		BillingMode:         awsdynamodb.BillingMode_PAY_PER_REQUEST,
		TimeToLiveAttribute: jsii.String("expires_at"),
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(!local),
		},
		RemovalPolicy: removal,
	}
	if key := dataKey(stack, cfg); key != nil {
		tp.Encryption, tp.EncryptionKey = awsdynamodb.TableEncryption_CUSTOMER_MANAGED, key
	}
	table := awsdynamodb.NewTable(stack, jsii.String("JobsTable"), tp)
	table.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
		IndexName:      jsii.String("sweep"),
		PartitionKey:   &awsdynamodb.Attribute{Name: jsii.String("sweep_shard"), Type: awsdynamodb.AttributeType_STRING},
		SortKey:        &awsdynamodb.Attribute{Name: jsii.String("sweep_at"), Type: awsdynamodb.AttributeType_STRING},
		ProjectionType: awsdynamodb.ProjectionType_ALL,
	})
	// Sparse: only delivery rows in doubt (sending, sent awaiting
	// verification, reconciling) carry doubt/doubt_at (shared/outbox), so
	// the reconciler reads what needs it, never the delivery history.
	table.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
		IndexName:      jsii.String("doubt"),
		PartitionKey:   &awsdynamodb.Attribute{Name: jsii.String("doubt"), Type: awsdynamodb.AttributeType_STRING},
		SortKey:        &awsdynamodb.Attribute{Name: jsii.String("doubt_at"), Type: awsdynamodb.AttributeType_STRING},
		ProjectionType: awsdynamodb.ProjectionType_ALL,
	})
	pinID(table, "JobsTable")

	// ---- artifacts ---------------------------------------------------------
	var accessLogs awss3.Bucket
	if !local {
		// S3 server access logs: the audit trail of every artifact read.
		accessLogs = awss3.NewBucket(stack, jsii.String("AccessLogs"), &awss3.BucketProps{
			Encryption:        awss3.BucketEncryption_S3_MANAGED, // log delivery supports SSE-S3 only
			BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
			EnforceSSL:        jsii.Bool(true),
			Versioned:         jsii.Bool(false),
			ObjectOwnership:   awss3.ObjectOwnership_BUCKET_OWNER_ENFORCED,
			LifecycleRules: &[]*awss3.LifecycleRule{{
				Id:         jsii.String("expire-access-logs"),
				Expiration: awscdk.Duration_Days(jsii.Number(cfg.AccessLogRetentionDays)),
			}},
			RemovalPolicy: removal,
		})
		pinID(accessLogs, "AccessLogs")
	}
	artifactBucket := func(id string, days int, logPrefix string) awss3.Bucket {
		bp := &awss3.BucketProps{
			Encryption:        awss3.BucketEncryption_S3_MANAGED,
			BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
			EnforceSSL:        jsii.Bool(true),
			Versioned:         jsii.Bool(false),
			ObjectOwnership:   awss3.ObjectOwnership_BUCKET_OWNER_ENFORCED,
			LifecycleRules: &[]*awss3.LifecycleRule{{
				Id:                                  jsii.String("expire-artifacts"),
				Expiration:                          awscdk.Duration_Days(jsii.Number(days)),
				AbortIncompleteMultipartUploadAfter: awscdk.Duration_Days(jsii.Number(1)),
			}},
			// Never AutoDeleteObjects: it adds a Node.js custom resource.
			RemovalPolicy: removal,
		}
		if key := dataKey(stack, cfg); key != nil {
			bp.Encryption, bp.EncryptionKey, bp.BucketKeyEnabled = awss3.BucketEncryption_KMS, key, jsii.Bool(true)
		}
		if accessLogs != nil {
			bp.ServerAccessLogsBucket = accessLogs
			bp.ServerAccessLogsPrefix = jsii.String(logPrefix)
		}
		b := awss3.NewBucket(stack, jsii.String(id), bp)
		pinID(b, id)
		return b
	}
	raw := artifactBucket("RawArtifacts", rawArtifactDays, "raw/")
	redacted := artifactBucket("RedactedArtifacts", redactedArtifactDays, "redacted/")
	return table, raw, redacted
}

// newQueues is the queues section: per stage a queue whose visibility timeout
// is the lease, and its DLQ (redrive after maxAttempts+3 receives).
func newQueues(stack awscdk.Stack, cfg EnvConfig, removal awscdk.RemovalPolicy) (fetch, llm, notify *stage) {
	// ---- queues ------------------------------------------------------------
	lease := awscdk.Duration_Seconds(jsii.Number(cfg.LeaseSeconds))
	newStage := func(name, id string) *stage {
		visibility := lease
		if name == "llm" {
			// At least the llm function's timeout (AWS requires it); the
			// stage shortens each claimed message's visibility to the lease.
			visibility = awscdk.Duration_Seconds(jsii.Number(cfg.ReviewTimeoutSeconds))
		}
		dlq := newDLQ(stack, cfg, id+"DLQ", lease, removal)
		enc, key := queueEncryption(stack, cfg)
		q := awssqs.NewQueue(stack, jsii.String(id+"Queue"), &awssqs.QueueProps{
			Encryption:          enc,
			EncryptionMasterKey: key,
			EnforceSSL:          jsii.Bool(true),
			VisibilityTimeout:   visibility,
			RetentionPeriod:     awscdk.Duration_Days(jsii.Number(4)),
			DeadLetterQueue: &awssqs.DeadLetterQueue{
				Queue:           dlq,
				MaxReceiveCount: jsii.Number(cfg.MaxAttempts + 3),
			},
			RemovalPolicy: removal,
		})
		pinID(q, id+"Queue")
		return &stage{name: name, id: id, queue: q, dlq: dlq}
	}
	return newStage("fetch", "Fetch"), newStage("llm", "Llm"), newStage("notify", "Notify")
}

// queueEncryption: the customer-managed key when configured, else SQS-managed SSE.
func queueEncryption(stack awscdk.Stack, cfg EnvConfig) (awssqs.QueueEncryption, awskms.IKey) {
	if key := dataKey(stack, cfg); key != nil {
		return awssqs.QueueEncryption_KMS, key
	}
	return awssqs.QueueEncryption_SQS_MANAGED, nil
}

// newDLQ is a dead-letter queue: 14 days' retention, encrypted, TLS only.
func newDLQ(stack awscdk.Stack, cfg EnvConfig, id string, visibility awscdk.Duration, removal awscdk.RemovalPolicy) awssqs.Queue {
	enc, key := queueEncryption(stack, cfg)
	dlq := awssqs.NewQueue(stack, jsii.String(id), &awssqs.QueueProps{
		Encryption:          enc,
		EncryptionMasterKey: key,
		EnforceSSL:          jsii.Bool(true),
		RetentionPeriod:     awscdk.Duration_Days(jsii.Number(14)),
		VisibilityTimeout:   visibility,
		RemovalPolicy:       removal,
	})
	pinID(dlq, id)
	return dlq
}

// newAPI is the API section: the REST API (throttled, JSON access logs) with
// the webhook intake and job status routes on the webhook function.
func newAPI(stack awscdk.Stack, env string, cfg EnvConfig, removal awscdk.RemovalPolicy, webhookFn awslambda.Function) awsapigateway.RestApi {
	// ---- API ---------------------------------------------------------------
	apiLogs := awslogs.NewLogGroup(stack, jsii.String("ApiAccessLogs"), &awslogs.LogGroupProps{
		Retention:     retentionDays[cfg.LogRetentionDays],
		RemovalPolicy: removal,
		EncryptionKey: dataKey(stack, cfg),
	})
	pinID(apiLogs, "ApiAccessLogs")
	api := awsapigateway.NewRestApi(stack, jsii.String("Api"), &awsapigateway.RestApiProps{
		RestApiName:    jsii.String(StackName(env) + "-api"),
		Description:    jsii.String("Criticizer webhook intake and job status (HMAC-authenticated by the app)"),
		EndpointTypes:  &[]awsapigateway.EndpointType{awsapigateway.EndpointType_REGIONAL},
		CloudWatchRole: jsii.Bool(false),
		DeployOptions: &awsapigateway.StageOptions{
			StageName:            jsii.String(env),
			MetricsEnabled:       jsii.Bool(true),
			TracingEnabled:       jsii.Bool(true), // X-Ray: where a slow or failed intake spent its time
			ThrottlingRateLimit:  jsii.Number(cfg.APIRateLimit),
			ThrottlingBurstLimit: jsii.Number(cfg.APIBurstLimit),
			AccessLogDestination: awsapigateway.NewLogGroupLogDestination(apiLogs),
			AccessLogFormat: awsapigateway.AccessLogFormat_JsonWithStandardFields(&awsapigateway.JsonWithStandardFieldProps{
				Caller: jsii.Bool(false), HttpMethod: jsii.Bool(true), Ip: jsii.Bool(true), Protocol: jsii.Bool(true),
				RequestTime: jsii.Bool(true), ResourcePath: jsii.Bool(true), ResponseLength: jsii.Bool(true),
				Status: jsii.Bool(true), User: jsii.Bool(false),
			}),
		},
	})
	pinID(api, "Api")
	api.Node().TryRemoveChild(jsii.String("Endpoint")) // RestApi's own URL output; ApiUrl below replaces it
	if account := apiGatewayAccount(stack, cfg); account != nil {
		// Access logging fails to deploy until the account has the role.
		api.DeploymentStage().Node().AddDependency(account)
	}
	integration := awsapigateway.NewLambdaIntegration(webhookFn, &awsapigateway.LambdaIntegrationOptions{Proxy: jsii.Bool(true)})
	noKey := &awsapigateway.MethodOptions{ApiKeyRequired: jsii.Bool(false), AuthorizationType: awsapigateway.AuthorizationType_NONE}
	hooks := api.Root().AddResource(jsii.String("webhooks"), nil)
	hooks.AddResource(jsii.String("changelist"), nil).AddMethod(jsii.String("POST"), integration, noKey)
	// P4 Code Review's outbound webhooks (infra/swarmevents.go): the route
	// is always there; the function answers 404 unless swarmEvents is on.
	hooks.AddResource(jsii.String("swarm-events"), nil).AddMethod(jsii.String("POST"), integration, noKey)
	api.Root().AddResource(jsii.String("jobs"), nil).AddResource(jsii.String("{id}"), nil).
		AddMethod(jsii.String("GET"), integration, noKey)
	return api
}

// alarmOnDLQ pages when a dead-letter queue holds a message.
func alarmOnDLQ(stack awscdk.Stack, topic awssns.ITopic, id, desc string, dlq awssqs.Queue) {
	a := awscloudwatch.NewAlarm(stack, jsii.String(id), &awscloudwatch.AlarmProps{
		AlarmDescription: jsii.String(desc),
		Metric: dlq.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{
			Period: awscdk.Duration_Seconds(jsii.Number(60)), Statistic: jsii.String("Maximum")}),
		Threshold:          jsii.Number(0),
		EvaluationPeriods:  jsii.Number(1),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
	})
	pinID(a, id)
	a.AddAlarmAction(awscloudwatchactions.NewSnsAction(topic))
}

// retentionRoundAgeHours is how long after the last complete retention
// round began RetentionRoundAgeAlarm pages: a round a day, and a day's slack.
const retentionRoundAgeHours = 48

// namedFn is a function and the id prefix of its alarms.
type namedFn struct {
	id string
	fn awslambda.Function
}

// newAlarms is the alarms section: the environment's alarm topic (given or
// created, optional e-mail subscription), every alarm paging it, and the
// pipeline dashboard. It returns the topic.
func newAlarms(stack awscdk.Stack, env string, cfg EnvConfig, mathAlarms bool, stages []*stage, fns []namedFn) awssns.ITopic {
	// ---- alarms -------------------------------------------------------------
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
	alarmAction := awscloudwatchactions.NewSnsAction(topic)
	minute := awscdk.Duration_Seconds(jsii.Number(60))
	addAlarm := func(id, desc string, metric awscloudwatch.IMetric) {
		a := awscloudwatch.NewAlarm(stack, jsii.String(id), &awscloudwatch.AlarmProps{
			AlarmDescription:   jsii.String(desc),
			Metric:             metric,
			Threshold:          jsii.Number(0),
			EvaluationPeriods:  jsii.Number(1),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		})
		pinID(a, id)
		a.AddAlarmAction(alarmAction)
	}
	for _, s := range stages {
		addAlarm(s.id+"DlqAlarm", "Messages in the "+s.name+" DLQ: triage and replay",
			s.dlq.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Period: minute, Statistic: jsii.String("Maximum")}))
	}
	for _, f := range fns {
		addAlarm(f.id+"ErrorsAlarm", f.id+" function errors",
			f.fn.MetricErrors(&awscloudwatch.MetricOptions{Period: minute, Statistic: jsii.String("Sum")}))
		addAlarm(f.id+"ThrottlesAlarm", f.id+" function throttled",
			f.fn.MetricThrottles(&awscloudwatch.MetricOptions{Period: minute, Statistic: jsii.String("Sum")}))
	}
	// Backlog: a stage message waiting longer than a few leases means the stage
	// is stuck (for llm, beyond the time a long review may run).
	for _, s := range stages {
		threshold := 5 * cfg.LeaseSeconds
		if s.name == "llm" {
			threshold += cfg.ReviewTimeoutSeconds
		}
		a := awscloudwatch.NewAlarm(stack, jsii.String(s.id+"BacklogAgeAlarm"), &awscloudwatch.AlarmProps{
			AlarmDescription:   jsii.String("Oldest " + s.name + " message older than 5 leases: the stage is not keeping up"),
			Metric:             s.queue.MetricApproximateAgeOfOldestMessage(&awscloudwatch.MetricOptions{Period: minute, Statistic: jsii.String("Maximum")}),
			Threshold:          jsii.Number(threshold),
			EvaluationPeriods:  jsii.Number(5),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		})
		pinID(a, s.id+"BacklogAgeAlarm")
		a.AddAlarmAction(alarmAction)
	}
	// Application metrics (obs.Metrics, EMF, namespace Criticizer), summed over
	// their other dimensions with a Metrics Insights query.
	insights := func(metric, where string) awscloudwatch.IMetric {
		q := "SELECT SUM(" + metric + ") FROM Criticizer WHERE Environment = '" + env + "'"
		if where != "" {
			q += " AND " + where
		}
		return awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
			Expression: jsii.String(q), Period: awscdk.Duration_Minutes(jsii.Number(5)),
			UsingMetrics: &map[string]awscloudwatch.IMetric{},
			Label:        jsii.String(metric),
		})
	}
	appMetric := func(name string, dims map[string]*string) awscloudwatch.IMetric {
		dims["Environment"] = jsii.String(env) // obs.Metrics adds it to every metric
		return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
			Namespace: jsii.String("Criticizer"), MetricName: jsii.String(name), DimensionsMap: &dims,
			Period: awscdk.Duration_Minutes(jsii.Number(5)), Statistic: jsii.String("Sum"),
		})
	}
	addAlarm("DeliveryUnconfirmedAlarm", "A notification could not be confirmed sent or unsent: check the provider, then confirm or requeue",
		appMetric("DeadLettered", map[string]*string{"Stage": jsii.String("notify"), "ErrorClass": jsii.String("DELIVERY_UNCONFIRMED")}))
	// A security failure (the Perforce server's key changed, or the service
	// user's protections cannot prove whole changes) pages on its first
	// dead letter: only an operator can settle it.
	addAlarm("SecurityFailureAlarm", "The fetch stage refused Perforce for a security reason (server key changed, or protections that hide files under the allow-list): see docs/operating.md, SecurityFailureAlarm",
		appMetric("DeadLettered", map[string]*string{"Stage": jsii.String("fetch"), "ErrorClass": jsii.String("SECURITY_FAILURE")}))
	for _, s := range stages {
		addAlarm(s.id+"LeaseLostAlarm", "Workers of "+s.name+" lose their lease: leaseSeconds too short or a host clock off",
			appMetric("LeaseLost", map[string]*string{"Stage": jsii.String(s.name)}))
	}
	for _, m := range []string{"RetentionRowsOverdue", "RetentionRowsWithoutTTL", "RetentionObjectsOverdue"} {
		addAlarm(m+"Alarm", "The daily retention check found data past its TTL ("+m+"): see the sweeper's retention_violation log lines",
			appMetric(m, map[string]*string{}))
	}
	// A retention round a day: pages when none has completed for two days
	// (a round that stops completing), and when the hourly runs stop
	// reporting for three hours (missing data breaches).
	roundAge := awscloudwatch.NewAlarm(stack, jsii.String("RetentionRoundAgeAlarm"), &awscloudwatch.AlarmProps{
		AlarmDescription: jsii.String("No retention round has completed for 2 days, or the hourly retention runs stopped: see docs/operating.md#retentionroundagealarm"),
		Metric: awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
			Namespace: jsii.String("Criticizer"), MetricName: jsii.String("RetentionRoundAgeHours"),
			DimensionsMap: &map[string]*string{"Environment": jsii.String(env)},
			Period:        awscdk.Duration_Hours(jsii.Number(1)), Statistic: jsii.String("Maximum"),
		}),
		Threshold:          jsii.Number(retentionRoundAgeHours),
		EvaluationPeriods:  jsii.Number(3),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
		TreatMissingData:   awscloudwatch.TreatMissingData_BREACHING,
	})
	pinID(roundAge, "RetentionRoundAgeAlarm")
	roundAge.AddAlarmAction(alarmAction)
	addAlarm("OutboxReconcilingAlarm", "Outbox rows sent without provider evidence or stuck sending: sends blocked, see `criticizer outbox`",
		appMetric("OutboxReconciling", map[string]*string{}))
	// Rule OB-5: every ordering-contract violation the reconciler detects
	// pages, also the ones it repairs itself; a redelivery that failed for
	// good pages too.
	addAlarm("OutboxViolationsAlarm", "The outbox ordering contract was violated (row stuck sending or marked sent without provider evidence); repaired or not, see the sweeper's log and `criticizer outbox reconcile`",
		appMetric("OutboxViolations", map[string]*string{}))
	// The sweeper's passes are bounded in time and resume where they
	// stopped; work they leave for the next pass in every pass of 15
	// minutes (3 periods) is a backlog they cannot drain.
	for _, m := range []string{"SweepBacklog", "ReconcileBacklog"} {
		a := awscloudwatch.NewAlarm(stack, jsii.String(m+"Alarm"), &awscloudwatch.AlarmProps{
			AlarmDescription:   jsii.String("The sweeper's passes leave work behind for 15 minutes (" + m + "): see docs/operating.md#sweeper-backlog-alarms"),
			Metric:             appMetric(m, map[string]*string{}),
			Threshold:          jsii.Number(0),
			EvaluationPeriods:  jsii.Number(3),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		})
		pinID(a, m+"Alarm")
		a.AddAlarmAction(alarmAction)
	}
	addAlarm("RedeliveryFailedAlarm", "A repaired delivery of a succeeded job failed for good: see the job's history, fix the recipient, `criticizer outbox reconcile resolve`",
		appMetric("RedeliveryFailed", map[string]*string{"Stage": jsii.String("notify")}))
	// The prompt canary: while a candidate prompt version serves a share of jobs,
	// page when its rejected-response rate per model call stays above twice the
	// stable version's for 30 minutes (6 × 5 min). Metric math: not on the emulator.
	if mathAlarms && cfg.PromptCandidatePercent > 0 {
		perVersion := func(name, version string) awscloudwatch.IMetric {
			return appMetric(name, map[string]*string{"Stage": jsii.String("llm"), "PromptVersion": jsii.String(version)})
		}
		canary := awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
			Expression: jsii.String("IF(sc > 0 AND cc > 0, (cr / cc) - 2 * (sr / sc), 0)"),
			UsingMetrics: &map[string]awscloudwatch.IMetric{
				"cr": perVersion("ReviewResponsesRejected", cfg.PromptCandidateVersion),
				"cc": perVersion("ReviewModelCalls", cfg.PromptCandidateVersion),
				"sr": perVersion("ReviewResponsesRejected", result.StablePromptVersion),
				"sc": perVersion("ReviewModelCalls", result.StablePromptVersion),
			},
			Period: awscdk.Duration_Minutes(jsii.Number(5)),
			Label:  jsii.String("candidate rejection rate above 2x stable"),
		})
		a := awscloudwatch.NewAlarm(stack, jsii.String("PromptCanaryAlarm"), &awscloudwatch.AlarmProps{
			AlarmDescription:   jsii.String("Prompt " + cfg.PromptCandidateVersion + ": response_rejected above 2x the stable prompt's for 30 min; set promptCandidatePercent to 0"),
			Metric:             canary,
			Threshold:          jsii.Number(0),
			EvaluationPeriods:  jsii.Number(6),
			DatapointsToAlarm:  jsii.Number(6),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		})
		pinID(a, "PromptCanaryAlarm")
		a.AddAlarmAction(alarmAction)
	}
	addSLOAlarms(stack, env, cfg, alarmAction)
	addAcceptanceAlarm(stack, env, cfg, mathAlarms, alarmAction)
	// Escalations carry an ErrorClass dimension: summed by a Metrics Insights
	// query. MiniStack rejects metric-math alarms, so the emulator harness sets
	// context metricMathAlarms=false and this one alarm is left out there.
	if mathAlarms {
		addAlarm("EscalationsAlarm", "A stage escalated a job to an operator", insights("Escalations", ""))
	}

	// ---- dashboard: one row per stage -----------------------------------------
	dash := awscloudwatch.NewDashboard(stack, jsii.String("Dashboard"), &awscloudwatch.DashboardProps{
		DashboardName: jsii.String(StackName(env) + "-pipeline"),
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
					insights("StageSucceeded", stageWhere), insights("StageRetried", stageWhere),
					insights("DeadLettered", stageWhere), insights("LeaseLost", stageWhere),
				},
			}),
			awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{
				Title: jsii.String(s.name + ": function"), Width: jsii.Number(6),
				Left:  &[]awscloudwatch.IMetric{s.consumer.MetricInvocations(nil), s.consumer.MetricErrors(nil), s.consumer.MetricThrottles(nil)},
				Right: &[]awscloudwatch.IMetric{s.consumer.MetricDuration(nil)},
			}),
		)
	}
	return topic
}

// apiGatewayAccount sets API Gateway's account-level CloudWatch role, which
// stage access logging needs (a fresh account has none): with "create" the
// stack creates the role, with a role ARN it uses that one, with "existing"
// it leaves the account as it is (and returns nil). The setting is per
// account and region: one stack per account should create it, the others
// say "existing" (docs/network-and-iam.md).
func apiGatewayAccount(stack awscdk.Stack, cfg EnvConfig) awsapigateway.CfnAccount {
	var arn *string
	switch cfg.APIGatewayCloudWatchRole {
	case "existing":
		return nil
	case "create":
		role := awsiam.NewRole(stack, jsii.String("ApiGatewayCloudWatchRole"), &awsiam.RoleProps{
			AssumedBy: awsiam.NewServicePrincipal(jsii.String("apigateway.amazonaws.com"), nil),
			ManagedPolicies: &[]awsiam.IManagedPolicy{awsiam.ManagedPolicy_FromAwsManagedPolicyName(
				jsii.String("service-role/AmazonAPIGatewayPushToCloudWatchLogs"))},
		})
		pinID(role, "ApiGatewayCloudWatchRole")
		role.ApplyRemovalPolicy(awscdk.RemovalPolicy_RETAIN) // other stages in the account may rely on it
		arn = role.RoleArn()
	default:
		arn = jsii.String(cfg.APIGatewayCloudWatchRole)
	}
	account := awsapigateway.NewCfnAccount(stack, jsii.String("ApiGatewayAccount"), &awsapigateway.CfnAccountProps{CloudWatchRoleArn: arn})
	account.OverrideLogicalId(jsii.String("ApiGatewayAccount"))
	account.ApplyRemovalPolicy(awscdk.RemovalPolicy_RETAIN, nil)
	return account
}
