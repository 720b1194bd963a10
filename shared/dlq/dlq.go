// Package dlq owns operator work on the dead-letter queues: listing items with
// diagnostics, replaying (the body moved unchanged to the stage's queue,
// resuming with a fresh budget) and requesting a full restart. Moving is receive
// → send → delete, which works on every SQS; on AWS `aws sqs
// start-message-move-task` does the same, since a DLQ message is always a valid
// stage input.
package dlq

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/envelope"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
)

// API is the part of the SQS client the package uses.
type API interface {
	ReceiveMessage(context.Context, *sqs.ReceiveMessageInput, ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	SendMessage(context.Context, *sqs.SendMessageInput, ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
	DeleteMessage(context.Context, *sqs.DeleteMessageInput, ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error)
	ChangeMessageVisibility(context.Context, *sqs.ChangeMessageVisibilityInput, ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
}

// Queues names a stage's source queue and DLQ.
type Queues struct {
	Source string
	DLQ    string
}

// Item is one dead-lettered message.
type Item struct {
	MessageID  string             `json:"message_id"`
	Stage      domain.Stage       `json:"stage"`
	Envelope   *envelope.Envelope `json:"envelope,omitempty"` // nil when the body was not an envelope
	Body       string             `json:"-"`
	Attributes map[string]string  `json:"attributes,omitempty"`
	receipt    string
}

// ErrorClass is the item's class, from its dead_letter block or, for a
// malformed message, its attributes.
func (i Item) ErrorClass() failure.Class {
	if i.Envelope != nil && i.Envelope.DeadLetter != nil {
		return i.Envelope.DeadLetter.ErrorClass
	}
	return failure.Class(i.Attributes["error_class"])
}

// JobID is the item's job, when known.
func (i Item) JobID() string {
	if i.Envelope != nil {
		return i.Envelope.JobID
	}
	return i.Attributes["job_id"]
}

// Client works on the DLQs of every stage.
type Client struct {
	API    API
	Queues map[domain.Stage]Queues
	// Hold is how long listed messages stay invisible to other consumers
	// while a command works on them.
	Hold time.Duration
}

// List returns up to max items; received messages become visible again after
// Hold, so it is safe beside other operators.
func (c *Client) List(ctx context.Context, stage domain.Stage, max int) ([]Item, error) {
	q, ok := c.Queues[stage]
	if !ok || q.DLQ == "" {
		return nil, fmt.Errorf("no DLQ configured for stage %q", stage)
	}
	hold := int32(c.Hold / time.Second)
	if hold < 1 {
		hold = 30
	}
	seen := map[string]int{} // message id → index in items
	var items []Item
	for empty := 0; len(items) < max && empty < 2; {
		out, err := c.API.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: &q.DLQ, MaxNumberOfMessages: int32(min(10, max-len(items))), VisibilityTimeout: hold, WaitTimeSeconds: 1,
			MessageAttributeNames: []string{"All"}, MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		})
		if err != nil {
			return nil, fmt.Errorf("receive from %s DLQ: %w", stage, err)
		}
		if len(out.Messages) == 0 {
			empty++
			continue
		}
		for _, m := range out.Messages {
			id := aws.ToString(m.MessageId)
			if i, ok := seen[id]; ok {
				// Received again (SQS delivers at least once): only the newest
				// receipt handle can release or delete it (DeleteMessage, API
				// reference: "You must provide the most recently received
				// receipt handle"; docs.aws.amazon.com/AWSSimpleQueueService/
				// latest/APIReference/API_DeleteMessage.html).
				items[i].receipt = aws.ToString(m.ReceiptHandle)
				continue
			}
			seen[id] = len(items)
			it := Item{MessageID: id, Stage: stage, Body: aws.ToString(m.Body), receipt: aws.ToString(m.ReceiptHandle), Attributes: map[string]string{}}
			for k, v := range m.MessageAttributes {
				it.Attributes[k] = aws.ToString(v.StringValue)
			}
			if env, err := envelope.Decode(it.Body); err == nil {
				it.Envelope = &env
			}
			items = append(items, it)
		}
	}
	return items, nil
}

// Searched is how many items of a DLQ a command looking for some of them
// reads (show, replay, restart): a match is found however many others were
// dead-lettered before it, up to this many.
const Searched = 1000

// Filter selects items for a replay.
type Filter struct {
	MessageID  string
	JobID      string
	ErrorClass failure.Class
}

func (f Filter) match(i Item) bool {
	return (f.MessageID == "" || f.MessageID == i.MessageID) &&
		(f.JobID == "" || f.JobID == i.JobID()) &&
		(f.ErrorClass == "" || f.ErrorClass == i.ErrorClass())
}

// Replay moves up to max of the matching items back to the stage queue
// unchanged; non-envelopes are skipped (they would only dead-letter again).
func (c *Client) Replay(ctx context.Context, stage domain.Stage, f Filter, max int) (moved []Item, err error) {
	items, err := c.List(ctx, stage, Searched) // max bounds what is moved, not where a match is looked for
	if err != nil {
		return nil, err
	}
	q := c.Queues[stage]
	var untouched []Item
	// What was listed but not moved is visible again at once.
	defer func() { err = errors.Join(err, c.Release(ctx, untouched)) }()
	for i, it := range items {
		if !f.match(it) || it.Envelope == nil || len(moved) >= max {
			untouched = append(untouched, it)
			continue
		}
		if _, err := c.API.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &q.Source, MessageBody: &it.Body}); err != nil {
			untouched = append(untouched, items[i:]...)
			return moved, fmt.Errorf("replay %s: send to %s queue: %w", it.MessageID, stage, err)
		}
		// Sent before deleted: a crash leaves a duplicate, which the replay
		// guard absorbs; never a loss.
		if _, err := c.API.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &q.DLQ, ReceiptHandle: &it.receipt}); err != nil {
			untouched = append(untouched, items[i+1:]...)
			return moved, fmt.Errorf("replay %s: delete from DLQ: %w", it.MessageID, err)
		}
		moved = append(moved, it)
	}
	return moved, nil
}

