// Command notify is the notify stage: it e-mails each recipient the review
// exactly once through the outbox. See shared/notifystage and shared/notify.
package main

import (
	"context"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/coldstart"
	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/digest"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/evidence"
	"github.com/criticizer/criticizer/shared/jobpage"
	"github.com/criticizer/criticizer/shared/ledger"
	"github.com/criticizer/criticizer/shared/notify"
	"github.com/criticizer/criticizer/shared/notifystage"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/queue"
	"github.com/criticizer/criticizer/shared/redact"
	"github.com/criticizer/criticizer/shared/sanitize"
	"github.com/criticizer/criticizer/shared/secrets"
	"github.com/criticizer/criticizer/shared/ses"
	"github.com/criticizer/criticizer/shared/store"
	"github.com/criticizer/criticizer/shared/swarm"
)

func main() {
	ctx := context.Background()
	env := coldstart.Must(coldstart.Load(ctx, "notify", sanitize.Logs))
	set := notifystage.SettingsFromEnv(env.Vars)
	coldstart.Must(env, env.Vars.Err())

	ddb := dynamodb.NewFromConfig(env.AWS)
	jobs := store.New(ddb, env.Config.JobsTable)
	queues := queue.New(sqs.NewFromConfig(env.AWS), env.Config.QueueURLs, env.Config.DLQURLs)
	reporter := swarm.NewReporter(jobs, env.Log)
	// One Secrets Manager client and cache for every secret the stage reads.
	sm := secrets.New(secretsmanager.NewFromConfig(env.AWS), secrets.CacheTTL)
	// The delivery key, read once: a key that changed under running
	// functions would make every row a new intent (docs/operating.md).
	key, ver, err := set.Outbox.Key(ctx, sm)
	coldstart.Must(env, err)
	rows := outbox.New(ddb, env.Config.JobsTable).WithUniquenessRetention(env.Config.UniquenessRetention).WithActor("notify").WithSecret(key)
	if env.Config.UniquenessRetention > 0 && !ver.Created.IsZero() {
		// Rows written before the key (keyed by the address) have all
		// expired by then: no more looking for them. The week covers the
		// previous release's functions still writing while the key is new;
		// an expired row that TTL has not deleted yet (days) is no longer
		// a promise.
		rows.WithAddressKeyedUntil(ver.Created.Add(env.Config.UniquenessRetention + 7*24*time.Hour))
	}
	n := &notifystage.Notify{Outbox: rows,
		Secret: key, From: set.Evidence.From, Log: env.Log, Swarm: reporter, Gate: set.Gate, EmailParticipants: set.EmailParticipants, Window: set.Evidence.Window,
		Artifacts: artifacts.New(artifacts.NewS3Client(env.AWS), env.Config.RedactedBkt),
		HTML:      true, SwarmLinks: set.SwarmLinks, // HTML + text alternatives; Swarm review link when known
		Recipients: set.Recipients, Metrics: env.Metrics,
		// A rerun is compared with the previous version's ledger entry, and
		// names what it resolved from that version's job result.
		Ledger: ledger.NewStore(ddb, env.Config.JobsTable).WithUniquenessRetention(env.Config.UniquenessRetention), Jobs: jobs}
	if set.JobPage.SecretID != "" {
		n.JobPage = &jobpage.Links{Key: &jobpage.Key{Secrets: sm, SecretID: set.JobPage.SecretID}, Base: set.JobPage.BaseURL}
	}
	if c := set.Comments; c.On {
		// Findings as comments on the job's Swarm review (NOTIFY_CHANNELS, docs/swarm-comments.md).
		api := &swarm.Client{BaseURL: set.SwarmLinks.URL, Credentials: swarm.SecretCredentials(sm, c.APISecretID)}
		n.Comments = &notifystage.SwarmComments{Rows: n.Outbox.(*outbox.Outbox), Window: c.Window, API: api}
		// What reviewers do with each posted finding (package outcome).
		fates := outcome.NewStore(ddb, env.Config.JobsTable).WithUniquenessRetention(env.Config.UniquenessRetention)
		n.Outcomes = &notifystage.Outcomes{Store: fates, Reader: &outcome.Reader{Store: fates, Rows: n.Outbox.(*outbox.Outbox), Comments: api}}
	}
	if set.WeeklyDigest {
		n.Digest = &digest.Entries{API: ddb, Table: env.Config.JobsTable} // each job's week entry (shared/digest)
	}
	if set.Evidence.Provider == "ses" {
		// IAM credentials, no password; SES's published events are the evidence.
		sender, err := ses.New(ses.NewClient(env.AWS), set.SESConfigurationSet, env.Log)
		coldstart.Must(env, err)
		n.Sender, n.Evidence = sender, evidence.New(ddb, env.Config.JobsTable, 0)
	} else {
		n.Sender, n.Evidence = smtpSender(ctx, env, sm, set)
	}
	// Diagnostics leave the system (job record, DLQ): recipient addresses
	// are PII, so they are redacted along with secrets.
	scrub, err := redact.New(redact.Policy{RedactEmails: true})
	coldstart.Must(env, err)
	rt := env.Runtime(domain.StageNotify, jobs, queues, n, scrub.Sanitize)
	rt.AfterDeadLetter = reporter.DeadLettered
	rt.Redeliver = n // a succeeded job's repaired delivery (rule OB-5)
	lambda.Start(rt.Handle)
}

// smtpSender builds the SMTP sender from its settings and secret, and the
// relay's message lookup (provider evidence) when SMTP_LOOKUP_URL names one.
func smtpSender(ctx context.Context, env *coldstart.Env, sm *secrets.Store, set notifystage.Settings) (notifystage.Sender, notifystage.Evidence) {
	cfg, secretID := set.SMTP, set.SMTPSecretID
	// The sender is rebuilt whenever the SMTP secret changes, so an emergency
	// rotation reaches warm functions: a rejected login re-reads the secret.
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
	sender := notifystage.SenderFunc(func(ctx context.Context, k delivery.Key, m *notify.Message) (string, error) {
		return secrets.Do(ctx, smtp, func(s *notify.SMTPSender) (string, error) { return s.Send(ctx, k, m) })
	})
	if set.Evidence.LookupURL == "" {
		return sender, nil
	}
	return sender, evidence.HTTP{URL: set.Evidence.LookupURL}
}
