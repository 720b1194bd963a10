// Command sweeper runs on a schedule: it re-enqueues jobs that would
// otherwise be lost (shared/sweep), reconciles delivery rows whose outcome is
// in doubt (shared/reconcile), e-mails and, with the Swarm login, review
// comments, then reads reviewers' reactions (outcome.Pass). What each pass
// costs: docs/development.md, "What the sweeper does and costs". Hourly,
// {"check":"retention"} runs the retention check instead (shared/retention),
// which also scrubs delivery rows past the data retention (outbox.Scrubber).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/coldstart"
	"github.com/criticizer/criticizer/shared/evidence"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/queue"
	"github.com/criticizer/criticizer/shared/reconcile"
	"github.com/criticizer/criticizer/shared/retention"
	"github.com/criticizer/criticizer/shared/sanitize"
	"github.com/criticizer/criticizer/shared/secrets"
	"github.com/criticizer/criticizer/shared/store"
	"github.com/criticizer/criticizer/shared/swarm"
	"github.com/criticizer/criticizer/shared/sweep"
)

// result is what one scheduled run did.
type result struct {
	Sweep     sweep.Report        `json:"sweep"`
	Reconcile reconcile.Report    `json:"reconcile"`
	Retention *retention.Report   `json:"retention,omitempty"`
	Outcomes  *outcome.PassReport `json:"outcomes,omitempty"`
}

// budgets splits what is left of an invocation between its passes, with a
// margin; each stops at its share and the next run resumes.
func budgets(ctx context.Context) (short, sweep, reconcile time.Duration) {
	left := 60 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		left = time.Until(dl)
	}
	usable := left * 3 / 4
	return usable / 8, usable * 3 / 8, usable / 2
}

func main() {
	env := coldstart.Must(coldstart.Load(context.Background(), "sweeper", sanitize.Logs))
	ev, ttl := evidence.SettingsFromEnv(env.Vars), retention.SettingsFromEnv(env.Vars)
	sw := swarm.SettingsFromEnv(env.Vars, swarm.ForComments)
	rowSet := outbox.SettingsFromEnv(env.Vars)    // the delivery key names the rows the reconciler settles
	dismissals := outcome.PolicyFromEnv(env.Vars) // who has a say on a review (standing)
	coldstart.Must(env, env.Vars.Err())

	ddb := dynamodb.NewFromConfig(env.AWS)
	jobs := store.New(ddb, env.Config.JobsTable)
	queues := queue.New(sqs.NewFromConfig(env.AWS), env.Config.QueueURLs, env.Config.DLQURLs)
	s := &sweep.Sweeper{Jobs: jobs, Queue: queues, Lease: env.Config.Lease, Skew: env.Config.ClockSkew, Log: env.Log, Metrics: env.Metrics}
	sm := secrets.New(secretsmanager.NewFromConfig(env.AWS), secrets.CacheTTL) // the delivery key and the Swarm login
	key, err := rowSet.Key(context.Background(), sm)
	coldstart.Must(env, err)
	rows := outbox.New(ddb, env.Config.JobsTable).WithActor("reconciler").WithSecret(key)
	rec := &reconcile.Reconciler{Rows: rows, Progress: rows.Pass("reconcile"), Jobs: jobs, Redeliver: queues, FromDomain: ev.FromDomain(),
		Window: ev.Window, Lookback: evidence.DefaultRetention, Log: env.Log, Metrics: env.Metrics}
	switch {
	case ev.Provider == "ses":
		rec.Evidence = evidence.New(ddb, env.Config.JobsTable, 0)
	case ev.LookupURL != "":
		rec.Evidence = evidence.HTTP{URL: ev.LookupURL}
	}
	var reactions *outcome.Pass
	if sw.APISecretID != "" {
		// Swarm comment rows are reconciled against the review's comments.
		api := &swarm.Client{BaseURL: sw.URL, Credentials: swarm.SecretCredentials(sm, sw.APISecretID)}
		rec.Comments = api
		rec.CommentWindow = sw.CommentWindow
		fates := outcome.NewStore(ddb, env.Config.JobsTable).WithUniquenessRetention(env.Config.UniquenessRetention).WithMetrics(env.Metrics)
		reactions = &outcome.Pass{Store: fates, Reader: &outcome.Reader{Store: fates, Rows: rows, Comments: api, Reviews: api, Policy: dismissals}, Log: env.Log}
	}
	check := &retention.Checker{Table: ddb, TableName: env.Config.JobsTable, S3: artifacts.NewS3Client(env.AWS),
		Buckets:           []retention.Bucket{{Name: env.Config.RawBucket, TTL: ttl.RawTTL}, {Name: env.Config.RedactedBkt, TTL: ttl.RedactedTTL}},
		UniquenessForever: env.Config.UniquenessRetention == 0, State: rows.Pass("retention"), Log: env.Log, Metrics: env.Metrics}
	lambda.Start(func(ctx context.Context, ev json.RawMessage) (result, error) {
		var res result
		var in struct {
			Check string `json:"check"`
		}
		_ = json.Unmarshal(ev, &in) // anything else is a sweep
		if in.Check == "retention" {
			now := job.Now()
			check.Also = rows.Scrubber(now.Add(-env.Config.Retention), now)
			_, _, check.Budget = budgets(ctx)
			check.Budget *= 2 // the retention run does nothing else
			rep, err := check.Run(ctx)
			res.Retention = &rep
			env.Log.InfoContext(ctx, "retention check run", "report", rep)
			return res, err
		}
		var errSweep, errRec error
		shortFor, sweepFor, recFor := budgets(ctx)
		s.Budget, rec.Budget = sweepFor, recFor
		res.Sweep, errSweep = s.Run(ctx)
		res.Reconcile, errRec = rec.Run(ctx)
		var errOutcomes error
		if reactions != nil {
			reactions.Budget = shortFor // a short pass: what it does not reach stays due
			var rep outcome.PassReport
			rep, errOutcomes = reactions.Run(ctx)
			res.Outcomes = &rep
		}
		env.Log.InfoContext(ctx, "sweep finished", "due", res.Sweep.Due, "enqueued", res.Sweep.Enqueued, "postponed", res.Sweep.Postponed, "backlog", res.Sweep.Backlog,
			"conflicted", res.Sweep.Conflicted, "reconcile", res.Reconcile)
		return res, errors.Join(errSweep, errRec, errOutcomes)
	})
}
