package main

import (
	"fmt"
	"net/url"
	"path/filepath"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/jsii-runtime-go"

	"github.com/criticizer/criticizer/shared/settings"
)

// The job page (docs/jobpage.md): GET /view/{id}/{token}, a read-only HTML
// view of one job for whoever holds its link. Whoever holds a link reads what
// the e-mail shows, so nothing of it exists unless the environment sets
// jobPage: the secret that mints links, the function, the route and the
// grants are all created here, and only then.

// jobPageProps is what the job page is wired to.
type jobPageProps struct {
	env, assetRoot  string
	cfg             EnvConfig
	removal         awscdk.RemovalPolicy
	table           awsdynamodb.Table
	redacted        awss3.Bucket
	api             awsapigateway.RestApi
	webhook, notify awslambda.Function // mint links: Swarm's run link, the e-mail's
}

// Key prefixes the page function may read in the jobs table beside its job
// items and delivery rows (itemJob, itemOutbox), and the one artifact it
// reads (the review result the llm stage stored, already redacted).
const (
	// shared/outcome's records of a review's findings and of a changelist's
	// e-mail-only findings.
	outcomeReviewPrefix = "OUTCOME#review#"
	outcomeEmailPrefix  = "OUTCOME#cl#"
	reviewResultKeys    = "jobs/*/review.json"
)

