// Command notify is the notify stage: it e-mails each recipient the review
// exactly once through the outbox. See shared/pipeline and shared/notify.
package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/criticizer/criticizer/shared/coldstart"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/notify"
	"github.com/criticizer/criticizer/shared/pipeline"
	"github.com/criticizer/criticizer/shared/redact"
	"github.com/criticizer/criticizer/shared/secrets"
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
	smtp := secrets.NewRotating(env.Secrets, secretID, func(v string) (*notify.SMTPSender, error) {
		var creds struct{ Username, Password string }
		if err := json.Unmarshal([]byte(v), &creds); err != nil || creds.Password == "" {
			return nil, fmt.Errorf("SMTP secret %s: want JSON with username and password", secretID)
		}
		c := cfg
		c.Username, c.Password = creds.Username, creds.Password
		return notify.NewSMTPSender(c, env.Log)
	})
	_, _, err := smtp.Get(ctx, false) // fail the cold start on a bad secret, not the first job
	coldstart.Must(env, err)

	n := &pipeline.Notify{Outbox: env.Outbox, Artifacts: env.Redacted(), From: cfg.From, Log: env.Log, Swarm: env.SwarmReporter(),
		HTML: true, SwarmURL: env.Vars.Optional("SWARM_URL", ""), // HTML + text alternatives; Swarm review link when known
		Sender: pipeline.SenderFunc(func(ctx context.Context, k notify.Key, m *notify.Message) (string, error) {
			return secrets.Do(ctx, smtp, func(s *notify.SMTPSender) (string, error) { return s.Send(ctx, k, m) })
		})}
	if lookupURL != "" {
		n.DeliveryLog = pipeline.HTTPDeliveryLog{URL: lookupURL}
	}
	// Diagnostics leave the system (job record, DLQ): recipient addresses
	// are PII, so they are redacted along with secrets.
	scrub, err := redact.New(redact.Policy{RedactEmails: true})
	coldstart.Must(env, err)
	lambda.Start(env.Runtime(domain.StageNotify, n, scrub.Sanitize).Handle)
}
