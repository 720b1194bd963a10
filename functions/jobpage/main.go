// Command jobpage serves the read-only job page behind GET
// /view/{id}/{token} (shared/jobpage), where the environment turns it on.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/coldstart"
	"github.com/criticizer/criticizer/shared/jobpage"
	"github.com/criticizer/criticizer/shared/jobpage/page"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/sanitize"
	"github.com/criticizer/criticizer/shared/secrets"
	"github.com/criticizer/criticizer/shared/store"
)

func main() {
	ctx := context.Background()
	env := coldstart.Must(coldstart.Load(ctx, "jobpage", sanitize.Logs))
	set := jobpage.SettingsFromEnv(env.Vars)
	dismissals := outcome.PolicyFromEnv(env.Vars) // the noise filter's scope groups the acceptance by path
	coldstart.Must(env, env.Vars.Err())

	ddb := dynamodb.NewFromConfig(env.AWS)
	h := &page.Handler{
		Key:        &jobpage.Key{Secrets: secrets.New(secretsmanager.NewFromConfig(env.AWS), secrets.CacheTTL), SecretID: set.SecretID},
		Jobs:       store.New(ddb, env.Config.JobsTable),
		Deliveries: outbox.New(ddb, env.Config.JobsTable),
		Outcomes:   outcome.NewStore(ddb, env.Config.JobsTable), Dismissals: dismissals,
		Results: artifacts.New(artifacts.NewS3Client(env.AWS), set.Bucket),
		Log:     env.Log, Metrics: env.Metrics,
	}
	lambda.Start(h.Handle)
}
