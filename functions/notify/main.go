// Command notify is the notify stage (shared/notifystage): each recipient
// gets the review once through the outbox; a Swarm review gets its comments
// and test run (channels: shared/mailchannel, shared/swarm/comments).
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/coldstart"
	"github.com/criticizer/criticizer/shared/decide"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/mailchannel"
	"github.com/criticizer/criticizer/shared/notifysettings"
	"github.com/criticizer/criticizer/shared/notifystage"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/queue"
	"github.com/criticizer/criticizer/shared/recipients"
	"github.com/criticizer/criticizer/shared/redact"
	"github.com/criticizer/criticizer/shared/sanitize"
	"github.com/criticizer/criticizer/shared/secrets"
	"github.com/criticizer/criticizer/shared/store"
	"github.com/criticizer/criticizer/shared/swarm"
)

func main() {
	ctx := context.Background()
	env := coldstart.Must(coldstart.Load(ctx, "notify", sanitize.Logs))
	set := notifysettings.SettingsFromEnv(env.Vars)
	mail := mailchannel.SettingsFromEnv(env.Vars)
	coldstart.Must(env, env.Vars.Err())

	ddb := dynamodb.NewFromConfig(env.AWS)
	jobs := store.New(ddb, env.Config.JobsTable)
	queues := queue.New(sqs.NewFromConfig(env.AWS), env.Config.QueueURLs, env.Config.DLQURLs)
	reporter := swarm.NewReporter(jobs, env.Log)
	// One Secrets Manager client and cache for every secret the stage reads.
	sm := secrets.New(secretsmanager.NewFromConfig(env.AWS), secrets.CacheTTL)
	// The delivery key, read once: a key that changed under running
	// functions would make every row a new intent (docs/operating.md).
	key, err := set.Outbox.Key(ctx, sm)
	coldstart.Must(env, err)
	rows := outbox.New(ddb, env.Config.JobsTable).WithUniquenessRetention(env.Config.UniquenessRetention).WithActor("notify").WithSecret(key)
	n := &notifystage.Notify{Outbox: rows,
		Secret: key, From: mail.Evidence.From, Log: env.Log, Swarm: swarm.RunReport{Reporter: reporter}, EmailParticipants: set.EmailParticipants, Window: mail.Evidence.Window,
		Artifacts:  artifacts.New(artifacts.NewS3Client(env.AWS), env.Config.RedactedBkt),
		HTML:       true, // HTML + text alternatives
		Recipients: &recipients.Gate{Policy: set.Recipients, Log: env.Log, Metrics: env.Metrics, Stage: string(domain.StageNotify)}}
	if c := set.Comments; c.On {
		// Findings as comments on the job's Swarm review (NOTIFY_CHANNELS, docs/swarm-comments.md).
		api := &swarm.Client{BaseURL: set.SwarmLinks.URL, Credentials: swarm.SecretCredentials(sm, c.APISecretID)}
		n.Comments = &notifystage.SwarmComments{Rows: rows, Window: c.Window, MaxInline: c.MaxInline, API: api}
		// What reviewers do with each posted finding (package outcome).
		fates := outcome.NewStore(store.Deferring{API: ddb}, env.Config.JobsTable).WithUniquenessRetention(env.Config.UniquenessRetention).WithMetrics(env.Metrics)
		n.Outcomes = &decide.Outcomes{Store: fates}
	}
	// SES (IAM credentials; its published events are the evidence) or SMTP
	// (the relay's lookup when SMTP_LOOKUP_URL names one).
	n.Email, err = mailchannel.New(ctx, mail, mailchannel.Deps{AWS: env.AWS, Jobs: ddb, Table: env.Config.JobsTable, Secrets: sm, Log: env.Log})
	coldstart.Must(env, err)
	// Diagnostics leave the system (job record, DLQ): recipient addresses
	// are PII, so they are redacted along with secrets.
	scrub, err := redact.New(redact.Policy{RedactEmails: true})
	coldstart.Must(env, err)
	rt := env.Runtime(domain.StageNotify, jobs, queues, n, scrub.Sanitize)
	rt.AfterDeadLetter = reporter.DeadLettered
	rt.Redeliver = n       // a succeeded job's repaired delivery (rule OB-5)
	rt.Defer = store.Defer // the outcome records land with the job's finish
	lambda.Start(rt.Handle)
}
