package stage_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/backoff"
	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/envelope"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/notify"
	"github.com/criticizer/criticizer/shared/notifystage"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/queue"
	"github.com/criticizer/criticizer/shared/smtpmail"
	"github.com/criticizer/criticizer/shared/stage"
	"github.com/criticizer/criticizer/shared/store"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
)

// counter counts the DynamoDB and SQS requests of one review.
type counter struct{ n atomic.Int64 }

// countingDDB answers the outbox's requests as DynamoDB would for rows that
// are new: Begin's create-and-mark write returns the sending row.
type countingDDB struct {
	store.API
	c *counter
}

func (d countingDDB) UpdateItem(_ context.Context, in *dynamodb.UpdateItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	d.c.n.Add(1)
	out := &dynamodb.UpdateItemOutput{}
	if strings.Contains(*in.UpdateExpression, "send_token") {
		out.Attributes, _ = attributevalue.MarshalMap(outbox.Row{Status: outbox.Sending, SendToken: "t"})
	}
	return out, nil
}

// countedJobs is the in-process jobs table with the store's requests
// counted (the runtime's writes, and any read it makes).
type countedJobs struct {
	*dynamotest.Dynamo
	c *counter
}

func (d countedJobs) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	d.c.n.Add(1)
	return d.Dynamo.UpdateItem(ctx, in, o...)
}

func (d countedJobs) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	d.c.n.Add(1)
	return d.Dynamo.GetItem(ctx, in, o...)
}

// countingSQS captures the messages sent, for the next stage to receive.
type countingSQS struct {
	c    *counter
	sent *[]string
}

func (q countingSQS) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	q.c.n.Add(1)
	*q.sent = append(*q.sent, *in.MessageBody)
	return &sqs.SendMessageOutput{}, nil
}
func (q countingSQS) ChangeMessageVisibility(context.Context, *sqs.ChangeMessageVisibilityInput, ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error) {
	q.c.n.Add(1)
	return &sqs.ChangeMessageVisibilityOutput{}, nil
}

// memS3 serves the review artifacts the notify stage reads (S3 is not
// counted: the budget is DynamoDB and SQS requests).
type memS3 struct{ artifacts.API }

func (memS3) GetObject(_ context.Context, in *s3.GetObjectInput, _ ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	body := `{"changelist":1,"user":"carol","description":"d","files":[]}`
	if strings.HasSuffix(*in.Key, "result.json") {
		body = `{"schema_version":"1","prompt_version":"p","findings":[]}`
	}
	return &s3.GetObjectOutput{Body: io.NopCloser(bytes.NewReader([]byte(body)))}, nil
}

// BenchmarkRequestsPerReview runs one review through the three stage
// runtimes (fetch → llm → notify, real runtime, queue and outbox code over
// counting fakes) and reports the DynamoDB+SQS requests it took. The budget
// is 8 + 2R: a claim and a completion per stage, two next-stage messages,
// and per recipient one write that creates the delivery row and marks it
// sending plus one that marks it sent.
func BenchmarkRequestsPerReview(b *testing.B) {
	for _, r := range []int{1, 2, 5} {
		b.Run(fmt.Sprintf("recipients=%d", r), func(b *testing.B) {
			var total int64
			for i := 0; i < b.N; i++ {
				total += oneReview(b, r)
			}
			perReview := float64(total) / float64(b.N)
			if budget := float64(8 + 2*r); perReview > budget {
				b.Fatalf("%.0f requests per review, budget %.0f", perReview, budget)
			}
			b.ReportMetric(perReview, "requests")
		})
	}
}

func oneReview(b *testing.B, recipients int) int64 {
	ctx := context.Background()
	c := &counter{}
	var sent []string
	urls := map[domain.Stage]string{domain.StageFetch: "f", domain.StageLLM: "l", domain.StageNotify: "n"}
	queues := queue.New(countingSQS{c: c, sent: &sent}, urls, urls)
	// The store over the in-process table, its requests counted once the
	// job is in place.
	db := dynamotest.New()
	j := job.New("j1", "k", 1, 1, time.Now(), time.Minute)
	j.Artifacts = job.Artifacts{Redacted: "jobs/j1/changeset.json", Result: "jobs/j1/result.json"}
	if err := store.New(db, dynamotest.Table).Put(ctx, j); err != nil {
		b.Fatal(err)
	}
	jobs := store.New(countedJobs{Dynamo: db, c: c}, dynamotest.Table)
	var rcpts []string
	for i := 0; i < recipients; i++ {
		rcpts = append(rcpts, fmt.Sprintf("dev%d@example.com", i))
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	nop := stage.ProcessorFunc(func(context.Context, *job.Job) (job.Result, error) { return job.Result{Recipients: rcpts}, nil })
	// Keyed rows, as deployed, past the time rows keyed by the address may
	// remain (OB-7 counts that one Query per version separately).
	key, err := delivery.NewSecret("requests-bench-delivery-key-0123456789")
	if err != nil {
		b.Fatal(err)
	}
	rows := outbox.New(countingDDB{c: c}, "jobs").WithSecret(key)
	n := &notifystage.Notify{Outbox: rows, Secret: key, Artifacts: artifacts.New(memS3{}, "b"), From: "criticizer@example.com", Log: log,
		Email: smtpmail.NewChannel(func(_ context.Context, _ delivery.Key, m *notify.Message) (string, error) { return m.MessageID, nil }, nil)}
	rt := func(s domain.Stage, p stage.Processor) *stage.Runtime {
		return &stage.Runtime{Stage: s, Jobs: jobs, Queues: queues, Processor: p, Lease: time.Minute, MaxAttempts: 3, Backoff: backoff.Default, Log: log}
	}
	body, err := fetchMessage()
	if err != nil {
		b.Fatal(err)
	}
	for _, r := range []*stage.Runtime{rt(domain.StageFetch, nop), rt(domain.StageLLM, nop), rt(domain.StageNotify, n)} {
		resp, err := r.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m", Body: body, Attributes: map[string]string{"ApproximateReceiveCount": "1"}}}})
		if err != nil || len(resp.BatchItemFailures) != 0 {
			b.Fatalf("%s: %v %+v", r.Stage, err, resp)
		}
		if len(sent) > 0 {
			body, sent = sent[0], sent[1:]
		}
	}
	count := c.n.Load()
	if done, err := jobs.Get(ctx, "j1"); err != nil || done.State != job.Succeeded {
		b.Fatalf("job %+v (%v), want succeeded", done, err)
	}
	return count
}

func fetchMessage() (string, error) {
	j := job.New("j1", "k", 1, 1, time.Now(), time.Minute)
	return envelopeFor(j)
}

func envelopeFor(j *job.Job) (string, error) {
	return envelope.ForJob(j, domain.StageFetch, time.Now()).Encode()
}
