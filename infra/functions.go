package main

import (
	"cmp"
	"maps"
	"path/filepath"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudtrail"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsses"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/criticizer/criticizer/shared/llm"
	"github.com/criticizer/criticizer/shared/settings"
)

// functionsProps is what the functions section is wired to.
type functionsProps struct {
	env, assetRoot     string
	cfg                EnvConfig
	removal            awscdk.RemovalPolicy
	table              awsdynamodb.Table
	raw, redacted      awss3.Bucket
	fetch, llm, notify *stage
	secrets            stackSecrets
}

// stackFunctions are the pipeline's Lambda functions.
type stackFunctions struct {
	webhook, fetch, llm, notify, sweeper awslambda.Function
	// sesEventsDLQ keeps the SES events the sesevents function could not
	// record (emailProvider ses, else nil).
	sesEventsDLQ awssqs.Queue
	factory      *functionFactory // for the job page (jobpage.go)
}

type namedFn struct {
	id string
	fn awslambda.Function
}

// newFunctions defines the functions, each with its configuration and its
// least-privilege grants, then the raw bucket's access policy, the stages'
// event source mappings and the sweeper's schedules.
func newFunctions(stack awscdk.Stack, p functionsProps) stackFunctions {
	f := newFunctionFactory(stack, p)
	fns := stackFunctions{
		webhook: newWebhookFunction(f, p),
		fetch:   newFetchFunction(f, p),
		llm:     newLLMFunction(f, p),
		notify:  newNotifyFunction(f, p),
		sweeper: newSweeperFunction(f, p),
	}
	if p.cfg.EmailProvider == "ses" {
		fns.sesEventsDLQ = newSESEvents(f, p)
	}
	restrictRawBucket(stack, p.cfg, p.raw, fns.fetch)
	// Each stage's consumer reads its queue (the consume grant comes with
	// the event source mapping), W of rule LC-5 at a time.
	for _, c := range []struct {
		s  *stage
		fn awslambda.Function
		w  int
	}{{p.fetch, fns.fetch, p.cfg.MaxConcurrency.Fetch}, {p.llm, fns.llm, p.cfg.MaxConcurrency.LLM}, {p.notify, fns.notify, p.cfg.MaxConcurrency.Notify}} {
		c.s.consumer = c.fn
		c.fn.AddEventSource(awslambdaeventsources.NewSqsEventSource(c.s.queue, &awslambdaeventsources.SqsEventSourceProps{
			BatchSize:               jsii.Number(p.cfg.BatchSize),
			ReportBatchItemFailures: jsii.Bool(true),
			// W = MaximumConcurrency × BatchSize: a batch is worked concurrently.
			MaxConcurrency: jsii.Number(c.w / p.cfg.BatchSize),
		}))
	}
	newSchedules(stack, p.cfg, fns.sweeper)
	newDigest(f, p, fns.llm)
	newDoctorFunction(f, p) // doctor.go
	fns.factory = f
	return fns
}

// functionFactory builds functions with what they all share: runtime,
// architecture, log group, log level, the common environment and, for
// each, the settings whose declarations name it (declaredEnv).
type functionFactory struct {
	stack          awscdk.Stack
	env, assetRoot string
	cfg            EnvConfig
	removal        awscdk.RemovalPolicy
	arch           awslambda.Architecture
	common         map[string]*string
	vpc            *vpcPlacement          // nil: no VPC
	p4Layer        awslambda.LayerVersion // nil: local
	// values is cfg as cdk.json spells it, the settings' values by key.
	values map[string]any
	made   []namedFn // the functions newFn made, but the doctor: alarms watch them
}

