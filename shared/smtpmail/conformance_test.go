package smtpmail

import (
	"context"
	"testing"
	"time"

	"github.com/criticizer/criticizer/internal/standin/smtp"
	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/notify"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/outbox/outboxtest"
)

// relayEvidence is the relay's message lookup (SMTP_LOOKUP_URL) read from
// the stand-in's mailbox.
type relayEvidence struct{ srv *smtp.Server }

func (e relayEvidence) Delivered(_ context.Context, id string) (bool, error) {
	for _, m := range e.srv.Messages() {
		if m.MessageID == id {
			return true, nil
		}
	}
	return false, nil
}

// The SMTP channel passes the one conformance suite against the SMTP
// stand-in, as the notify stage runs it.
func TestSMTPChannelConformance(t *testing.T) {
	outboxtest.RunChannelSuite(t, func(t *testing.T) outboxtest.Harness[*notify.Message] {
		h := newHarness(t, "criticizer", randomSecret(t))
		msgs := map[int]*notify.Message{}
		message := func(i int) *notify.Message {
			if msgs[i] == nil {
				k := delivery.Key{Changelist: int64(100 + i), Recipient: "alice@example.com", ReviewVersion: 1}
				c, env := testContent()
				m, err := notify.Compose(k, c, env)
				if err != nil {
					t.Fatal(err)
				}
				msgs[i] = m
			}
			return msgs[i]
		}
		return outboxtest.Harness[*notify.Message]{
			Channel:  NewChannel(h.sender(t).Send, relayEvidence{h.srv}),
			Delivery: func(i int) (outbox.Ref, *notify.Message) { m := message(i); return outbox.Email(m.Key), m },
			Delivered: func(t *testing.T, i int) int {
				n := 0
				for _, m := range h.srv.Messages() {
					if m.MessageID == message(i).MessageID {
						n++
					}
				}
				return n
			},
			Refuse: func(t *testing.T, permanent bool, text string) {
				f := smtp.Fault{Stage: smtp.StageMail, Code: 451, Enhanced: "4.3.0", Message: text}
				if permanent {
					f = smtp.Fault{Stage: smtp.StageRcpt, Code: 550, Enhanced: "5.1.1", Message: text}
				}
				if err := h.srv.QueueFault(f); err != nil {
					t.Fatal(err)
				}
			},
			Window: 5 * time.Minute,
		}
	})
}
