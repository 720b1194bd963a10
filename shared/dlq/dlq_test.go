package dlq

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/envelope"
	"github.com/criticizer/criticizer/shared/failure"
)

// memSQS is an in-memory pair of queues per stage: receive hands out up to
// MaxNumberOfMessages visible messages, oldest first, send appends, delete
// removes.
type memSQS struct {
	msgs    map[string][]types.Message // queue URL → messages
	sendErr error
	deleted []string
	// twice delivers each message a second time, with a new receipt
	// handle, as SQS's at-least-once delivery may; releaseErr fails releases.
	twice      bool
	releaseErr error
	receives   int
}

func (m *memSQS) ReceiveMessage(_ context.Context, in *sqs.ReceiveMessageInput, _ ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	all := m.msgs[*in.QueueUrl]
	n := min(len(all), int(max(in.MaxNumberOfMessages, 1))) // SQS hands out at most MaxNumberOfMessages
	out := slices.Clone(all[:n])
	m.msgs[*in.QueueUrl] = all[n:] // invisible until released or deleted
	if m.twice {
		out = append(out, out...)
	}
	for i := range out {
		m.receives++
		out[i].ReceiptHandle = aws.String(fmt.Sprintf("r-%s-%d", *out[i].MessageId, m.receives)) // only the newest is valid
	}
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

// ChangeMessageVisibility to 0 makes a held message visible again, given the
// receipt handle of its newest receive.
func (m *memSQS) ChangeMessageVisibility(_ context.Context, in *sqs.ChangeMessageVisibilityInput, _ ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error) {
	if m.releaseErr != nil {
		return nil, m.releaseErr
	}
	held := m.msgs["held:"+*in.QueueUrl]
	for i := len(held) - 1; i >= 0; i-- {
		if *held[i].ReceiptHandle != *in.ReceiptHandle {
			continue
		}
		for j := range held { // the newest receive of that message, or the handle is stale
			if j > i && *held[j].MessageId == *held[i].MessageId {
				return nil, errors.New("ReceiptHandleIsInvalid")
			}
		}
		m.msgs[*in.QueueUrl] = append(m.msgs[*in.QueueUrl], held[i])
		m.msgs["held:"+*in.QueueUrl] = append(held[:i:i], held[i+1:]...)
		return &sqs.ChangeMessageVisibilityOutput{}, nil
	}
	return nil, errors.New("ReceiptHandleIsInvalid")
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
		if len(m.deleted) != 1 || m.deleted[0] != "r-a-1" {
			t.Fatalf("deleted %v: want a's receipt only", m.deleted)
		}
	})
	t.Run("max bounds what is moved, not where a match is looked for", func(t *testing.T) {
		m := &memSQS{msgs: map[string][]types.Message{}}
		for i := range 25 { // the job's two dead letters come after 23 others'
			m.msgs["llm-dlq"] = append(m.msgs["llm-dlq"], deadLetter(t, fmt.Sprint("o", i), "other", failure.AuthDenied))
		}
		m.msgs["llm-dlq"] = append(m.msgs["llm-dlq"], deadLetter(t, "x", "mine", failure.AuthDenied), deadLetter(t, "y", "mine", failure.AuthDenied))
		c := &Client{API: m, Queues: map[domain.Stage]Queues{domain.StageLLM: {Source: "llm", DLQ: "llm-dlq"}}}
		moved, err := c.Replay(ctx, domain.StageLLM, Filter{JobID: "mine"}, 1)
		if err != nil || len(moved) != 1 || moved[0].MessageID != "x" {
			t.Fatalf("moved %+v, err %v: want x only", moved, err)
		}
		if n := len(m.msgs["llm-dlq"]); n != 26 {
			t.Fatalf("%d items visible on the DLQ after the replay, want the 26 not moved", n)
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
		if len(m.deleted) != 1 || !strings.HasPrefix(m.deleted[0], "r-a-") {
			t.Fatalf("deleted %v: want j1's dead letter only", m.deleted)
		}
	})
}

// A list is read-only: what one operator listed, the next one lists too.
func TestListThenReleaseShowsTheSameItems(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		twice bool
	}{{"each message received once", false}, {"a message received twice keeps its newest receipt", true}} {
		t.Run(tc.name, func(t *testing.T) {
			m := &memSQS{twice: tc.twice, msgs: map[string][]types.Message{"llm-dlq": {deadLetter(t, "a", "j1", failure.AuthDenied), deadLetter(t, "b", "j2", failure.AuthDenied)}}}
			c := &Client{API: m, Queues: map[domain.Stage]Queues{domain.StageLLM: {Source: "llm", DLQ: "llm-dlq"}}}
			for round := 1; round <= 2; round++ {
				items, err := c.List(ctx, domain.StageLLM, 10)
				if err != nil || len(items) != 2 {
					t.Fatalf("list %d: %d items, %v; want a and b", round, len(items), err)
				}
				if err := c.Release(ctx, items); err != nil {
					t.Fatalf("release %d: %v", round, err)
				}
			}
		})
	}
	t.Run("a failed release names each held item", func(t *testing.T) {
		m := &memSQS{releaseErr: errors.New("throttled"), msgs: map[string][]types.Message{"llm-dlq": {deadLetter(t, "a", "j1", failure.AuthDenied), deadLetter(t, "b", "j2", failure.AuthDenied)}}}
		c := &Client{API: m, Queues: map[domain.Stage]Queues{domain.StageLLM: {Source: "llm", DLQ: "llm-dlq"}}}
		items, err := c.List(ctx, domain.StageLLM, 10)
		if err != nil {
			t.Fatal(err)
		}
		err = c.Release(ctx, items)
		if err == nil || !strings.Contains(err.Error(), "message a") || !strings.Contains(err.Error(), "message b") {
			t.Fatalf("release error %v: want both items named", err)
		}
		m.msgs["llm-dlq"], m.msgs["held:llm-dlq"] = m.msgs["held:llm-dlq"], nil // the holds end
		if _, err := c.Replay(ctx, domain.StageLLM, Filter{JobID: "none"}, 10); err == nil {
			t.Fatal("replay hid its failed release of the untouched items")
		}
	})
}
