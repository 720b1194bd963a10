// Command sweeper runs on a schedule and re-enqueues jobs that would
// otherwise be lost: stored but never enqueued, or stuck behind an expired
// lease with no message in flight. See shared/sweep.
package main

import (
	"context"
	"encoding/json"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/criticizer/criticizer/shared/coldstart"
	"github.com/criticizer/criticizer/shared/queue"
	"github.com/criticizer/criticizer/shared/store"
	"github.com/criticizer/criticizer/shared/sweep"
)

func main() {
	env := coldstart.Must(coldstart.Load(context.Background(), "sweeper"))
	jobs := store.New(dynamodb.NewFromConfig(env.AWS), env.Config.JobsTable)
	queues := queue.New(sqs.NewFromConfig(env.AWS), env.Config.QueueURLs, env.Config.DLQURLs)

	s := &sweep.Sweeper{Jobs: jobs, Queue: queues, Lease: env.Config.Lease, Log: env.Log, Metrics: env.Metrics}
	// The event (EventBridge schedule or a manual invoke) carries nothing we need.
	lambda.Start(func(ctx context.Context, _ json.RawMessage) (sweep.Report, error) {
		rep, err := s.Run(ctx)
		if err == nil {
			env.Log.InfoContext(ctx, "sweep finished", "due", rep.Due, "enqueued", rep.Enqueued, "postponed", rep.Postponed, "conflicted", rep.Conflicted)
		}
		return rep, err
	})
}
