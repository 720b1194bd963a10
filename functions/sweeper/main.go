// Command sweeper runs on a schedule. It re-enqueues jobs that would
// otherwise be lost (stored but never enqueued, or stuck behind an expired
// lease with no message in flight; see shared/sweep), then reconciles
// delivery rows whose outcome is in doubt (see shared/reconcile).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/criticizer/criticizer/shared/coldstart"
	"github.com/criticizer/criticizer/shared/deliverylog"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/queue"
	"github.com/criticizer/criticizer/shared/reconcile"
	"github.com/criticizer/criticizer/shared/store"
	"github.com/criticizer/criticizer/shared/sweep"
)

// result is what one scheduled run did.
type result struct {
	Sweep     sweep.Report     `json:"sweep"`
	Reconcile reconcile.Report `json:"reconcile"`
}

func main() {
	env := coldstart.Must(coldstart.Load(context.Background(), "sweeper"))
	v := env.Vars
	provider := v.Optional("EMAIL_PROVIDER", "smtp")
	from := v.Optional("SMTP_FROM", "")
	lookupURL := v.Optional("SMTP_LOOKUP_URL", "")
	window := v.Seconds("SEND_COMPLETION_WINDOW_SECONDS", int(deliverylog.DefaultWindow(provider).Seconds()), 1, 86400)
	coldstart.Must(env, v.Err())

	ddb := dynamodb.NewFromConfig(env.AWS)
	jobs := store.New(ddb, env.Config.JobsTable)
	queues := queue.New(sqs.NewFromConfig(env.AWS), env.Config.QueueURLs, env.Config.DLQURLs)
	s := &sweep.Sweeper{Jobs: jobs, Queue: queues, Lease: env.Config.Lease, Log: env.Log, Metrics: env.Metrics}
	rec := &reconcile.Reconciler{Rows: outbox.New(ddb, env.Config.JobsTable), FromDomain: from[strings.LastIndexByte(from, '@')+1:],
		Window: window, Lookback: deliverylog.DefaultRetention, Logger: env.Log, Metrics: env.Metrics}
	switch {
	case provider == "ses":
		rec.Log = deliverylog.New(ddb, env.Config.JobsTable, 0)
	case lookupURL != "":
		rec.Log = deliverylog.HTTP{URL: lookupURL}
	}
	if rec.Log != nil && !strings.Contains(from, "@") {
		// The lookup is by the deterministic Message-ID, which carries the From domain.
		coldstart.Must(env, errors.New("SMTP_FROM is required to reconcile against the provider's delivery log"))
	}
	// The event (EventBridge schedule or a manual invoke) carries nothing we need.
	lambda.Start(func(ctx context.Context, _ json.RawMessage) (result, error) {
		var res result
		var errSweep, errRec error
		res.Sweep, errSweep = s.Run(ctx)
		res.Reconcile, errRec = rec.Run(ctx)
		env.Log.InfoContext(ctx, "sweep finished", "due", res.Sweep.Due, "enqueued", res.Sweep.Enqueued, "postponed", res.Sweep.Postponed,
			"conflicted", res.Sweep.Conflicted, "reconcile", res.Reconcile)
		return res, errors.Join(errSweep, errRec)
	})
}
