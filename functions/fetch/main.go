// Command fetch is the fetch stage: it reads the changelist with p4 inside
// the depot allow-list and stores the raw and redacted changeset. See
// shared/fetchstage and shared/p4.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/coldstart"
	"github.com/criticizer/criticizer/shared/depot"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/fetchstage"
	"github.com/criticizer/criticizer/shared/p4"
	"github.com/criticizer/criticizer/shared/queue"
	"github.com/criticizer/criticizer/shared/redact"
	"github.com/criticizer/criticizer/shared/sanitize"
	"github.com/criticizer/criticizer/shared/secrets"
	"github.com/criticizer/criticizer/shared/store"
	"github.com/criticizer/criticizer/shared/swarm"
)

func main() {
	ctx := context.Background()
	env := coldstart.Must(coldstart.Load(ctx, "fetch", sanitize.Logs))
	v := env.Vars
	// Tickets and the trust file live in /tmp, the only writable place.
	cfg := p4.Config{Path: v.String("P4_BIN"), Port: v.String("P4PORT"), User: v.String("P4USER"),
		Client: v.Optional("P4CLIENT", ""), Timeout: v.Seconds("P4_TIMEOUT_SECONDS", 30, 1, 900),
		Charset: v.Optional("P4CHARSET", ""), TrustFingerprint: v.Optional("P4TRUST_FINGERPRINT", ""),
		Tickets: "/tmp/criticizer-p4/tickets", Trust: "/tmp/criticizer-p4/trust", Home: "/tmp/criticizer-p4"}
	p4Secret := v.Optional("P4_SECRET_ID", "")
	p4Opts := p4.Options{Parallelism: v.Int("P4_PARALLELISM", p4.DefaultParallelism, 1, 32)}
	allow := v.String("DEPOT_ALLOWLIST")
	policy := redact.PolicyFromConfig(v)
	// Helix Swarm: who wrote a review (optional; a Swarm job fails without it).
	swarmURL, swarmAPISecret := v.Optional("SWARM_URL", ""), v.Optional("SWARM_API_SECRET_ID", "")
	coldstart.Must(env, v.Err())

	// The allow-list is validated at start-up: a bad entry fails the deploy's
	// first invocation instead of widening access.
	allowList, err := depot.ParseAllowList(allow, env.Log)
	coldstart.Must(env, err)
	coldstart.Must(env, os.MkdirAll(cfg.Home, 0o700))
	runner, err := p4.NewRunner(cfg, env.Log)
	coldstart.Must(env, err)
	sm := secrets.New(secretsmanager.NewFromConfig(env.AWS), secrets.CacheTTL)
	if p4Secret != "" {
		// Rotatable: a rejected session reads the secret afresh (p4.Runner).
		runner.SetCredentials(secrets.NewRotating(sm, p4Secret, func(value string) (p4.Credential, error) {
			return p4.ParseCredential(p4Secret, value)
		}))
	}
	fetcher, err := p4.NewFetcher(runner, allowList, env.Log)
	coldstart.Must(env, err)
	fetcher.WithOptions(p4Opts)
	red, err := redact.New(policy)
	coldstart.Must(env, err)

	s3 := artifacts.NewS3Client(env.AWS)
	jobs := store.New(dynamodb.NewFromConfig(env.AWS), env.Config.JobsTable)
	queues := queue.New(sqs.NewFromConfig(env.AWS), env.Config.QueueURLs, env.Config.DLQURLs)
	reporter := swarm.NewReporter(jobs, env.Log)
	proc := &fetchstage.Fetch{P4: fetcher, Redactor: red, Log: env.Log, Swarm: reporter,
		Raw: artifacts.New(s3, env.Config.RawBucket), Redacted: artifacts.New(s3, env.Config.RedactedBkt)}
	if swarmURL != "" && swarmAPISecret != "" {
		proc.Users = fetcher
		proc.Reviews = &swarm.Client{BaseURL: swarmURL, Credentials: swarm.SecretCredentials(sm, swarmAPISecret)}
	}
	rt := env.Runtime(domain.StageFetch, jobs, queues, proc, red.Sanitize)
	rt.AfterDeadLetter = reporter.DeadLettered
	lambda.Start(rt.Handle)
}