// Restart requests a full restart from fetch and removes the job's items from
// every DLQ, so none is replayed on top.
func (c *Client) Restart(ctx context.Context, env envelope.Envelope, actor, note string) error {
	env.Stage, env.DeadLetter, env.Attempt = domain.StageFetch, nil, 0
	env.SentAt = job.FormatTime(job.Now())
	env.Replay = &envelope.Request{Mode: envelope.ModeFullRestart, RequestedBy: actor, RequestedAt: env.SentAt, Note: note}
	body, err := env.Encode()
	if err != nil {
		return err
	}
	src := c.Queues[domain.StageFetch].Source
	if _, err := c.API.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &src, MessageBody: &body}); err != nil {
		return fmt.Errorf("send restart: %w", err)
	}
	for stage := range c.Queues {
		items, err := c.List(ctx, stage, Searched)
		if err != nil {
			return err
		}
		var others []Item
		for _, it := range items {
			if it.JobID() != env.JobID {
				others = append(others, it)
				continue
			}
			q := c.Queues[stage]
			if _, err := c.API.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &q.DLQ, ReceiptHandle: &it.receipt}); err != nil {
				return errors.Join(fmt.Errorf("remove %s's dead letter %s: %w", env.JobID, it.MessageID, err), c.Release(ctx, others))
			}
		}
		if err := c.Release(ctx, others); err != nil {
			return err
		}
	}
	return nil
}

// Release makes listed items visible again at once (after a read-only list).
// Every item is tried; an item whose release fails loses nothing but stays
// hidden from other readers until Hold ends, so the error names each one.
func (c *Client) Release(ctx context.Context, items []Item) error {
	var errs []error
	for _, it := range items {
		q := c.Queues[it.Stage]
		if _, err := c.API.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &q.DLQ, ReceiptHandle: &it.receipt, VisibilityTimeout: 0}); err != nil {
			errs = append(errs, fmt.Errorf("release %s DLQ message %s (hidden until its hold ends): %w", it.Stage, it.MessageID, err))
		}
	}
	return errors.Join(errs...)
}
