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

// Pass sends one week's digests, once per owner.
type Pass struct {
	Entries *Entries
	Fates   Fates
	Marks   *Marks
	// Channel is the e-mail channel (smtpmail.Channel, ses.Channel): it
	// sends a digest (composed with the zero delivery.Key), says whether a
	// failed send may have happened (Classify), and looks up a send left in
	// doubt (Lookup). A channel with no lookup leaves such a digest unsent.
	Channel delivery.Channel[*notify.Message]
	Owners  []Owner
	From    string
	Hash    Hasher             // keys an owner's address in its row; nil: SHA-256
	Policy  *recipients.Policy // an owner outside it is refused; nil: none
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
	fates := cached(p.Fates) // owners' paths overlap: a review is read once per pass
	var errs []error
	for _, o := range p.Owners {
		if p.Policy != nil {
			if r := p.Policy.Check(o.Address); r != nil {
				recipients.Report(ctx, p.Log, nil, "digest", "digest", []recipients.Refusal{*r})
				rep.Refused++
				continue
			}
		}
		if err := p.one(ctx, week, o, entries, fates, &rep); err != nil {
			rep.Failed++
			p.Log.WarnContext(ctx, "weekly digest not sent; the next run tries again", "week", rep.Week, "error_class", failure.Classify(err), "err", err)
			errs = append(errs, err)
		}
	}
	return rep, errors.Join(errs...)
}

// one sends owner's digest unless its row says it was sent, or may have
// been: send first, then mark.
func (p *Pass) one(ctx context.Context, week Week, o Owner, entries []Entry, fates *fateCache, rep *Report) error {
	d, err := Build(ctx, fates, o, week, entries)
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
		send, err := p.settle(ctx, id, held, msg, attempt, now, rep)
		if err != nil || !send {
			return err
		}
	}
	nid, err := p.Channel.Send(ctx, msg)
	switch {
	case err != nil && p.Channel.Classify(err).MaybeSent:
		rep.InDoubt++ // left sending: settled by the lookup, never resent on a guess
		return nil
	case err != nil:
		return errors.Join(err, p.Marks.Release(ctx, id, attempt))
	}
	rep.Sent++
	return p.Marks.MarkSent(ctx, id, attempt, nid, p.Now.Now())
}

// settle decides a row another attempt holds: sent stays sent; a send in
// doubt is marked sent when the channel's lookup finds it, sent again under
// attempt when the lookup finds none after Window, else left alone (a
// channel with no lookup answers DELIVERY_UNCONFIRMED: left alone too).
func (p *Pass) settle(ctx context.Context, id Identity, held *Mark, msg *notify.Message, attempt string, now time.Time, rep *Report) (send bool, err error) {
	if held == nil || held.Status == StatusSent {
		rep.AlreadySent++
		return false, nil
	}
	evidence, delivered, err := p.Channel.Lookup(ctx, msg, 0)
	switch {
	case failure.Classify(err) == failure.DeliveryUnconfirmed:
		rep.InDoubt++
		return false, nil
	case err != nil:
		return false, err
	case delivered:
		rep.AlreadySent++
		return false, p.Marks.MarkSent(ctx, id, held.Attempt, evidence, now)
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