func newFunctionFactory(stack awscdk.Stack, p functionsProps) *functionFactory {
	cfg := p.cfg
	arch := awslambda.Architecture_ARM_64()
	if cfg.Architecture == "x86_64" {
		arch = awslambda.Architecture_X86_64()
	}
	values, _ := jsonKeys(cfg) // validateDeclared reported an error already
	return &functionFactory{values: values, stack: stack, env: p.env, assetRoot: p.assetRoot, cfg: cfg, removal: p.removal, arch: arch,
		vpc: newVPCPlacement(stack, cfg), p4Layer: newP4Layer(stack, cfg, arch, p.removal),
		common: map[string]*string{
			settings.CriticizerEnv.Name:  jsii.String(p.env),
			settings.JobsTable.Name:      p.table.TableName(),
			settings.FetchQueueURL.Name:  p.fetch.queue.QueueUrl(),
			settings.LLMQueueURL.Name:    p.llm.queue.QueueUrl(),
			settings.NotifyQueueURL.Name: p.notify.queue.QueueUrl(),
			settings.FetchDLQURL.Name:    p.fetch.dlq.QueueUrl(),
			settings.LLMDLQURL.Name:      p.llm.dlq.QueueUrl(),
			settings.NotifyDLQURL.Name:   p.notify.dlq.QueueUrl(),
			settings.RawBucket.Name:      p.raw.BucketName(),
			settings.RedactedBucket.Name: p.redacted.BucketName(),
		},
	}
}

// fnSpec is one function's own shape and settings.
type fnSpec struct {
	id, asset string
	memory    int
	tmpMiB    int // /tmp size; 0 for Lambda's default 512 MiB
	timeout   int
	env       map[string]*string // the stack's own names (secrets, queues); the settings come from their declarations
	// perforce: the function runs p4 (the layer) against the studio's
	// network, so it runs in the VPC whenever one is configured; the others
	// only with vpc.allFunctions.
	perforce bool
	// swarmCaller: the function calls Swarm, so it runs in the VPC when
	// Swarm is private (swarmnetwork.go).
	swarmCaller bool
	// asyncDLQ receives events of an asynchronously invoked function that
	// failed every retry.
	asyncDLQ awssqs.IQueue
	// output names the stack output of the function's name (default <id>Name).
	output   string
	noAlarms bool
	// page: the internet-facing job page, which gets only its own
	// environment, runs outside the VPC and keeps its logs and environment
	// under AWS-managed keys.
	page bool
}

func (f *functionFactory) newFn(s fnSpec) awslambda.Function {
	vars := map[string]*string{}
	if !s.page {
		maps.Copy(vars, f.common)
	}
	for _, m := range []map[string]*string{declaredEnv(f.values, s.asset), s.env} {
		for k, v := range m {
			if v != nil && *v != "" { // unset optional settings stay unset
				vars[k] = v
			}
		}
	}
	key := dataKey(f.stack, f.cfg)
	if s.page {
		key = nil
	}
	logs := awslogs.NewLogGroup(f.stack, jsii.String(s.id+"Logs"), &awslogs.LogGroupProps{
		Retention:     retentionDays[f.cfg.LogRetentionDays],
		RemovalPolicy: f.removal,
		EncryptionKey: key,
	})
	pinID(logs, s.id+"Logs")
	fp := &awslambda.FunctionProps{
		Runtime:               awslambda.Runtime_PROVIDED_AL2023(),
		Handler:               jsii.String("bootstrap"),
		Code:                  awslambda.Code_FromAsset(jsii.String(filepath.Join(f.assetRoot, s.asset)), nil),
		Architecture:          f.arch,
		MemorySize:            jsii.Number(s.memory),
		Timeout:               awscdk.Duration_Seconds(jsii.Number(s.timeout)),
		Environment:           &vars,
		LogGroup:              logs,
		LoggingFormat:         awslambda.LoggingFormat_JSON,
		ApplicationLogLevelV2: awslambda.ApplicationLogLevel(strings.ToUpper(f.cfg.LogLevel)), // Lambda's names: LOG_LEVEL's in capitals
		SystemLogLevelV2:      awslambda.SystemLogLevel_INFO,
		Description:           jsii.String("Criticizer " + s.asset + " (" + f.env + ")"),
		EnvironmentEncryption: key,
		DeadLetterQueue:       s.asyncDLQ,
	}
	if s.perforce && f.p4Layer != nil {
		fp.Layers = &[]awslambda.ILayerVersion{f.p4Layer}
	}
	if s.tmpMiB > 0 {
		fp.EphemeralStorageSize = awscdk.Size_Mebibytes(jsii.Number(s.tmpMiB))
	}
	if f.vpc != nil && !s.page && (s.perforce || f.vpc.all || (s.swarmCaller && f.cfg.swarmIsPrivate())) {
		fp.Vpc, fp.VpcSubnets, fp.SecurityGroups = f.vpc.vpc, f.vpc.subnets, &f.vpc.groups
	}
	fn := awslambda.NewFunction(f.stack, jsii.String(s.id), fp)
	pinID(fn, s.id)
	awscdk.NewCfnOutput(f.stack, jsii.String(cmp.Or(s.output, s.id+"Name")), &awscdk.CfnOutputProps{Value: fn.FunctionName()})
	if !s.noAlarms {
		f.made = append(f.made, namedFn{strings.TrimSuffix(s.id, "Function"), fn})
	}
	return fn
}

