// Command digest sends the weekly digest (shared/digest): once a week, on
// its EventBridge schedule, each depot path owner who opted in gets one
// e-mail about the week just ended, once per owner and week. It exists only
// where the environment turns the digest on (weeklyDigest).
package main

import (
	"context"
	"encoding/json"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/criticizer/criticizer/shared/coldstart"
	"github.com/criticizer/criticizer/shared/digest"
	"github.com/criticizer/criticizer/shared/evidence"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/sanitize"
	"github.com/criticizer/criticizer/shared/secrets"
	"github.com/criticizer/criticizer/shared/ses"
	"github.com/criticizer/criticizer/shared/smtpmail"
)

func main() {
	ctx := context.Background()
	env := coldstart.Must(coldstart.Load(ctx, "digest", sanitize.Logs))
	set := digest.SettingsFromEnv(env.Vars)
	coldstart.Must(env, env.Vars.Err())

	ddb := dynamodb.NewFromConfig(env.AWS)
	sm := secrets.New(secretsmanager.NewFromConfig(env.AWS), secrets.CacheTTL)
	key, _, err := set.Outbox.Key(ctx, sm)
	coldstart.Must(env, err)
	p := &digest.Pass{
		Entries: &digest.Entries{API: ddb, Table: env.Config.JobsTable},
		Fates:   outcome.NewStore(ddb, env.Config.JobsTable),
		Marks:   &digest.Marks{API: ddb, Table: env.Config.JobsTable, Retention: env.Config.UniquenessRetention},
		Owners:  set.Owners, From: set.Evidence.From, Policy: set.Recipients, Window: set.Evidence.Window,
		Log: env.Log,
	}
	if key != nil {
		p.Hash = key.Recipient
	}
	switch {
	case set.Evidence.Provider == "ses":
		sender, err := ses.New(ses.NewClient(env.AWS), set.SESConfigurationSet, env.Log)
		coldstart.Must(env, err)
		p.Channel = ses.NewChannel(sender, evidence.New(ddb, env.Config.JobsTable, 0))
	default:
		p.Channel = smtpChannel(ctx, env, sm, set)
	}
	lambda.Start(func(ctx context.Context, ev json.RawMessage) (digest.Report, error) {
		week, err := digest.WeekOfEvent(ev, job.Now())
		if err != nil {
			return digest.Report{}, err
		}
		rep, err := p.Run(ctx, week)
		env.Log.InfoContext(ctx, "weekly digest run", "report", rep)
		return rep, err
	})
}

// smtpChannel is the SMTP e-mail channel with its rotating login (as the
// notify function's), and the relay's lookup when SMTP_LOOKUP_URL names one.
func smtpChannel(ctx context.Context, env *coldstart.Env, sm *secrets.Store, set digest.Settings) *smtpmail.Channel {
	var lookup smtpmail.Evidence // nil interface: the relay has no lookup
	if set.Evidence.LookupURL != "" {
		lookup = evidence.HTTP{URL: set.Evidence.LookupURL}
	}
	ch, err := smtpmail.FromSecret(ctx, sm, set.SMTPSecretID, set.SMTP, lookup, env.Log)
	coldstart.Must(env, err)
	return ch
}
