// Command digest sends the weekly digest (shared/digest): one e-mail per
// opted-in path owner and week, where the environment turns it on.
package main

import (
	"context"
	"encoding/json"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/criticizer/criticizer/shared/coldstart"
	"github.com/criticizer/criticizer/shared/digest"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/mailchannel"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/sanitize"
	"github.com/criticizer/criticizer/shared/secrets"
	"github.com/criticizer/criticizer/shared/weekly"
)

func main() {
	ctx := context.Background()
	env := coldstart.Must(coldstart.Load(ctx, "digest", sanitize.Logs))
	set := digest.SettingsFromEnv(env.Vars)
	coldstart.Must(env, env.Vars.Err())

	ddb := dynamodb.NewFromConfig(env.AWS)
	sm := secrets.New(secretsmanager.NewFromConfig(env.AWS), secrets.CacheTTL)
	key, err := set.Outbox.Key(ctx, sm)
	coldstart.Must(env, err)
	p := &digest.Pass{
		Entries: &weekly.Entries{API: ddb, Table: env.Config.JobsTable},
		Fates:   outcome.NewStore(ddb, env.Config.JobsTable),
		// One row per owner and week, through the one delivery protocol.
		Rows:   outbox.New(ddb, env.Config.JobsTable).WithUniquenessRetention(env.Config.UniquenessRetention).WithActor("digest"),
		Owners: set.Owners, From: set.Mail.Evidence.From, Policy: set.Recipients, Dismissals: set.Dismissals, Window: set.Mail.Evidence.Window,
		Hash: key.Recipient, Log: env.Log,
	}
	p.Channel, err = mailchannel.New(ctx, set.Mail, mailchannel.Deps{AWS: env.AWS, Jobs: ddb, Table: env.Config.JobsTable, Secrets: sm, Log: env.Log})
	coldstart.Must(env, err)
	lambda.Start(func(ctx context.Context, ev json.RawMessage) (digest.Report, error) {
		week, err := weekly.WeekOfEvent(ev, job.Now())
		if err != nil {
			return digest.Report{}, err
		}
		rep, err := p.Run(ctx, week)
		env.Log.InfoContext(ctx, "weekly digest run", "report", rep)
		return rep, err
	})
}