// newP4Layer is the p4 client layer from p4LayerPath (nil when unset: local).
func newP4Layer(stack awscdk.Stack, cfg EnvConfig, arch awslambda.Architecture, removal awscdk.RemovalPolicy) awslambda.LayerVersion {
	if cfg.P4LayerPath == "" {
		return nil
	}
	l := awslambda.NewLayerVersion(stack, jsii.String("P4Layer"), &awslambda.LayerVersionProps{
		Code:                    awslambda.Code_FromAsset(jsii.String(cfg.P4LayerPath), nil),
		CompatibleRuntimes:      &[]awslambda.Runtime{awslambda.Runtime_PROVIDED_AL2023()},
		CompatibleArchitectures: &[]awslambda.Architecture{arch},
		Description:             jsii.String("Perforce p4 command-line client at /opt/bin/p4"),
		RemovalPolicy:           removal,
	})
	pinID(l, "P4Layer")
	return l
}

// newWebhookFunction: the internet-facing intake and status endpoint.
func newWebhookFunction(f *functionFactory, p functionsProps) awslambda.Function {
	cfg, sec := f.cfg, p.secrets
	fn := f.newFn(fnSpec{id: "WebhookFunction", asset: "webhook", memory: 256, timeout: 15})
	if cfg.SwarmURL != "" {
		readSecret(fn, settings.SwarmTokenSecretID.Name, sec.swarmToken)
		if !cfg.swarmIsPrivate() || cfg.isLocal {
			// The run is held to its review at the door (422); a private
			// Swarm is out of the internet-facing function's reach (the
			// emulator's stand-in is not), and the fetch stage makes the
			// same check inside the VPC in any case.
			readSecret(fn, settings.SwarmAPISecretID.Name, sec.swarmAPI)
		}
	}
	// Internet-facing: it creates a job (the job, its idempotency record, the
	// changelist's version gate) and reads what the status endpoint shows
	// (the job and its delivery rows); nothing else of the table.
	g := f.items(fn, p)
	g.grant(jsii.Strings("dynamodb:PutItem"), itemJob, itemIdempotency)
	g.grant(jsii.Strings("dynamodb:UpdateItem"), itemChangelist)
	g.grant(jsii.Strings("dynamodb:GetItem"), itemJob, itemIdempotency, itemChangelist)
	g.grant(jsii.Strings("dynamodb:Query"), itemOutbox)
	p.fetch.queue.GrantSendMessages(fn)
	readSecret(fn, settings.WebhookSecretID.Name, sec.webhook)
	wireSwarmEvents(f, p, fn)
	return fn
}

