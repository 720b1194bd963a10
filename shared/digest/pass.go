package digest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"time"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/notify"
	"github.com/criticizer/criticizer/shared/recipients"
)

// Sender sends a composed e-mail and returns its notification id: the SMTP
// or SES sender. A digest is sent with the zero delivery.Key (Compose).
type Sender interface {
	Send(ctx context.Context, m *notify.Message) (string, error)
}

// Evidence says whether the provider accepted a message (evidence.HTTP,
// the relay's lookup; evidence.Table, SES events): how a digest left
// "sending" is settled. nil: such a digest is never sent again.
type Evidence interface {
	Delivered(ctx context.Context, messageID string) (bool, error)
}

// Pass sends one week's digests, once per owner.
type Pass struct {
	Entries  *Entries
	Fates    Fates
	Marks    *Marks
	Sender   Sender
	Evidence Evidence
	Owners   []Owner
	From     string
	Hash     Hasher             // keys an owner's address in its row; nil: SHA-256
	Policy   *recipients.Policy // an owner outside it is refused; nil: none
	// Window is how long a send may take to show in the evidence: a row
	// left sending longer, with no evidence of it, is sent again.
	Window time.Duration
	Now    job.Clock
	Log    *slog.Logger
}

// Report is what a pass did, per owner opted in.
type Report struct {
	Week        string `json:"week"`
	Owners      int    `json:"owners"`
	Sent        int    `json:"sent"`
	AlreadySent int    `json:"already_sent"`
	Empty       int    `json:"empty,omitempty"`    // nothing on their paths: not e-mailed
	InDoubt     int    `json:"in_doubt,omitempty"` // a send that may have happened: not sent again
	Refused     int    `json:"refused,omitempty"`  // outside the recipient policy
	Failed      int    `json:"failed,omitempty"`   // the next run tries again
}

// Run sends week's digests. The week's entries are read once (one
// partition); an owner whose digest fails does not stop the others.
func (p *Pass) Run(ctx context.Context, week Week) (Report, error) {
	rep := Report{Week: week.String(), Owners: len(p.Owners)}
	entries, err := p.Entries.Week(ctx, week)
	if err != nil {
		return rep, err
	}
	var errs []error
	for _, o := range p.Owners {
		if p.Policy != nil {
			if r := p.Policy.Check(o.Address); r != nil {
				recipients.Report(ctx, p.Log, nil, "digest", "digest", []recipients.Refusal{*r})
				rep.Refused++
				continue
			}
		}
		if err := p.one(ctx, week, o, entries, &rep); err != nil {
			rep.Failed++
			p.Log.WarnContext(ctx, "weekly digest not sent; the next run tries again", "week", rep.Week, "error_class", failure.Classify(err), "err", err)
			errs = append(errs, err)
		}
	}
	return rep, errors.Join(errs...)
}

// one sends owner's digest unless its row says it was sent, or may have
// been: send first, then mark.
func (p *Pass) one(ctx context.Context, week Week, o Owner, entries []Entry, rep *Report) error {
	d, err := Build(ctx, p.Fates, o, week, entries)
	if err != nil {
		return err
	}
	if d.Empty() {
		rep.Empty++
		return nil
	}
	now := p.Now.Now()
	id := IdentityOf(o.Address, week, p.Hash)
	msg, err := Compose(d, id, p.From, now)
	if err != nil {
		return failure.Wrap(failure.InternalBug, err)
	}
	attempt := newAttempt()
	begun, held, err := p.Marks.Begin(ctx, id, attempt, now)
	if err != nil {
		return err
	}
	if !begun {
		send, err := p.settle(ctx, id, held, msg.MessageID, attempt, now, rep)
		if err != nil || !send {
			return err
		}
	}
	nid, err := p.Sender.Send(ctx, msg)
	switch {
	case errors.Is(err, delivery.ErrOutcomeUnknown):
		rep.InDoubt++ // left sending: settled by the evidence, never resent on a guess
		return nil
	case err != nil:
		return errors.Join(err, p.Marks.Release(ctx, id, attempt))
	}
	rep.Sent++
	return p.Marks.MarkSent(ctx, id, attempt, nid, p.Now.Now())
}

// settle decides a row another attempt holds: sent stays sent; a send in
// doubt is marked sent on the provider's evidence, sent again under
// attempt when the evidence shows none after Window, else left alone.
func (p *Pass) settle(ctx context.Context, id Identity, held *Mark, messageID, attempt string, now time.Time, rep *Report) (send bool, err error) {
	if held == nil || held.Status == StatusSent {
		rep.AlreadySent++
		return false, nil
	}
	if p.Evidence == nil {
		rep.InDoubt++
		return false, nil
	}
	delivered, err := p.Evidence.Delivered(ctx, messageID)
	switch {
	case err != nil:
		return false, err
	case delivered:
		rep.AlreadySent++
		return false, p.Marks.MarkSent(ctx, id, held.Attempt, messageID, now)
	case now.Sub(held.StartedAt) < p.Window:
		rep.InDoubt++ // too early to tell
		return false, nil
	}
	if err := p.Marks.TakeOver(ctx, id, held.Attempt, attempt, now); err != nil {
		return false, err
	}
	return true, nil
}

func newAttempt() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
