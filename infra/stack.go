package main

import (
	"cmp"
	"strconv"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"

	"github.com/aws/jsii-runtime-go"

	"github.com/criticizer/criticizer/shared/settings"
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
	name     string // spec stage name: fetch, llm, notify
	id       string // logical id prefix: Fetch, Llm, Notify
	queue    awssqs.Queue
	dlq      awssqs.Queue
	consumer awslambda.Function
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
	fp := functionsProps{env: env, cfg: cfg, assetRoot: props.AssetRoot, removal: removal,
		table: table, raw: raw, redacted: redacted, fetch: fetchStage, llm: llmStage, notify: notifyStage, secrets: sec}
	fns := newFunctions(stack, fp)
	wireNotifyChannels(cfg, sec, fns.notify, fns.sweeper)
	api := newAPI(stack, env, cfg, removal, fns.webhook)
	newJobPage(fns.factory, fp, api, fns.webhook, fns.llm)
	topic := newAlarms(stack, env, cfg, props.MetricMathAlarms, stages, fns)
	newOutputs(stack, api, table, raw, redacted, stages, fns.sesEventsDLQ, topic)
	return stack
}

// newOutputs lists what operators and the devstack harness read from the
// stack (no exports: nothing else imports them). Each secret and function
// adds its own (newSecrets, newFn).
func newOutputs(stack awscdk.Stack, api awsapigateway.RestApi, table awsdynamodb.Table, raw, redacted awss3.Bucket,
	stages []*stage, sesEventsDLQ awssqs.Queue, topic awssns.ITopic) {
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
	out("AlarmTopicArn", topic.TopicArn())
	if sesEventsDLQ != nil {
		out("SesEventsDlqUrl", sesEventsDLQ.QueueUrl())
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
	// random is a generated value; field a generated value under key in a
	// JSON object (the operator fills in the others).
	random := func(n int) *awssecretsmanager.SecretStringGenerator {
		return &awssecretsmanager.SecretStringGenerator{PasswordLength: jsii.Number(n), ExcludePunctuation: jsii.Bool(true)}
	}
	field := func(template, key string) *awssecretsmanager.SecretStringGenerator {
		return &awssecretsmanager.SecretStringGenerator{SecretStringTemplate: jsii.String(template), GenerateStringKey: jsii.String(key), ExcludePunctuation: jsii.Bool(true)}
	}
	secret := func(id, desc string, gen *awssecretsmanager.SecretStringGenerator) awssecretsmanager.Secret {
		return newSecret(stack, cfg, removal, id, desc, gen)
	}
	sec := stackSecrets{
		webhook: secret("WebhookSecret", "HMAC key shared with the Perforce trigger / Swarm", random(48)),
		llm:     secret("LlmSecret", "LLM provider credentials: {\"api_key\": ...}", field("{}", "api_key")),
		p4:      secret("P4Secret", "Perforce service user credentials: {\"password\": ...} or {\"ticket\": ...}", field("{}", "password")),
	}
	if cfg.SwarmURL != "" {
		sec.swarmToken = secret("SwarmTokenSecret", "Bearer token Swarm sends as a static header (source: swarm)", random(48))
		sec.swarmAPI = secret("SwarmApiSecret", "Swarm API credentials: {\"user\": ..., \"ticket\": ...}", field(`{"user":"criticizer"}`, "ticket"))
	}
	sec.smtp = secret("SmtpSecret", "SMTP relay credentials: {\"username\": ..., \"password\": ...}", field(`{"username":"criticizer"}`, "password"))
	sec.delivery = secret("DeliveryKeySecret", "Delivery key: HMAC key of the outbox rows' recipients and e-mail tokens; never rotate (docs/operating.md)", random(64))
	return sec
}

// newSecret is a secret encrypted with the data key (nil: the AWS-managed
// key) and its stack output <id>Arn, which `criticizer secret` and the
// operator fill it by.
func newSecret(stack awscdk.Stack, cfg EnvConfig, removal awscdk.RemovalPolicy, id, desc string, gen *awssecretsmanager.SecretStringGenerator) awssecretsmanager.Secret {
	s := awssecretsmanager.NewSecret(stack, jsii.String(id), &awssecretsmanager.SecretProps{
		Description:          jsii.String(desc),
		GenerateSecretString: gen,
		RemovalPolicy:        removal,
		EncryptionKey:        dataKey(stack, cfg),
	})
	pinID(s, id)
	awscdk.NewCfnOutput(stack, jsii.String(id+"Arn"), &awscdk.CfnOutputProps{Value: s.SecretArn()})
	return s
}

// readSecret gives fn a secret's ARN as the variable named (its handle's
// Name) and read access to it.
func readSecret(fn awslambda.Function, name string, s awssecretsmanager.Secret) {
	fn.AddEnvironment(jsii.String(name), s.SecretArn(), nil)
	s.GrantRead(fn, nil)
}

// pinID gives an L2 construct's CloudFormation resource a fixed logical id.
func pinID(c constructs.IConstruct, id string) {
	c.Node().DefaultChild().(awscdk.CfnResource).OverrideLogicalId(jsii.String(id))
}

// newData is the state section: the jobs table (TTL on expires_at, sweep
// index) and the raw and redacted artifact buckets (lifecycle expiry, access
// logs outside local).
func newData(stack awscdk.Stack, cfg EnvConfig, local bool, removal awscdk.RemovalPolicy) (awsdynamodb.Table, awss3.Bucket, awss3.Bucket) {
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
	// The sweep index, and the doubt index, sparse: only delivery rows in
	// doubt (sending, sent awaiting verification, reconciling) carry
	// doubt/doubt_at (shared/outbox), so the reconciler reads what needs
	// it, never the delivery history.
	for _, ix := range [][3]string{{"sweep", "sweep_shard", "sweep_at"}, {"doubt", "doubt", "doubt_at"}} {
		table.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
			IndexName:      jsii.String(ix[0]),
			PartitionKey:   &awsdynamodb.Attribute{Name: jsii.String(ix[1]), Type: awsdynamodb.AttributeType_STRING},
			SortKey:        &awsdynamodb.Attribute{Name: jsii.String(ix[2]), Type: awsdynamodb.AttributeType_STRING},
			ProjectionType: awsdynamodb.ProjectionType_ALL,
		})
	}
	pinID(table, "JobsTable")

	var accessLogs awss3.Bucket
	if !local {
		// S3 server access logs: the audit trail of every artifact read.
		accessLogs = newBucket(stack, "AccessLogs", &awss3.BucketProps{
			Encryption: awss3.BucketEncryption_S3_MANAGED, // log delivery supports SSE-S3 only
			LifecycleRules: &[]*awss3.LifecycleRule{{
				Id:         jsii.String("expire-access-logs"),
				Expiration: awscdk.Duration_Days(jsii.Number(cfg.AccessLogRetentionDays)),
			}},
			RemovalPolicy: removal,
		})
	}
	// Artifact expiry (rule RT-1): raw content at most 7 days, redacted 30,
	// as declared; the sweeper's retention check is told the same (newSweeperFunction).
	artifactBucket := func(id string, ttl settings.IntVar, logPrefix string) awss3.Bucket {
		days, _ := strconv.Atoi(ttl.Accepts.Default)
		bp := &awss3.BucketProps{
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
		return newBucket(stack, id, bp)
	}
	raw := artifactBucket("RawArtifacts", settings.RawArtifactTTLDays, "raw/")
	redacted := artifactBucket("RedactedArtifacts", settings.RedactedArtifactTTLDays, "redacted/")
	return table, raw, redacted
}