// newFetchFunction: the fetch stage, with the p4 layer.
func newFetchFunction(f *functionFactory, p functionsProps) awslambda.Function {
	cfg, sec := f.cfg, p.secrets
	// fetch spools the raw and the redacted changeset to /tmp as it arrives
	// (about three times the changelist's diffs at the peak, see fetchstage).
	fn := f.newFn(fnSpec{id: "FetchFunction", swarmCaller: true, asset: "fetch", memory: 256, tmpMiB: 2048, timeout: cfg.LeaseSeconds, perforce: true})
	if cfg.SwarmURL != "" {
		// Fetch asks Swarm for the review's author (as the local harness wires it).
		readSecret(fn, settings.SwarmAPISecretID.Name, sec.swarmAPI)
	}
	f.items(fn, p).grant(jsii.Strings("dynamodb:GetItem", "dynamodb:UpdateItem"), itemJob)
	// The rerun ledger's previous version: which files are unchanged.
	f.items(fn, p).grant(jsii.Strings("dynamodb:Query"), itemLedger)
	// Who was on a Swarm review when first fetched: the noise filter's standing (shared/outcome).
	f.items(fn, p).grant(jsii.Strings("dynamodb:PutItem"), itemOutcome)
	p.llm.queue.GrantSendMessages(fn)
	p.fetch.dlq.GrantSendMessages(fn)
	// Only the changeset artifacts it writes (shared/fetchstage).
	p.raw.GrantPut(fn, jsii.String(artifactRawChangeset))
	p.redacted.GrantPut(fn, jsii.String(artifactChangeset))
	p.redacted.GrantPut(fn, jsii.String(artifactRules))
	readSecret(fn, settings.P4SecretID.Name, sec.p4)
	return fn
}

// newLLMFunction: the llm stage (functions/llm, shared/llmstage). Its
// CloudFormation ID, "ReviewFunction", is the one it had before the function
// was renamed from "review": a new ID would replace the function, its log
// group, its event source mapping and its alarms on the next deploy
// (docs/operating.md, "Upgrading"). Its stack output is LlmFunctionName.
func newLLMFunction(f *functionFactory, p functionsProps) awslambda.Function {
	cfg := f.cfg
	// Rate limits are waited out inside an attempt: the function runs up to
	// reviewTimeoutSeconds (QUEUE_VISIBILITY_SECONDS), its queue's visibility
	// timeout, and sets a claimed message's visibility to the lease.
	fn := f.newFn(fnSpec{id: "ReviewFunction", output: "LlmFunctionName", swarmCaller: true, asset: "llm", memory: 512, timeout: cfg.ReviewTimeoutSeconds})
	f.items(fn, p).grant(jsii.Strings("dynamodb:GetItem", "dynamodb:UpdateItem"), itemJob, itemBudget)
	// It records each reviewed version in the rerun ledger (and reads the
	// previous version's job, above, for the findings it carries over).
	f.items(fn, p).grant(jsii.Strings("dynamodb:PutItem"), itemLedger)
	// It decides the review before notify delivers it (shared/decide): the
	// previous version's entry, withheld and resolved fates (OUTCOME#,
	// with their kinds' tallies moved in the same transaction).
	f.items(fn, p).grant(jsii.Strings("dynamodb:Query"), itemLedger)
	f.items(fn, p).grant(jsii.Strings("dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:Query"), itemOutcome)
	p.notify.queue.GrantSendMessages(fn)
	p.llm.dlq.GrantSendMessages(fn)
	p.redacted.GrantRead(fn, nil)
	// Only the review and its per-chunk cache (shared/llmstage).
	p.redacted.GrantPut(fn, jsii.String(artifactReview))
	p.redacted.GrantPut(fn, jsii.String(artifactDecided))
	p.redacted.GrantPut(fn, jsii.String(artifactChunks))
	// The configured model, and the model canary's while it serves a share.
	models := []string{cfg.LLMModel}
	if cfg.modelRollout().Active() {
		models = append(models, cfg.LLMModelCandidate)
	}
	grantModel(fn, cfg, p.secrets.llm, models...)
	return fn
}

