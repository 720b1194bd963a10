// Package queue owns the SQS side: sending envelopes to a stage's queue or
// DLQ, and moving a message's visibility (lease extension, retry delay).
package queue

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/criticizer/criticizer/shared/awserr"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/envelope"
	"github.com/criticizer/criticizer/shared/failure"
)

// API is the part of the SQS client the package uses.
type API interface {
	SendMessage(context.Context, *sqs.SendMessageInput, ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
	ChangeMessageVisibility(context.Context, *sqs.ChangeMessageVisibilityInput, ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
}

// Queues sends envelopes to the stage queues and DLQs.
type Queues struct {
	api  API
	urls map[domain.Stage]string
	dlqs map[domain.Stage]string
}

// New returns Queues over the given stage queue and DLQ URLs.
func New(api API, urls, dlqs map[domain.Stage]string) *Queues {
	return &Queues{api: api, urls: urls, dlqs: dlqs}
}

// Send puts e on its stage's queue, with job_id and stage as message
// attributes so operators can filter in the console without decoding bodies.
func (q *Queues) Send(ctx context.Context, e envelope.Envelope) error {
	body, err := e.Encode()
	if err != nil {
		return failure.Wrap(failure.InternalBug, err)
	}
	return q.SendRaw(ctx, e.Stage, false, body, map[string]string{"job_id": e.JobID, "stage": string(e.Stage)})
}

// SendRaw puts an encoded body on a stage's queue or DLQ with attributes:
// dead letters (byte-identical resends) and malformed messages.
func (q *Queues) SendRaw(ctx context.Context, stage domain.Stage, dlq bool, body string, attributes map[string]string) error {
	url := q.urls[stage]
	if dlq {
		url = q.dlqs[stage]
	}
	if url == "" {
		return failure.Errorf(failure.InternalBug, "no queue URL configured for stage %s (dlq=%t)", stage, dlq)
	}
	in := &sqs.SendMessageInput{QueueUrl: &url, MessageBody: &body, MessageAttributes: map[string]types.MessageAttributeValue{}}
	for k, v := range attributes {
		if v != "" {
			in.MessageAttributes[k] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
		}
	}
	if _, err := q.api.SendMessage(ctx, in); err != nil {
		return classify(fmt.Errorf("send to %s queue: %w", stage, err))
	}
	return nil
}

// SetVisibility makes a received message invisible for seconds from now.
func (q *Queues) SetVisibility(ctx context.Context, stage domain.Stage, receipt string, seconds int32) error {
	url := q.urls[stage]
	_, err := q.api.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &url, ReceiptHandle: &receipt, VisibilityTimeout: seconds})
	if err != nil {
		return classify(fmt.Errorf("change visibility on %s queue: %w", stage, err))
	}
	return nil
}

// classify maps an SQS error through the one AWS classifier (an invalid
// receipt handle is LEASE_LOST).
func classify(err error) error { return failure.Wrap(awserr.Class(err), err) }
