// Command notify is the notify stage: it e-mails each recipient the review
// exactly once through the outbox. See shared/pipeline and shared/notify.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/criticizer/criticizer/shared/coldstart"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/notify"
	"github.com/criticizer/criticizer/shared/pipeline"
	"github.com/criticizer/criticizer/shared/redact"
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

	var err error
	if cfg.Username, err = env.Secrets.Field(ctx, secretID, "username"); err == nil {
		cfg.Password, err = env.Secrets.Field(ctx, secretID, "password")
	}
	coldstart.Must(env, err)
	sender, err := notify.NewSMTPSender(cfg, env.Log)
	coldstart.Must(env, err)

	n := &pipeline.Notify{Outbox: env.Outbox, Artifacts: env.Redacted(), Sender: sender, From: cfg.From, Log: env.Log}
	if lookupURL != "" {
		n.DeliveryLog = pipeline.HTTPDeliveryLog{URL: lookupURL}
	}
	// Diagnostics leave the system (job record, DLQ): recipient addresses
	// are PII, so they are redacted along with secrets.
	scrub, err := redact.New(redact.Policy{RedactEmails: true})
	coldstart.Must(env, err)
	lambda.Start(env.Runtime(domain.StageNotify, n, scrub.Sanitize).Handle)
}
