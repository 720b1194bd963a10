package delivery

import (
	"context"
	"errors"

	"github.com/criticizer/criticizer/shared/failure"
)

// Channel is one way of telling someone — an e-mail provider (shared/smtpmail,
// shared/ses), Swarm review comments and their task changes
// (shared/swarm/comments) — as the one delivery protocol drives it
// (outbox.Deliver): the protocol begins the outbox row, calls Send, and
// marks the row sent; a row an earlier attempt left in doubt is settled by
// Lookup before anything is sent again. A channel supplies these three and
// nothing else: it never sees a row, and the protocol never sees a
// channel's internals. M is what one delivery sends (a composed e-mail, a
// comment).
type Channel[M any] interface {
	// Send delivers m once and returns the provider's evidence of it (an id).
	Send(ctx context.Context, m M) (evidence string, err error)
	// Lookup answers whether an earlier send of m, which may have happened,
	// landed, with its evidence. after bounds the search: the row's
	// lookup_after (a comment id known before the send; 0 for none). A
	// channel with no way to look is an error (DELIVERY_UNCONFIRMED): a send
	// that may have happened is never repeated blind.
	Lookup(ctx context.Context, m M, after int64) (evidence string, found bool, err error)
	// Classify says what a failed Send means for its row.
	Classify(err error) Verdict
}

// Verdict is a failed send as its row records it.
type Verdict struct {
	// Class is the failure class the row is released with; a class that is
	// not retryable fails the row for good.
	Class failure.Class
	// MaybeSent: the send may have happened (the answer was lost), so the
	// row stays sending until a Lookup settles it.
	MaybeSent bool
}

// ErrOutcomeUnknown is in the chain of an e-mail provider's Send error when
// the request may have been accepted though no answer said so (SMTP: the
// connection failed after the whole message was sent, before the reply;
// SES: no reply, or a 5xx). The row is then "send may have happened" and
// is settled before any resend.
var ErrOutcomeUnknown = errors.New("delivery outcome unknown: the server may have accepted the message")

// OutcomeVerdict is an e-mail provider's failed Send as its row records it:
// its class, and maybe sent when ErrOutcomeUnknown is in its chain. The SMTP
// and SES channels classify with it.
func OutcomeVerdict(err error) Verdict {
	return Verdict{Class: failure.Classify(err), MaybeSent: errors.Is(err, ErrOutcomeUnknown)}
}
