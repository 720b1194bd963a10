package ses

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/smithy-go"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/letter"
	"github.com/criticizer/criticizer/shared/notify"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/outbox/outboxtest"
)

// mailbox is SES as the channel sees it: what it accepted (its published
// events, the channel's evidence), and the refusal of the next send.
type mailbox struct {
	raw    [][]byte
	refuse error
}

func (b *mailbox) SendEmail(_ context.Context, in *sesv2.SendEmailInput, _ ...func(*sesv2.Options)) (*sesv2.SendEmailOutput, error) {
	if err := b.refuse; err != nil {
		b.refuse = nil
		return nil, err
	}
	b.raw = append(b.raw, in.Content.Raw.Data)
	return &sesv2.SendEmailOutput{MessageId: aws.String(fmt.Sprint("ses-", len(b.raw)))}, nil
}

func (b *mailbox) count(messageID string) int {
	n := 0
	for _, raw := range b.raw {
		if bytes.Contains(raw, []byte("Message-ID: "+messageID)) {
			n++
		}
	}
	return n
}

func (b *mailbox) Delivered(_ context.Context, messageID string) (bool, error) {
	return b.count(messageID) > 0, nil
}

// The SES channel passes the one conformance suite.
func TestSESChannelConformance(t *testing.T) {
	outboxtest.RunChannelSuite(t, func(t *testing.T) outboxtest.Harness[*notify.Message] {
		box := &mailbox{}
		s, err := New(box, "criticizer-test", nil)
		if err != nil {
			t.Fatal(err)
		}
		msgs := map[int]*notify.Message{}
		message := func(i int) *notify.Message {
			if msgs[i] == nil {
				k := delivery.Key{Changelist: int64(4200 + i), Recipient: "alice@example.com", ReviewVersion: 1}
				m, err := notify.Compose(k, letter.Content{JobID: "job-1", Review: domain.ReviewResult{Summary: "fine"}}, notify.Envelope{From: "Criticizer <criticizer@example.com>"})
				if err != nil {
					t.Fatal(err)
				}
				msgs[i] = m
			}
			return msgs[i]
		}
		return outboxtest.Harness[*notify.Message]{
			Channel:   NewChannel(s, box),
			Delivery:  func(i int) (outbox.Ref, *notify.Message) { m := message(i); return outbox.Email(m.Key), m },
			Delivered: func(t *testing.T, i int) int { return box.count(message(i).MessageID) },
			Refuse: func(t *testing.T, permanent bool, text string) {
				code := "TooManyRequestsException"
				if permanent {
					code = "MessageRejected"
				}
				box.refuse = &smithy.OperationError{ServiceID: "SESv2", OperationName: "SendEmail", Err: &smithy.GenericAPIError{Code: code, Message: text}}
			},
			Window: 5 * time.Minute,
		}
	})
}
