// Command webhook is the API Gateway function: POST /webhooks/changelist
// creates a review job, GET /jobs/{id} reports on one. See shared/webhook.
package main

import (
	"context"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/criticizer/criticizer/shared/coldstart"
	"github.com/criticizer/criticizer/shared/secrets"
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
	coldstart.Must(env, env.Vars.Err())

	h := &webhook.Handler{
		Jobs: env.Jobs, Deliveries: env.Outbox, Queue: env.Queues, Log: env.Log, Metrics: env.Metrics,
		ReplayWindow: window, SweepAfter: 2 * env.Config.Lease, IdemTTL: 30 * 24 * time.Hour,
		Keys: rotating(env, secretID), SwarmURL: swarmURL,
	}
	if swarmTokenID != "" {
		h.SwarmTokens = rotating(env, swarmTokenID)
	}
	lambda.Start(h.Handle)
}

// rotating returns the secret's current value and, during a rotation, the
// previous one: both verify, so a rotation needs no downtime.
func rotating(env *coldstart.Env, secretID string) webhook.Keys {
	return func(ctx context.Context, fresh bool) ([][]byte, error) {
		if fresh {
			env.Secrets.Forget(secretID)
		}
		cur, _, err := env.Secrets.Get(ctx, secretID, secrets.Current)
		if err != nil {
			return nil, err
		}
		keys := [][]byte{[]byte(cur)}
		if prev, found, err := env.Secrets.Get(ctx, secretID, secrets.Previous); err == nil && found {
			keys = append(keys, []byte(prev))
		}
		return keys, nil
	}
}
