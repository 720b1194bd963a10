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
	coldstart.Must(env, env.Vars.Err())

	h := &webhook.Handler{
		Jobs: env.Jobs, Deliveries: env.Outbox, Queue: env.Queues, Log: env.Log, Metrics: env.Metrics,
		ReplayWindow: window, SweepAfter: 2 * env.Config.Lease, IdemTTL: 30 * 24 * time.Hour,
		Keys: func(ctx context.Context, fresh bool) ([][]byte, error) {
			if fresh {
				env.Secrets.Forget(secretID)
			}
			cur, _, err := env.Secrets.Get(ctx, secretID, secrets.Current)
			if err != nil {
				return nil, err
			}
			keys := [][]byte{[]byte(cur)}
			// During a rotation the previous version still verifies.
			if prev, found, err := env.Secrets.Get(ctx, secretID, secrets.Previous); err == nil && found {
				keys = append(keys, []byte(prev))
			}
			return keys, nil
		},
	}
	lambda.Start(h.Handle)
}
