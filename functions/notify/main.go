// Command notify is the notify stage: it e-mails each recipient the review
// exactly once through the outbox. See shared/notifystage and shared/notify.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/coldstart"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/notify"
	"github.com/criticizer/criticizer/shared/notifystage"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/queue"
	"github.com/criticizer/criticizer/shared/redact"
	"github.com/criticizer/criticizer/shared/secrets"
	"github.com/criticizer/criticizer/shared/store"
)

func main() {
	ctx := context.Background()
	env := coldstart.Must(coldstart.Load(ctx, "notify"))
	cfg := notify.SMTPConfig{
		Host: env.Vars.String("SMTP_HOST"),
		Port: env.Vars.Int("SMTP_PORT", 587, 1, 65535),
		From: env.Vars.String("SMTP_FROM"),
		TLS:  notify.TLSMode(env.Vars.Optional("SMTP_TLS", "starttls")),
	}
	secretID := env.Vars.String("SMTP_SECRET_ID")
	lookupURL := env.Vars.Optional("SMTP_LOOKUP_URL", "")
	coldstart.Must(env, env.Vars.Err())

	// The sender is rebuilt whenever the SMTP secret changes, so an emergency
	// rotation reaches warm functions: a rejected login re-reads the secret.
	sm := secrets.New(secretsmanager.NewFromConfig(env.AWS), secrets.CacheTTL)
	smtp := secrets.NewRotating(sm, secretID, func(v string) (*notify.SMTPSender, error) {
		var creds struct{ Username, Password string }
		if err := secrets.Unmarshal(secretID, v, &creds, "password"); err != nil {
			return nil, err
		}
		c := cfg
		c.Username, c.Password = creds.Username, creds.Password
		return notify.NewSMTPSender(c, env.Log)
	})
	_, _, err := smtp.Get(ctx, false) // fail the cold start on a bad secret, not the first job
	coldstart.Must(env, err)

	ddb := dynamodb.NewFromConfig(env.AWS)
	jobs := store.New(ddb, env.Config.JobsTable)
	queues := queue.New(sqs.NewFromConfig(env.AWS), env.Config.QueueURLs, env.Config.DLQURLs)
	n := &notifystage.Notify{Outbox: outbox.New(ddb, env.Config.JobsTable), From: cfg.From, Log: env.Log,
		Artifacts: artifacts.New(artifacts.NewS3Client(env.AWS), env.Config.RedactedBkt),
		Sender: notifystage.SenderFunc(func(ctx context.Context, k notify.Key, m *notify.Message) (string, error) {
			return secrets.Do(ctx, smtp, func(s *notify.SMTPSender) (string, error) { return s.Send(ctx, k, m) })
		})}
	if lookupURL != "" {
		n.DeliveryLog = notifystage.HTTPDeliveryLog{URL: lookupURL}
	}
	// Diagnostics leave the system (job record, DLQ): recipient addresses
	// are PII, so they are redacted along with secrets.
	scrub, err := redact.New(redact.Policy{RedactEmails: true})
	coldstart.Must(env, err)
	lambda.Start(env.Runtime(domain.StageNotify, jobs, queues, n, scrub.Sanitize).Handle)
}
