// Command webhook is the API Gateway function: POST /webhooks/changelist
// creates a review job, GET /jobs/{id} reports on one. See shared/webhook.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/criticizer/criticizer/shared/coldstart"
	"github.com/criticizer/criticizer/shared/jobpage"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/queue"
	"github.com/criticizer/criticizer/shared/recipients"
	"github.com/criticizer/criticizer/shared/secrets"
	"github.com/criticizer/criticizer/shared/store"
	"github.com/criticizer/criticizer/shared/webhook"
)

func main() {
	ctx := context.Background()
	env := coldstart.Must(coldstart.Load(ctx, "webhook"))
	secretID := env.Vars.String("WEBHOOK_SECRET_ID")
	window := env.Vars.Seconds("REPLAY_WINDOW_SECONDS", 300, 30, 3600)
	// Swarm's bearer token: optional; unset turns bearer authentication off.
	swarmTokenID := env.Vars.Optional("SWARM_TOKEN_SECRET_ID", "")
	swarmURL := env.Vars.Optional("SWARM_URL", "")
	policy, policyErr := recipients.Load(env.Vars) // RECIPIENT_DOMAINS, MAX_RECIPIENTS
	// The job page (optional): its key mints the link a Swarm run shows.
	pageKeyID := env.Vars.Optional("JOB_PAGE_SECRET_ID", "")
	pageBase := env.Vars.Optional("JOB_PAGE_BASE_URL", "")
	coldstart.Must(env, env.Vars.Err())
	coldstart.Must(env, policyErr)

	ddb := dynamodb.NewFromConfig(env.AWS)
	// A short cache: a revoked previous credential is refused within KeyCacheTTL.
	sm := secrets.New(secretsmanager.NewFromConfig(env.AWS), webhook.KeyCacheTTL)
	h := &webhook.Handler{
		Jobs:       store.New(ddb, env.Config.JobsTable).WithRetention(env.Config.Retention).WithUniquenessRetention(env.Config.UniquenessRetention),
		Deliveries: outbox.New(ddb, env.Config.JobsTable).WithUniquenessRetention(env.Config.UniquenessRetention),
		Queue:      queue.New(sqs.NewFromConfig(env.AWS), env.Config.QueueURLs, env.Config.DLQURLs),
		Keys:       webhook.SecretKeys(sm, secretID, nil), Log: env.Log, Metrics: env.Metrics,
		ReplayWindow: window, SweepAfter: 2 * env.Config.Lease,
		SwarmURL: swarmURL, Recipients: policy,
	}
	if swarmTokenID != "" {
		h.SwarmTokens = webhook.SecretKeys(sm, swarmTokenID, nil)
	}
	if pageKeyID != "" {
		links := &jobpage.Links{Key: &jobpage.Key{Secrets: sm, SecretID: pageKeyID}, Base: pageBase}
		h.JobPage = links.Path
		if pageBase != "" {
			h.JobPage = links.URL
		}
	}
	lambda.Start(h.Handle)
}
