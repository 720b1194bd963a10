package notifystage

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	swarmstandin "github.com/criticizer/criticizer/internal/standin/swarm"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
	"github.com/criticizer/criticizer/shared/swarm"
)

// countingTable is the in-process jobs table with the outbox's DynamoDB
// requests counted, and the items they read (what DynamoDB bills a read
// by: every item a Query returns, a GetItem that found one) and wrote.
type countingTable struct {
	*dynamotest.Dynamo
	requests, read, written atomic.Int64
}

func (c *countingTable) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	c.requests.Add(1)
	out, err := c.Dynamo.GetItem(ctx, in, o...)
	if err == nil && out.Item != nil {
		c.read.Add(1)
	}
	return out, err
}

func (c *countingTable) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	c.requests.Add(1)
	out, err := c.Dynamo.Query(ctx, in, o...)
	if err == nil {
		c.read.Add(int64(max(len(out.Items), int(out.ScannedCount))))
	}
	return out, err
}

func (c *countingTable) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	c.requests.Add(1)
	c.written.Add(1)
	return c.Dynamo.UpdateItem(ctx, in, o...)
}

func (c *countingTable) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	c.requests.Add(1)
	c.written.Add(1)
	return c.Dynamo.PutItem(ctx, in, o...)
}

// wholeListing is the Swarm client as it was before lookups had a bound:
// every lookup lists the whole review.
type wholeListing struct{ *swarm.Client }

func (w wholeListing) MarkedAfter(ctx context.Context, review, _ int64) (map[swarm.Marker]swarm.Comment, error) {
	return w.Marked(ctx, review)
}

// unboundedRows is the outbox as it was before rows recorded a bound.
type unboundedRows struct{ *outbox.Outbox }

func (u unboundedRows) Begin(ctx context.Context, k outbox.Ref, jobID string, now time.Time) (*outbox.Send, error) {
	it, _ := outbox.ItemOf(k)
	return u.Outbox.Begin(ctx, it, jobID, now)
}

// BenchmarkNotifyAttemptOnBusyReview: one notify attempt on a Swarm review
// with 500 earlier comments by reviewers (2 e-mails, 2 findings and a
// summary), counting the Swarm requests, the comments they listed, and the
// outbox's DynamoDB requests and items (the job's own writes and the rerun
// ledger's read are RequestsPerReview's): the first attempt; the retry
// after the summary's create was stored and its answer lost, with 10
// comments by reviewers since; and version 2, which marks version 1's
// findings resolved. "bounded" is the service; "whole" the lookups as they
// were, reading every comment of the review.
func BenchmarkNotifyAttemptOnBusyReview(b *testing.B) {
	for _, sc := range []string{"first", "retry-after-lost-create", "rerun"} {
		for _, variant := range []string{"bounded", "whole"} {
			b.Run(sc+"/"+variant, func(b *testing.B) {
				var swarmReqs, listed, ddbReqs, ddbRead, ddbWritten int64
				for range b.N {
					s, l, dr, rd, wr := notifyAttemptOnBusyReview(b, sc, variant == "whole")
					swarmReqs, listed, ddbReqs, ddbRead, ddbWritten = swarmReqs+s, listed+l, ddbReqs+dr, ddbRead+rd, ddbWritten+wr
				}
				n := float64(b.N)
				b.ReportMetric(float64(swarmReqs)/n, "swarm-requests")
				b.ReportMetric(float64(listed)/n, "comments-listed")
				b.ReportMetric(float64(ddbReqs)/n, "ddb-requests")
				b.ReportMetric(float64(ddbRead)/n, "ddb-items-read")
				b.ReportMetric(float64(ddbWritten)/n, "ddb-items-written")
			})
		}
	}
}

func notifyAttemptOnBusyReview(b *testing.B, scenario string, whole bool) (swarmReqs, listed, ddbReqs, ddbRead, ddbWritten int64) {
	b.StopTimer()
	r := newCommentRig(b)
	table := &countingTable{Dynamo: dynamotest.New()}
	ob := outbox.New(table, dynamotest.Table)
	r.n.Outbox, r.n.Comments.Rows = ob, ob
	if whole {
		r.n.Comments.Rows, r.n.Comments.API = unboundedRows{ob}, wholeListing{r.n.Comments.API.(*swarm.Client)}
	}
	r.seedReviewerComments(500)
	switch scenario {
	case "retry-after-lost-create":
		r.swarm.InjectFault(swarmstandin.OpCreateComment, swarmstandin.Fault{}, swarmstandin.Fault{}, swarmstandin.Fault{Drop: true, AfterStore: true})
		if _, err := r.process(b); !failure.Classify(err).Retryable() {
			b.Fatalf("first attempt: %v, want a retryable error", err)
		}
		r.seedReviewerComments(10)
		r.now = t0.Add(time.Second)
	case "rerun":
		r.job = r.putVersion(b, 1, commentFindings, "//depot/app/db.go", "//depot/app/io.go")
		if _, err := r.process(b); err != nil {
			b.Fatal(err)
		}
		r.seedReviewerComments(20)
		r.job = r.putVersion(b, 2, []domain.Finding{}, "//depot/app/db.go", "//depot/app/io.go")
	}
	mark := len(r.swarm.Requests())
	req0, read0, wr0 := table.requests.Load(), table.read.Load(), table.written.Load()
	b.StartTimer()
	if _, err := r.process(b); err != nil {
		b.Fatalf("%s: %v", scenario, err)
	}
	b.StopTimer()
	for _, q := range r.swarm.Requests()[mark:] {
		swarmReqs++
		listed += int64(q.Listed)
	}
	if n := len(r.ours(b)); (scenario == "rerun" && n != 5) || (scenario != "rerun" && n != 3) {
		b.Fatalf("%s: %d comments of ours", scenario, n)
	}
	return swarmReqs, listed, table.requests.Load() - req0, table.read.Load() - read0, table.written.Load() - wr0
}
