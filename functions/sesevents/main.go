// Command sesevents records SES delivery events (via SNS or EventBridge) in
// the jobs table by outbox tag: the evidence notify's lookup-before-resend
// and the reconciler read (shared/evidence).
package main

import (
	"context"
	"encoding/json"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/criticizer/criticizer/shared/coldstart"
	"github.com/criticizer/criticizer/shared/evidence"
	"github.com/criticizer/criticizer/shared/sanitize"
)

func main() {
	env := coldstart.Must(coldstart.Load(context.Background(), "sesevents", sanitize.Logs))
	events := evidence.New(dynamodb.NewFromConfig(env.AWS), env.Config.JobsTable, 0)
	lambda.Start(func(ctx context.Context, payload json.RawMessage) (evidence.Report, error) {
		return events.HandleSES(ctx, payload, env.Log, env.Metrics)
	})
}
