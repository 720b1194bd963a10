package main

import (
	"net/url"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/jsii-runtime-go"

	"github.com/criticizer/criticizer/shared/settings"
)

// The job page (docs/jobpage.md): GET /view/{id}/{token}, a read-only HTML
// view of one job for whoever holds its link. Whoever holds a link reads what
// the e-mail shows, so nothing of it exists unless the environment sets
// jobPage: the secret that mints links, the function, the route and the
// grants are all created here, and only then.

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

// newJobPage adds the job page when cfg.JobPage is set, on the API, and
// lets the webhook and notify functions mint its links.
func newJobPage(f *functionFactory, p functionsProps, api awsapigateway.RestApi, webhook, review awslambda.Function) {
	if !f.cfg.JobPage {
		return
	}
	// A key of its own: rotating it revokes every page link and nothing else.
	secret := awssecretsmanager.NewSecret(f.stack, jsii.String("JobPageSecret"), &awssecretsmanager.SecretProps{
		Description: jsii.String("Job page link key (HMAC of the job id); rotate to revoke every page link"),
		GenerateSecretString: &awssecretsmanager.SecretStringGenerator{
			PasswordLength: jsii.Number(64), ExcludePunctuation: jsii.Bool(true),
		},
		RemovalPolicy: f.removal,
	})
	pinID(secret, "JobPageSecret")
	// Only what it reads: no queue, no raw bucket, no other secret.
	fn := f.newFn(fnSpec{id: "JobPageFunction", asset: "jobpage", memory: 128, timeout: 10, page: true, env: map[string]*string{
		settings.CriticizerEnv.Name: jsii.String(f.env), settings.JobsTable.Name: p.table.TableName(), settings.RedactedBucket.Name: p.redacted.BucketName(),
	}})
	// Read-only and scoped: one job item or one job's delivery rows per
	// request (dynamodb:LeadingKeys); what reviewers did with the findings of
	// the job's review, or of its changelist's e-mail-only findings
	// (shared/outcome's record items; never its tallies or watch list); the
	// stored review result per job.
	g := itemGrants{fn: fn, table: p.table}
	g.grant(jsii.Strings("dynamodb:GetItem"), itemJob)
	g.grant(jsii.Strings("dynamodb:Query"), itemOutbox)
	g.grant(jsii.Strings("dynamodb:Query"), outcomeReviewPrefix, outcomeEmailPrefix)
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions: jsii.Strings("s3:GetObject"), Resources: &[]*string{p.redacted.ArnForObjects(jsii.String(reviewResultKeys))},
	}))
	readSecret(fn, settings.JobPageSecretID.Name, secret)
	// With a customer-managed key the table and the artifacts are encrypted
	// with it: reading them takes kms:Decrypt, and nothing more.
	if key := dataKey(f.stack, f.cfg); key != nil {
		key.GrantDecrypt(fn)
	}

	noKey := &awsapigateway.MethodOptions{ApiKeyRequired: jsii.Bool(false), AuthorizationType: awsapigateway.AuthorizationType_NONE}
	api.Root().AddResource(jsii.String("view"), nil).AddResource(jsii.String("{id}"), nil).AddResource(jsii.String("{token}"), nil).
		AddMethod(jsii.String("GET"), awsapigateway.NewLambdaIntegration(fn, &awsapigateway.LambdaIntegrationOptions{Proxy: jsii.Bool(true)}), noKey)

	// The functions that mint links read the key. The webhook places its
	// link on the API address Swarm called (or publicBaseUrl); the review
	// (llm) function mints the e-mail's and summary's link with the decided
	// review, with no request to take it from: publicBaseUrl, else the API's URL.
	base := api.Url()
	if f.cfg.PublicBaseURL != "" {
		base = jsii.String(f.cfg.PublicBaseURL)
		webhook.AddEnvironment(jsii.String(settings.JobPageBaseURL.Name), base, nil)
	}
	readSecret(webhook, settings.JobPageSecretID.Name, secret)
	readSecret(review, settings.JobPageSecretID.Name, secret)
	review.AddEnvironment(jsii.String(settings.JobPageBaseURL.Name), base, nil)

	awscdk.NewCfnOutput(f.stack, jsii.String("JobPageSecretArn"), &awscdk.CfnOutputProps{Value: secret.SecretArn()})
}

// validateJobPage: publicBaseUrl is for job page links only, and a link is
// a credential: https, no credentials, query or fragment.
func validateJobPage(c EnvConfig, p *problems) {
	if c.PublicBaseURL == "" {
		return
	}
	if !c.JobPage {
		p.add("publicBaseUrl is set but jobPage is off: it is used only for job page links; set jobPage: true or remove it")
	}
	switch u, err := url.Parse(c.PublicBaseURL); {
	case err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "":
		p.add("publicBaseUrl %q: want an absolute URL without credentials, query or fragment (e.g. https://reviews.example.com/prod)", c.PublicBaseURL)
	case u.Scheme != "https" && !(u.Scheme == "http" && c.isLocal):
		p.add("publicBaseUrl %q: want https (http only in local)", c.PublicBaseURL)
	}
}
