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
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/fetchstage"
	"github.com/criticizer/criticizer/shared/ledger"
	"github.com/criticizer/criticizer/shared/outcome"
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
	set := fetchstage.SettingsFromEnv(env.Vars, env.Log)
	coldstart.Must(env, env.Vars.Err())
	cfg := set.P4.Config
	coldstart.Must(env, os.MkdirAll(cfg.Home, 0o700))
	runner, err := p4.NewRunner(cfg, env.Log)
	coldstart.Must(env, err)
	sm := secrets.New(secretsmanager.NewFromConfig(env.AWS), secrets.CacheTTL)
	if id := set.P4.SecretID; id != "" {
		// Rotatable: a rejected session reads the secret afresh (p4.Runner).
		runner.SetCredentials(secrets.NewRotating(sm, id, func(value string) (p4.Credential, error) {
			return p4.ParseCredential(id, value)
		}))
	}
	fetcher, err := p4.NewFetcher(runner, set.AllowList, env.Log)
	coldstart.Must(env, err)
	// The service user's protections are checked before every fetch (see
	// p4.Fetcher.CheckProtections), not here: init has no job to fail closed.
	fetcher.WithOptions(set.P4.Options).CheckProtections()
	red, err := redact.New(set.Redaction)
	coldstart.Must(env, err)

	s3 := artifacts.NewS3Client(env.AWS)
	ddb := dynamodb.NewFromConfig(env.AWS)
	jobs := store.New(ddb, env.Config.JobsTable)
	queues := queue.New(sqs.NewFromConfig(env.AWS), env.Config.QueueURLs, env.Config.DLQURLs)
	reporter := swarm.NewReporter(jobs, env.Log)
	proc := &fetchstage.Fetch{P4: fetcher, Redactor: red, Log: env.Log, Swarm: reporter, Rules: fetcher, Recipients: set.Recipients, Metrics: env.Metrics,
		Raw: artifacts.New(s3, env.Config.RawBucket), Redacted: artifacts.New(s3, env.Config.RedactedBkt),
		Ledger: ledger.NewStore(ddb, env.Config.JobsTable)} // reads the previous version: unchanged files are carried over
	if set.Swarm.URL != "" && set.Swarm.APISecretID != "" {
		proc.Users = fetcher
		proc.Reviews = &swarm.Client{BaseURL: set.Swarm.URL, Credentials: swarm.SecretCredentials(sm, set.Swarm.APISecretID)}
		proc.Standing = outcome.NewStore(ddb, env.Config.JobsTable).WithUniquenessRetention(env.Config.UniquenessRetention)
	}
	rt := env.Runtime(domain.StageFetch, jobs, queues, proc, red.Sanitize)
	rt.AfterDeadLetter = reporter.DeadLettered
	lambda.Start(rt.Handle)
}