// newJobPage adds the job page when cfg.JobPage is set and returns its
// function (nil when off).
func newJobPage(stack awscdk.Stack, p jobPageProps) awslambda.Function {
	if !p.cfg.JobPage {
		return nil
	}
	// A key of its own: rotating it revokes every page link and nothing else.
	secret := awssecretsmanager.NewSecret(stack, jsii.String("JobPageSecret"), &awssecretsmanager.SecretProps{
		Description: jsii.String("Job page link key (HMAC of the job id); rotate to revoke every page link"),
		GenerateSecretString: &awssecretsmanager.SecretStringGenerator{
			PasswordLength: jsii.Number(64), ExcludePunctuation: jsii.Bool(true),
		},
		RemovalPolicy: p.removal,
	})
	pinID(secret, "JobPageSecret")

	logs := awslogs.NewLogGroup(stack, jsii.String("JobPageFunctionLogs"), &awslogs.LogGroupProps{
		Retention:     retentionDays[p.cfg.LogRetentionDays],
		RemovalPolicy: p.removal,
	})
	pinID(logs, "JobPageFunctionLogs")
	arch := awslambda.Architecture_ARM_64()
	if p.cfg.Architecture == "x86_64" {
		arch = awslambda.Architecture_X86_64()
	}
	// Only what it reads: no queue, no raw bucket, no other secret.
	values, _ := jsonKeys(p.cfg)
	env := declaredEnv(values, "jobpage")
	env[settings.CriticizerEnv.Name], env[settings.JobsTable.Name], env[settings.RedactedBucket.Name] = jsii.String(p.env), p.table.TableName(), p.redacted.BucketName()
	env[settings.JobPageSecretID.Name] = secret.SecretArn()
	fn := awslambda.NewFunction(stack, jsii.String("JobPageFunction"), &awslambda.FunctionProps{
		Runtime:               awslambda.Runtime_PROVIDED_AL2023(),
		Handler:               jsii.String("bootstrap"),
		Code:                  awslambda.Code_FromAsset(jsii.String(filepath.Join(p.assetRoot, "jobpage")), nil),
		Architecture:          arch,
		MemorySize:            jsii.Number(128),
		Timeout:               awscdk.Duration_Seconds(jsii.Number(10)),
		Environment:           &env,
		LogGroup:              logs,
		LoggingFormat:         awslambda.LoggingFormat_JSON,
		ApplicationLogLevelV2: appLogLevel(p.cfg.LogLevel),
		SystemLogLevelV2:      awslambda.SystemLogLevel_INFO,
		Description:           jsii.String("Criticizer jobpage (" + p.env + ")"),
	})
	pinID(fn, "JobPageFunction")

	// Read-only and scoped: one job item or one job's delivery rows per
	// request (dynamodb:LeadingKeys), the stored review result per job.
	leading := func(prefix string) *map[string]any {
		return &map[string]any{"ForAllValues:StringLike": map[string]any{"dynamodb:LeadingKeys": []string{prefix + "*"}}}
	}
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid: jsii.String("ReadJobItems"), Actions: jsii.Strings("dynamodb:GetItem"),
		Resources: &[]*string{p.table.TableArn()}, Conditions: leading(itemJob),
	}))
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid: jsii.String("ReadDeliveryRows"), Actions: jsii.Strings("dynamodb:Query"),
		Resources: &[]*string{p.table.TableArn()}, Conditions: leading(itemOutbox),
	}))
	// What reviewers did with the findings of the job's review, or of its
	// changelist's e-mail-only findings (shared/outcome's record items;
	// never its tallies or watch list).
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid: jsii.String("ReadOutcomes"), Actions: jsii.Strings("dynamodb:Query"),
		Resources:  &[]*string{p.table.TableArn()},
		Conditions: &map[string]any{"ForAllValues:StringLike": map[string]any{"dynamodb:LeadingKeys": []string{outcomeReviewPrefix + "*", outcomeEmailPrefix + "*"}}},
	}))
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid: jsii.String("ReadReviewResults"), Actions: jsii.Strings("s3:GetObject"),
		Resources: &[]*string{p.redacted.ArnForObjects(jsii.String(reviewResultKeys))},
	}))
	secret.GrantRead(fn, nil)

	noKey := &awsapigateway.MethodOptions{ApiKeyRequired: jsii.Bool(false), AuthorizationType: awsapigateway.AuthorizationType_NONE}
	p.api.Root().AddResource(jsii.String("view"), nil).AddResource(jsii.String("{id}"), nil).AddResource(jsii.String("{token}"), nil).
		AddMethod(jsii.String("GET"), awsapigateway.NewLambdaIntegration(fn, &awsapigateway.LambdaIntegrationOptions{Proxy: jsii.Bool(true)}), noKey)

	// The functions that mint links read the key. The webhook places its
	// link on the API address Swarm called (or publicBaseUrl); the e-mail
	// has no request to take it from: publicBaseUrl, else the API's URL.
	base := p.api.Url()
	if p.cfg.PublicBaseURL != "" {
		base = jsii.String(p.cfg.PublicBaseURL)
		p.webhook.AddEnvironment(jsii.String(settings.JobPageBaseURL.Name), base, nil)
	}
	p.webhook.AddEnvironment(jsii.String(settings.JobPageSecretID.Name), secret.SecretArn(), nil)
	p.notify.AddEnvironment(jsii.String(settings.JobPageSecretID.Name), secret.SecretArn(), nil)
	p.notify.AddEnvironment(jsii.String(settings.JobPageBaseURL.Name), base, nil)
	secret.GrantRead(p.webhook, nil)
	secret.GrantRead(p.notify, nil)

	awscdk.NewCfnOutput(stack, jsii.String("JobPageSecretArn"), &awscdk.CfnOutputProps{Value: secret.SecretArn()})
	awscdk.NewCfnOutput(stack, jsii.String("JobPageFunctionName"), &awscdk.CfnOutputProps{Value: fn.FunctionName()})
	return fn
}

// validateJobPageSettings: the job page (one of Validate's validators).
func validateJobPageSettings(c EnvConfig, p *problems) {
	for _, e := range c.validateJobPage() {
		p.add("%s", e)
	}
}

// validateJobPage checks the job page's settings.
func (c EnvConfig) validateJobPage() []string {
	if c.PublicBaseURL == "" {
		return nil
	}
	var errs []string
	if !c.JobPage {
		errs = append(errs, "publicBaseUrl is set but jobPage is off: it is used only for job page links; set jobPage: true or remove it")
	}
	u, err := url.Parse(c.PublicBaseURL)
	switch {
	case err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "":
		errs = append(errs, fmt.Sprintf("publicBaseUrl %q: want an absolute URL without credentials, query or fragment (e.g. https://reviews.example.com/prod)", c.PublicBaseURL))
	case u.Scheme != "https" && !(u.Scheme == "http" && c.isLocal):
		// The link is a credential: it must not travel in clear text.
		errs = append(errs, fmt.Sprintf("publicBaseUrl %q: want https (http only in local)", c.PublicBaseURL))
	}
	return errs
}
