// Command webhook is the API Gateway function: POST /webhooks/changelist
// creates a review job, GET /jobs/{id} reports on one. See shared/webhook.
package main

import (
	"context"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/criticizer/criticizer/shared/coldstart"
	"github.com/criticizer/criticizer/shared/jobpage"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/queue"
	"github.com/criticizer/criticizer/shared/sanitize"
	"github.com/criticizer/criticizer/shared/secrets"
	"github.com/criticizer/criticizer/shared/store"
	"github.com/criticizer/criticizer/shared/swarm"
	"github.com/criticizer/criticizer/shared/swarmevents"
	"github.com/criticizer/criticizer/shared/webhook"
)

func main() {
	ctx := context.Background()
	env := coldstart.Must(coldstart.Load(ctx, "webhook", sanitize.Logs))
	set := webhook.SettingsFromEnv(env.Vars)
	dismissals := outcome.PolicyFromEnv(env.Vars) // who has a say on a review (standing), for events read back
	coldstart.Must(env, env.Vars.Err())

	ddb := dynamodb.NewFromConfig(env.AWS)
	// A short cache: a revoked previous credential is refused within KeyCacheTTL.
	sm := secrets.New(secretsmanager.NewFromConfig(env.AWS), webhook.KeyCacheTTL)
	deliveries := outbox.New(ddb, env.Config.JobsTable).WithUniquenessRetention(env.Config.UniquenessRetention)
	h := &webhook.Handler{
		Jobs:       store.New(ddb, env.Config.JobsTable).WithRetention(env.Config.Retention).WithUniquenessRetention(env.Config.UniquenessRetention),
		Deliveries: deliveries,
		Queue:      queue.New(sqs.NewFromConfig(env.AWS), env.Config.QueueURLs, env.Config.DLQURLs),
		Keys:       webhook.SecretKeys(sm, set.SecretID, time.Now), Log: env.Log, Metrics: env.Metrics,
		ReplayWindow: set.ReplayWindow, SweepAfter: 2 * env.Config.Lease,
		SwarmURL: set.Swarm.URL, Recipients: set.Recipients,
	}
	if set.Swarm.TokenSecretID != "" { // unset: bearer authentication off
		h.SwarmTokens = webhook.SecretKeys(sm, set.Swarm.TokenSecretID, time.Now)
	}
	var api *swarm.Client
	if set.Swarm.URL != "" && set.Swarm.APISecretID != "" { // unset: the fetch stage alone holds a run to its review
		api = &swarm.Client{BaseURL: set.Swarm.URL, Credentials: swarm.SecretCredentials(sm, set.Swarm.APISecretID)}
		h.Reviews = api
	}
	if page := set.JobPage; page.SecretID != "" {
		links := &jobpage.Links{Key: &jobpage.Key{Secrets: sm, SecretID: page.SecretID}, Base: page.BaseURL}
		h.JobPage = links.Path
		if page.BaseURL != "" {
			h.JobPage = links.URL
		}
	}
	if ev := set.SwarmEvents; ev.SecretID != "" { // unset: P4 Code Review webhooks off
		fates := outcome.NewStore(ddb, env.Config.JobsTable).WithUniquenessRetention(env.Config.UniquenessRetention).WithMetrics(env.Metrics)
		h.SwarmEvents = &swarmevents.Receiver{Scheme: ev.Scheme, Keys: swarmevents.Keys(webhook.SecretKeys(sm, ev.SecretID, time.Now)),
			Claims:   swarmevents.NewDeliveries(ddb, env.Config.JobsTable, env.Config.UniquenessRetention),
			Outcomes: eventReader(fates, deliveries, api, dismissals), Log: env.Log}
	}
	lambda.Start(h.Handle)
}

// eventReader reads back the review an event points at, through Swarm's
// API as the sweeper does (an event is never believed); with no Swarm
// login the events are left to the sweeper's pass.
func eventReader(fates *outcome.Store, rows *outbox.Outbox, api *swarm.Client, p outcome.Policy) *outcome.Reader {
	r := &outcome.Reader{Store: fates, Rows: rows, Policy: p}
	if api != nil {
		r.Comments, r.Reviews = api, api
	}
	return r
}