// newNotifyFunction: the notify stage, sending through SMTP or SES.
func newNotifyFunction(f *functionFactory, p functionsProps) awslambda.Function {
	fn := f.newFn(fnSpec{id: "NotifyFunction", swarmCaller: true, asset: "notify", memory: 256, timeout: f.cfg.LeaseSeconds, env: map[string]*string{
		settings.SMTPSecretID.Name: p.secrets.smtp.SecretArn(),
	}})
	// The job, its outbox rows; the SES events recorded for lookup-before-resend.
	g := f.items(fn, p)
	g.grant(jsii.Strings("dynamodb:GetItem", "dynamodb:UpdateItem"), itemJob, itemOutbox)
	g.grant(jsii.Strings("dynamodb:PutItem"), itemOutbox)
	g.grant(jsii.Strings("dynamodb:Query"), itemOutbox, itemDelivery)
	// OUTCOME#: a posted finding recorded, its fate judged (with its kind's
	// dismissal item put or deleted in the same transaction), the review watched.
	g.grant(jsii.Strings("dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:Query"), itemOutcome)
	p.notify.dlq.GrantSendMessages(fn)
	// Only the decided review: notify delivers it and reads no code.
	p.redacted.GrantRead(fn, jsii.String(artifactDecided))
	grantMail(fn, f.cfg, p.secrets) // digest.go
	return fn
}

// newSweeperFunction: the sweeper, which also runs the outbox reconciler (it
// asks the same provider evidence as the notify stage, over the same
// completion window) and the retention check.
func newSweeperFunction(f *functionFactory, p functionsProps) awslambda.Function {
	fn := f.newFn(fnSpec{id: "SweeperFunction", swarmCaller: true, asset: "sweeper", memory: 256, timeout: 60, env: map[string]*string{
		// The daily retention check (rule RT-3) compares artifacts with these.
		settings.RawArtifactTTLDays.Name:      jsii.String(settings.RawArtifactTTLDays.Accepts.Default),
		settings.RedactedArtifactTTLDays.Name: jsii.String(settings.RedactedArtifactTTLDays.Accepts.Default),
	}})
	// The reconciler names e-mail rows by the recipient's keyed hash.
	readSecret(fn, settings.DeliveryKeySecretID.Name, p.secrets.delivery)
	g := f.items(fn, p)
	// Sweep: due jobs from the sweep index, then the job rows themselves.
	g.grantIndex(jsii.Strings("dynamodb:Query"), "sweep")
	g.grant(jsii.Strings("dynamodb:GetItem", "dynamodb:UpdateItem"), itemJob, itemOutbox)
	g.grant(jsii.Strings("dynamodb:Query"), itemDelivery)
	// Reconcile: the rows in doubt from the sparse doubt index.
	g.grantIndex(jsii.Strings("dynamodb:Query"), "doubt")
	// The retention check reads every row's TTL, the data scrub every old
	// delivery row: scans no key condition can narrow.
	g.grantTable(jsii.Strings("dynamodb:Scan"))
	// Reviewers' reactions: the watch list moved on (a transaction of a
	// delete and a put), fates judged, the review's comment rows listed.
	g.grant(jsii.Strings("dynamodb:Query", "dynamodb:PutItem", "dynamodb:DeleteItem", "dynamodb:UpdateItem"), itemOutcome)
	g.grant(jsii.Strings("dynamodb:Query"), itemOutbox)
	for _, s := range []*stage{p.fetch, p.llm, p.notify} {
		s.queue.GrantSendMessages(fn)
	}
	// The retention check lists keys and dates; it reads no object.
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("s3:ListBucket"),
		Resources: &[]*string{p.raw.BucketArn(), p.redacted.BucketArn()},
	}))
	return fn
}

