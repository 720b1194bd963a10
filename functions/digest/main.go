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
	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/digest"
	"github.com/criticizer/criticizer/shared/evidence"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/notify"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/sanitize"
	"github.com/criticizer/criticizer/shared/secrets"
	"github.com/criticizer/criticizer/shared/ses"
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
		p.Sender, p.Evidence = sender, evidence.New(ddb, env.Config.JobsTable, 0)
	default:
		p.Sender = smtpSender(ctx, env, sm, set)
		if set.Evidence.LookupURL != "" {
			p.Evidence = evidence.HTTP{URL: set.Evidence.LookupURL}
		}
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

// smtpSender is the SMTP sender, rebuilt when its secret changes (as the
// notify function's).
func smtpSender(ctx context.Context, env *coldstart.Env, sm *secrets.Store, set digest.Settings) digest.Sender {
	smtp := secrets.NewRotating(sm, set.SMTPSecretID, func(v string) (*notify.SMTPSender, error) {
		var creds struct{ Username, Password string }
		if err := secrets.Unmarshal(set.SMTPSecretID, v, &creds, "password"); err != nil {
			return nil, err
		}
		c := set.SMTP
		c.Username, c.Password = creds.Username, creds.Password
		return notify.NewSMTPSender(c, env.Log)
	})
	_, _, err := smtp.Get(ctx, false)
	coldstart.Must(env, err)
	return sendFunc(func(ctx context.Context, k delivery.Key, m *notify.Message) (string, error) {
		return secrets.Do(ctx, smtp, func(s *notify.SMTPSender) (string, error) { return s.Send(ctx, k, m) })
	})
}

type sendFunc func(context.Context, delivery.Key, *notify.Message) (string, error)

func (f sendFunc) Send(ctx context.Context, k delivery.Key, m *notify.Message) (string, error) {
	return f(ctx, k, m)
}
