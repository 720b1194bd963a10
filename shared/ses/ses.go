// Package ses is the SES e-mail channel: it sends through SES v2 with IAM
// credentials, classifies SES's errors and settles a send whose answer was lost
// by SES's published events (shared/evidence), found by the outbox tag every
// message carries; the composed Message-ID is kept.
package ses

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/sesv2/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/evidence"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/notify"
)

// API is the part of the SES v2 client the sender uses.
type API interface {
	SendEmail(ctx context.Context, in *sesv2.SendEmailInput, opts ...func(*sesv2.Options)) (*sesv2.SendEmailOutput, error)
}

// NewClient returns an SES v2 client that never retries: SendEmail is not
// idempotent. The stage retries after looking the message up.
func NewClient(cfg aws.Config) *sesv2.Client {
	return sesv2.NewFromConfig(cfg, func(o *sesv2.Options) { o.Retryer = aws.NopRetryer{} })
}

// Sender sends composed messages through SES.
type Sender struct {
	api       API
	configSet string
	log       *slog.Logger
}

// New returns a Sender over configurationSet, required: its event destination
// publishes the evidence.
func New(api API, configurationSet string, log *slog.Logger) (*Sender, error) {
	if configurationSet == "" {
		return nil, failure.Errorf(failure.InternalBug, "ses: SES_CONFIGURATION_SET is required (its events are the delivery evidence)")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Sender{api: api, configSet: configurationSet, log: log}, nil
}

// Send delivers m, composed for k, as a raw message and returns SES's
// message id.
func (s *Sender) Send(ctx context.Context, k delivery.Key, m *notify.Message) (string, error) {
	if m.Key != k {
		return "", failure.Errorf(failure.InternalBug, "ses: message composed for another key")
	}
	raw, err := m.Bytes()
	if err != nil {
		return "", failure.Wrap(failure.InternalBug, err)
	}
	start := time.Now()
	out, err := s.api.SendEmail(ctx, &sesv2.SendEmailInput{
		// Explicit, though the raw message has it: SES checks this identity
		// before accepting.
		FromEmailAddress:     aws.String(m.From),
		Destination:          &types.Destination{ToAddresses: []string{m.To}},
		Content:              &types.EmailContent{Raw: &types.RawMessage{Data: raw}},
		ConfigurationSetName: aws.String(s.configSet),
		EmailTags:            []types.MessageTag{{Name: aws.String(evidence.TagName), Value: aws.String(evidence.Tag(m.MessageID))}},
	})
	if err != nil {
		ferr := Classify(err)
		s.log.WarnContext(ctx, "ses: send failed", "class", failure.Classify(ferr), "outcome_unknown", errors.Is(ferr, delivery.ErrOutcomeUnknown),
			"err", err, "duration", time.Since(start))
		return "", ferr
	}
	s.log.InfoContext(ctx, "ses: sent", "provider_message_id", aws.ToString(out.MessageId), "duration", time.Since(start))
	return aws.ToString(out.MessageId), nil
}

// Classify maps an SES v2 error to the taxonomy; no reply or a server error may
// have been accepted: delivery.ErrOutcomeUnknown, so the row is settled, not
// resent.
func Classify(err error) error {
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "MessageRejected":
			// This message or recipient is refused (sandbox, suppression).
			return failure.Wrap(failure.PolicyRejected, err)
		case "TooManyRequestsException", "LimitExceededException", "ThrottlingException":
			return failure.Wrap(failure.RateLimited, err)
		case "AccessDeniedException", "UnrecognizedClientException", "InvalidClientTokenId", "ExpiredTokenException":
			return failure.Wrap(failure.AuthDenied, err)
		case "NotFoundException", "MailFromDomainNotVerifiedException", "BadRequestException":
			return failure.Wrap(failure.InternalBug, err) // configuration: set, identity or request
		case "AccountSuspendedException", "SendingPausedException":
			// Every send fails until an operator acts; not the recipient's fault.
			return failure.Wrap(failure.Upstream5xx, err)
		}
		var resp *smithyhttp.ResponseError
		if errors.As(err, &resp) && resp.HTTPStatusCode() >= 500 {
			return failure.Wrap(failure.Upstream5xx, fmt.Errorf("%w: %w", delivery.ErrOutcomeUnknown, err))
		}
		return failure.Wrap(failure.Upstream5xx, err)
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return failure.Wrap(failure.NetworkTimeout, err) // never connected: nothing was sent
	}
	// No reply: the request may have reached SES.
	return failure.Wrap(failure.NetworkTimeout, fmt.Errorf("%w: %w", delivery.ErrOutcomeUnknown, err))
}

// Evidence answers "did SES accept the message with this Message-ID?"
// from the delivery events it published (evidence.Table).
type Evidence interface {
	Delivered(ctx context.Context, messageID string) (bool, error)
}

// Channel is the SES e-mail channel, a delivery.Channel of composed
// messages: sent by a Sender, settled by SES's published events.
type Channel struct {
	sender   *Sender
	evidence Evidence
}

// NewChannel returns the channel sending with s and settling uncertain
// sends with the events in evidence.
func NewChannel(s *Sender, evidence Evidence) *Channel {
	return &Channel{sender: s, evidence: evidence}
}

// Send sends m to its recipient.
func (c *Channel) Send(ctx context.Context, m *notify.Message) (string, error) {
	return c.sender.Send(ctx, m.Key, m)
}

// Lookup looks for SES's events of m's Message-ID.
func (c *Channel) Lookup(ctx context.Context, m *notify.Message, _ int64) (string, bool, error) {
	ok, err := c.evidence.Delivered(ctx, m.MessageID)
	return m.MessageID, ok, err
}

// Classify says a send may have happened when SES did not answer or failed
// inside (delivery.ErrOutcomeUnknown, see Classify).
func (c *Channel) Classify(err error) delivery.Verdict {
	return delivery.OutcomeVerdict(err)
}