// newSESEvents: the configuration set publishes send/delivery/bounce/
// complaint/reject events to EventBridge; sesevents records them where
// lookup-before-resend and the outbox reconciler read them.
func newSESEvents(f *functionFactory, p functionsProps) awssqs.Queue {
	cfg, stack := f.cfg, f.stack
	// Lost delivery evidence is not silent: events that fail every retry
	// (EventBridge's delivery or the function's own) land here and page.
	dlq := newDLQ(stack, cfg, "SesEventsDLQ", awscdk.Duration_Seconds(jsii.Number(30)), f.removal)
	fn := f.newFn(fnSpec{id: "SesEventsFunction", asset: "sesevents", memory: 128, timeout: 30, asyncDLQ: dlq})
	f.items(fn, p).grant(jsii.Strings("dynamodb:PutItem"), itemDelivery)
	cs := awsses.NewCfnConfigurationSet(stack, jsii.String("SesConfigurationSet"), &awsses.CfnConfigurationSetProps{
		Name: jsii.String(cfg.SESConfigurationSet),
	})
	dest := awsses.NewCfnConfigurationSetEventDestination(stack, jsii.String("SesEventDestination"), &awsses.CfnConfigurationSetEventDestinationProps{
		ConfigurationSetName: jsii.String(cfg.SESConfigurationSet),
		EventDestination: &awsses.CfnConfigurationSetEventDestination_EventDestinationProperty{
			Enabled:            jsii.Bool(true),
			MatchingEventTypes: jsii.Strings("send", "delivery", "bounce", "complaint", "reject"),
			EventBridgeDestination: &awsses.CfnConfigurationSetEventDestination_EventBridgeDestinationProperty{
				EventBusArn: awscdk.Fn_Sub(jsii.String("arn:${AWS::Partition}:events:${AWS::Region}:${AWS::AccountId}:event-bus/default"), nil),
			},
		},
	})
	dest.AddDependency(cs)
	// Only this configuration set's events: SES tags each with its name.
	rule := awsevents.NewRule(stack, jsii.String("SesEventsRule"), &awsevents.RuleProps{
		EventPattern: &awsevents.EventPattern{
			Source: jsii.Strings("aws.ses"),
			Detail: &map[string]any{"mail": map[string]any{"tags": map[string]any{"ses:configuration-set": []string{cfg.SESConfigurationSet}}}},
		},
		Targets: &[]awsevents.IRuleTarget{awseventstargets.NewLambdaFunction(fn, &awseventstargets.LambdaFunctionProps{
			DeadLetterQueue: dlq, RetryAttempts: jsii.Number(185), MaxEventAge: awscdk.Duration_Hours(jsii.Number(24)),
		})},
	})
	pinID(rule, "SesEventsRule")
	return dlq
}

// sesIdentity is the SES identity notify sends as: sesIdentity, or the
// domain of smtpFrom (fromDomain).
func sesIdentity(cfg EnvConfig) string { return cmp.Or(cfg.SESIdentity, fromDomain(cfg)) }

func fromDomain(cfg EnvConfig) string {
	return cfg.SMTPFrom[strings.LastIndexByte(cfg.SMTPFrom, '@')+1:]
}

// sesARN is an SES resource of the stack's account and region.
func sesARN(kind, name string) *string {
	return awscdk.Fn_Sub(jsii.String("arn:${AWS::Partition}:ses:${AWS::Region}:${AWS::AccountId}:"+kind+"/"+name), nil)
}