// newBucket is a private bucket: public access blocked, TLS only, owner
// enforced, SSE-S3 and unversioned unless bp says otherwise.
func newBucket(stack awscdk.Stack, id string, bp *awss3.BucketProps) awss3.Bucket {
	bp.BlockPublicAccess, bp.EnforceSSL = awss3.BlockPublicAccess_BLOCK_ALL(), jsii.Bool(true)
	bp.ObjectOwnership = awss3.ObjectOwnership_BUCKET_OWNER_ENFORCED
	bp.Encryption = cmp.Or(bp.Encryption, awss3.BucketEncryption_S3_MANAGED)
	if bp.Versioned == nil {
		bp.Versioned = jsii.Bool(false)
	}
	b := awss3.NewBucket(stack, jsii.String(id), bp)
	pinID(b, id)
	return b
}

// newQueues is the queues section: per stage a queue whose visibility timeout
// is the lease, and its DLQ (redrive after maxAttempts+3 receives).
func newQueues(stack awscdk.Stack, cfg EnvConfig, removal awscdk.RemovalPolicy) (fetch, llm, notify *stage) {
	lease := awscdk.Duration_Seconds(jsii.Number(cfg.LeaseSeconds))
	newStage := func(name, id string) *stage {
		visibility := lease
		if name == "llm" {
			// At least the llm function's timeout (AWS requires it); the
			// stage shortens each claimed message's visibility to the lease.
			visibility = awscdk.Duration_Seconds(jsii.Number(cfg.ReviewTimeoutSeconds))
		}
		dlq := newDLQ(stack, cfg, id+"DLQ", lease, removal)
		q := newQueue(stack, cfg, id+"Queue", removal, &awssqs.QueueProps{
			VisibilityTimeout: visibility,
			RetentionPeriod:   awscdk.Duration_Days(jsii.Number(4)),
			DeadLetterQueue:   &awssqs.DeadLetterQueue{Queue: dlq, MaxReceiveCount: jsii.Number(cfg.MaxAttempts + 3)},
		})
		return &stage{name: name, id: id, queue: q, dlq: dlq}
	}
	return newStage("fetch", "Fetch"), newStage("llm", "Llm"), newStage("notify", "Notify")
}

// newQueue is a TLS-only queue encrypted with the data key when configured,
// else with SQS-managed SSE.
func newQueue(stack awscdk.Stack, cfg EnvConfig, id string, removal awscdk.RemovalPolicy, qp *awssqs.QueueProps) awssqs.Queue {
	qp.Encryption, qp.EnforceSSL, qp.RemovalPolicy = awssqs.QueueEncryption_SQS_MANAGED, jsii.Bool(true), removal
	if key := dataKey(stack, cfg); key != nil {
		qp.Encryption, qp.EncryptionMasterKey = awssqs.QueueEncryption_KMS, key
	}
	q := awssqs.NewQueue(stack, jsii.String(id), qp)
	pinID(q, id)
	return q
}

// newDLQ is a dead-letter queue: 14 days' retention.
func newDLQ(stack awscdk.Stack, cfg EnvConfig, id string, visibility awscdk.Duration, removal awscdk.RemovalPolicy) awssqs.Queue {
	return newQueue(stack, cfg, id, removal, &awssqs.QueueProps{RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)), VisibilityTimeout: visibility})
}

// newAPI is the API section: the REST API (throttled, JSON access logs) with
// the webhook intake and job status routes on the webhook function.
func newAPI(stack awscdk.Stack, env string, cfg EnvConfig, removal awscdk.RemovalPolicy, webhookFn awslambda.Function) awsapigateway.RestApi {
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
