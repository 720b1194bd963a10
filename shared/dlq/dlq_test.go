package dlq

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/envelope"
	"github.com/criticizer/criticizer/shared/failure"
)

// memSQS is an in-memory pair of queues per stage: receive hands out every
// visible message once, send appends, delete removes.
type memSQS struct {
	msgs    map[string][]types.Message // queue URL → messages
	sendErr error
	deleted []string
}

func (m *memSQS) ReceiveMessage(_ context.Context, in *sqs.ReceiveMessageInput, _ ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	out := m.msgs[*in.QueueUrl]
	m.msgs[*in.QueueUrl] = nil // invisible until released or deleted
	m.msgs["held:"+*in.QueueUrl] = append(m.msgs["held:"+*in.QueueUrl], out...)
	return &sqs.ReceiveMessageOutput{Messages: out}, nil
}
func (m *memSQS) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	if m.sendErr != nil {
		return nil, m.sendErr
	}
	m.msgs[*in.QueueUrl] = append(m.msgs[*in.QueueUrl], types.Message{Body: in.MessageBody, MessageId: aws.String("new")})
	return &sqs.SendMessageOutput{}, nil
}
func (m *memSQS) DeleteMessage(_ context.Context, in *sqs.DeleteMessageInput, _ ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error) {
	m.deleted = append(m.deleted, *in.ReceiptHandle)
	return &sqs.DeleteMessageOutput{}, nil
}
func (m *memSQS) ChangeMessageVisibility(context.Context, *sqs.ChangeMessageVisibilityInput, ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error) {
	return &sqs.ChangeMessageVisibilityOutput{}, nil
}

func deadLetter(t *testing.T, id, jobID string, class failure.Class) types.Message {
	t.Helper()
	body, err := envelope.Envelope{V: envelope.Version, JobID: jobID, Changelist: 1, ReviewVersion: 1, Stage: domain.StageLLM,
		DeadLetter: &envelope.DeadLetter{ID: "dl-" + id, ErrorClass: class, Stage: domain.StageLLM}}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return types.Message{MessageId: aws.String(id), ReceiptHandle: aws.String("r-" + id), Body: aws.String(body)}
}

func TestReplay(t *testing.T) {
	ctx := context.Background()
	setup := func() (*memSQS, *Client) {
		m := &memSQS{msgs: map[string][]types.Message{"llm-dlq": {
			deadLetter(t, "a", "j1", failure.RateLimited), deadLetter(t, "b", "j2", failure.AuthDenied),
			{MessageId: aws.String("c"), ReceiptHandle: aws.String("r-c"), Body: aws.String("not an envelope")},
		}}}
		return m, &Client{API: m, Queues: map[domain.Stage]Queues{domain.StageLLM: {Source: "llm", DLQ: "llm-dlq"}}}
	}
	t.Run("moves the matching envelopes unchanged, deletes them after the send", func(t *testing.T) {
		m, c := setup()
		moved, err := c.Replay(ctx, domain.StageLLM, Filter{ErrorClass: failure.RateLimited}, 10)
		if err != nil || len(moved) != 1 || moved[0].MessageID != "a" {
			t.Fatalf("moved %+v, err %v: want a only", moved, err)
		}
		if got := m.msgs["llm"]; len(got) != 1 || *got[0].Body != *deadLetter(t, "a", "j1", failure.RateLimited).Body {
			t.Fatalf("source queue %v: want a's body unchanged", got)
		}
		if len(m.deleted) != 1 || m.deleted[0] != "r-a" {
			t.Fatalf("deleted %v: want a's receipt only", m.deleted)
		}
	})
	t.Run("a failed send deletes nothing: never a loss", func(t *testing.T) {
		m, c := setup()
		m.sendErr = errors.New("throttled")
		if _, err := c.Replay(ctx, domain.StageLLM, Filter{}, 10); err == nil || len(m.deleted) != 0 {
			t.Fatalf("err %v, deleted %v: want an error and nothing deleted", err, m.deleted)
		}
	})
	t.Run("restart asks fetch for a full restart and removes the job's dead letters", func(t *testing.T) {
		m, c := setup()
		c.Queues[domain.StageFetch] = Queues{Source: "fetch", DLQ: "fetch-dlq"}
		it := deadLetter(t, "a", "j1", failure.RateLimited)
		env, _ := envelope.Decode(*it.Body)
		if err := c.Restart(ctx, env, "ops", "INC-1"); err != nil {
			t.Fatal(err)
		}
		got := m.msgs["fetch"]
		if len(got) != 1 {
			t.Fatalf("fetch queue %v: want one restart request", got)
		}
		req, err := envelope.Decode(*got[0].Body)
		if err != nil || req.Stage != domain.StageFetch || req.Replay == nil || req.Replay.Mode != envelope.ModeFullRestart || req.DeadLetter != nil {
			t.Fatalf("restart request %+v, %v", req, err)
		}
		if len(m.deleted) != 1 || m.deleted[0] != "r-a" {
			t.Fatalf("deleted %v: want j1's dead letter only", m.deleted)
		}
	})
}