// restrictRawBucket: only the function that writes raw (unredacted) artifacts
// and the named operator role may touch its objects, whatever else IAM
// grants; optionally a trail logs every read and write.
func restrictRawBucket(stack awscdk.Stack, cfg EnvConfig, raw awss3.Bucket, fetchFn awslambda.Function) {
	allowedRaw := []*string{fetchFn.Role().RoleArn()}
	if cfg.OperatorRoleArn != "" {
		allowedRaw = append(allowedRaw, jsii.String(cfg.OperatorRoleArn))
	}
	raw.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("OnlyFetchAndOperator"),
		Effect:     awsiam.Effect_DENY,
		Principals: &[]awsiam.IPrincipal{awsiam.NewAnyPrincipal()},
		Actions:    jsii.Strings("s3:GetObject*", "s3:PutObject*", "s3:DeleteObject*"),
		Resources:  &[]*string{raw.ArnForObjects(jsii.String("*"))},
		Conditions: &map[string]any{"ArnNotEquals": map[string]any{"aws:PrincipalArn": allowedRaw}},
	}))
	if !cfg.RawBucketDataEvents {
		return
	}
	// The trail's own bucket, as locked down as the artifacts' (CloudTrail
	// delivers with SSE-S3 or the data key).
	tb := &awss3.BucketProps{
		// Audit evidence: an overwritten or deleted log file stays recoverable.
		Versioned:     jsii.Bool(true),
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	}
	if logs := stack.Node().TryFindChild(jsii.String("AccessLogs")); logs != nil {
		tb.ServerAccessLogsBucket, tb.ServerAccessLogsPrefix = logs.(awss3.IBucket), jsii.String("trail/")
	}
	trailBucket := newBucket(stack, "RawDataEventsTrailBucket", tb)
	trail := awscloudtrail.NewTrail(stack, jsii.String("RawDataEventsTrail"), &awscloudtrail.TrailProps{
		IsMultiRegionTrail: jsii.Bool(false), IncludeGlobalServiceEvents: jsii.Bool(false),
		ManagementEvents: awscloudtrail.ReadWriteType_NONE, Bucket: trailBucket,
		EncryptionKey: dataKey(stack, cfg), EnableFileValidation: jsii.Bool(true),
	})
	trail.AddS3EventSelector(&[]*awscloudtrail.S3EventSelector{{Bucket: raw}}, &awscloudtrail.AddEventSelectorOptions{
		ReadWriteType: awscloudtrail.ReadWriteType_ALL, IncludeManagementEvents: jsii.Bool(false),
	})
}

// newSchedules: the sweeper's sweep schedule and the hourly retention check
// runs (a round a day).
func newSchedules(stack awscdk.Stack, cfg EnvConfig, sweeperFn awslambda.Function) {
	newSchedule(stack, "SweepSchedule", "Re-enqueue jobs whose stage lease expired with no message in flight",
		awsevents.Schedule_Expression(jsii.String(cfg.SweepSchedule)), sweeperFn, nil)
	// Hourly runs: a day's round of the table scan goes on over as many
	// runs as it takes (shared/retention); runs without a round due are a read.
	newSchedule(stack, "RetentionCheck", "Verify that no row or artifact outlived its TTL (rule RT-3)",
		awsevents.Schedule_Rate(awscdk.Duration_Hours(jsii.Number(1))), sweeperFn,
		&awseventstargets.LambdaFunctionProps{Event: awsevents.RuleTargetInput_FromObject(map[string]any{"check": "retention"})})
}

// newSchedule is an EventBridge rule invoking fn on schedule (with target's
// event, when given).
func newSchedule(stack awscdk.Stack, id, desc string, schedule awsevents.Schedule, fn awslambda.Function, target *awseventstargets.LambdaFunctionProps) {
	rule := awsevents.NewRule(stack, jsii.String(id), &awsevents.RuleProps{
		Description: jsii.String(desc),
		Schedule:    schedule,
		Targets:     &[]awsevents.IRuleTarget{awseventstargets.NewLambdaFunction(fn, target)},
	})
	pinID(rule, id)
}

