// Package smtpmail is the SMTP e-mail channel: it sends a composed review
// e-mail (shared/notify) over SMTP with go-mail, classifies the relay's
// replies (the one SMTP classifier), and settles a send whose answer was
// lost through the relay's message lookup, when the environment has one
// (SMTP_LOOKUP_URL, shared/evidence). Channel is its delivery.Channel.
package smtpmail

import (
	"context"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/notify"
)

// SendFunc sends one composed e-mail and returns its notification id:
// (*Sender).Send, or a wrapper that rebuilds the Sender when its secret
// rotates.
type SendFunc func(ctx context.Context, k delivery.Key, m *notify.Message) (string, error)

// Evidence answers "did the relay accept the message with this
// Message-ID?" (evidence.HTTP).
type Evidence interface {
	Delivered(ctx context.Context, messageID string) (bool, error)
}

// Channel is the SMTP e-mail channel, a delivery.Channel of composed
// messages.
type Channel struct {
	send     SendFunc
	evidence Evidence
}

// NewChannel returns the channel sending with send and settling uncertain
// sends with evidence. evidence nil: the relay has no lookup, and a send
// that may have happened is never retried blind but dead-lettered as
// DELIVERY_UNCONFIRMED for an operator.
func NewChannel(send SendFunc, evidence Evidence) *Channel {
	return &Channel{send: send, evidence: evidence}
}

// Send sends m to its recipient.
func (c *Channel) Send(ctx context.Context, m *notify.Message) (string, error) {
	return c.send(ctx, m.Key, m)
}

// Lookup asks the relay's evidence for m's deterministic Message-ID.
func (c *Channel) Lookup(ctx context.Context, m *notify.Message, _ int64) (string, bool, error) {
	if c.evidence == nil {
		return "", false, failure.Errorf(failure.DeliveryUnconfirmed,
			"a send of %s may have happened and no provider evidence is configured to check; confirm by hand, then replay", m.Token)
	}
	ok, err := c.evidence.Delivered(ctx, m.MessageID)
	return m.MessageID, ok, err
}

// Classify says a send may have happened when its answer was lost
// (delivery.ErrOutcomeUnknown).
func (c *Channel) Classify(err error) delivery.Verdict {
	return delivery.OutcomeVerdict(err)
}