// Item types of the jobs table, by partition-key prefix. Their homes are the
// packages that write them (TestItemPrefixesMatchTheStore checks they agree).
const (
	itemJob         = "JOB#"      // shared/store: the job
	itemIdempotency = "IDEM#"     // shared/store: idempotency record
	itemChangelist  = "CL#"       // shared/store: a changelist's version gate
	itemOutbox      = "OUTBOX#"   // shared/outbox: one delivery per recipient
	itemDelivery    = "DELIVERY#" // shared/evidence: SES events
	itemBudget      = "BUDGET#"   // shared/store (budget.go): the daily token counter
	itemLedger      = "LEDGER#"   // shared/ledger: what each reviewed version held and found
	itemOutcome     = "OUTCOME#"  // shared/outcome: each posted finding's fate, and the watch list
)

// itemGrants grants one function access to the jobs table, item type by
// item type: IAM's dynamodb:LeadingKeys condition limits each action to the
// items whose partition key has one of the given prefixes.
type itemGrants struct {
	fn    awslambda.Function
	table awsdynamodb.Table
}

func (f *functionFactory) items(fn awslambda.Function, p functionsProps) itemGrants {
	if key := dataKey(f.stack, f.cfg); key != nil {
		key.GrantEncryptDecrypt(fn)
	}
	return itemGrants{fn: fn, table: p.table}
}

func (g itemGrants) grant(actions *[]*string, prefixes ...string) {
	var like []string
	for _, pre := range prefixes {
		like = append(like, pre+"*")
	}
	g.fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:    actions,
		Resources:  &[]*string{g.table.TableArn()},
		Conditions: &map[string]any{"ForAllValues:StringLike": map[string]any{"dynamodb:LeadingKeys": like}},
	}))
}

// grantIndex: actions on one index (its own keys; no item-type condition).
func (g itemGrants) grantIndex(actions *[]*string, index string) {
	g.fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   actions,
		Resources: &[]*string{awscdk.Fn_Join(jsii.String(""), &[]*string{g.table.TableArn(), jsii.String("/index/" + index)})},
	}))
}

// grantTable: actions on the whole table, for the scans that cannot be keyed.
func (g itemGrants) grantTable(actions *[]*string) {
	g.fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{Actions: actions, Resources: &[]*string{g.table.TableArn()}}))
}

// grantModel lets fn call the models: with the provider's key from the LLM
// secret, or, for an AWS family (authorized by IAM, no key), with the
// family's Invoke action on each model's ARNs (shared/llm's families). The
// one place a provider's credentials are wired (the llm function and the doctor).
func grantModel(fn awslambda.Function, cfg EnvConfig, llmSecret awssecretsmanager.Secret, models ...string) {
	f, _ := llm.FamilyOf(cfg.LLMProvider)
	if !f.AWS {
		readSecret(fn, settings.LLMSecretID.Name, llmSecret)
		return
	}
	var resources []*string
	for _, m := range models {
		for _, arn := range f.ModelARNs(m) {
			resources = append(resources, awscdk.Fn_Sub(jsii.String(arn), nil))
		}
	}
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions: jsii.Strings(f.Invoke), Resources: &resources,
	}))
}

// Artifact key patterns each stage writes (shared/artifacts.Key: jobs/<job id>/<name>),
// so a stage's role can write only its own artifacts
// (TestArtifactWrites checks the names against the stages).
const (
	artifactRawChangeset = "jobs/*/changeset.raw.json" // fetch, raw bucket
	artifactChangeset    = "jobs/*/changeset.json"     // fetch, redacted bucket
	artifactReview       = "jobs/*/review.json"        // review
	artifactDecided      = "jobs/*/decided.json"       // review: the decided review notify delivers (shared/decide)
	artifactChunks       = "jobs/*/chunks/*"           // review's per-chunk results and errors
	artifactRules        = "jobs/*/rules.json"         // fetch: the depot's review rules files (domain.RulesArtifact)
)
