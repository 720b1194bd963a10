package digest

import (
	"context"
	"errors"
	"fmt"
	"github.com/criticizer/criticizer/shared/weekly"
	"log/slog"
	"time"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/notify"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/recipients"
)

// Pass sends one week's digests, once per owner.
type Pass struct {
	Entries *weekly.Entries
	Fates   Fates
	// Rows are the digests' outbox rows (*outbox.Outbox), one per owner
	// and week (outbox.DigestItem).
	Rows outbox.Rows
	// Channel is the e-mail channel (smtpmail.Channel, ses.Channel): it
	// sends a digest (composed with the zero delivery.Key), says whether a
	// failed send may have happened (Classify), and looks up a send left in
	// doubt (Lookup). A channel with no lookup leaves such a digest unsent.
	Channel delivery.Channel[*notify.Message]
	Owners  []Owner
	From    string
	Hash    Hasher             // keys an owner's address in its row
	Policy  *recipients.Policy // an owner outside it is refused; nil: none
	// Dismissals is the noise filter (outcome.PolicyFromEnv), the one the
	// notify stage withholds by: the suppressions listed are its.
	Dismissals outcome.Policy
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
func (p *Pass) Run(ctx context.Context, week weekly.Week) (Report, error) {
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
	if rep.InDoubt > 0 {
		// Nothing else settles a digest in doubt (the reconciler leaves
		// digest rows alone and the schedule's next run is next week's):
		// the run fails, so Lambda's retries of the scheduled event look it
		// up again and DigestErrorsAlarm pages if it stays in doubt.
		errs = append(errs, fmt.Errorf("%w: %d digest(s) of %s; run the week again to settle by lookup", ErrInDoubt, rep.InDoubt, rep.Week))
	}
	return rep, errors.Join(errs...)
}

// ErrInDoubt is a run that left a digest whose send may have happened: it
// was not sent again, and the week's next run settles it by lookup.
var ErrInDoubt = failure.Errorf(failure.DeliveryUnconfirmed, "weekly digest send in doubt")

// one sends owner's digest through the one delivery protocol
// (outbox.Deliver) over its outbox row, one per owner and week: a row sent
// is never sent again, one whose send may have happened is settled by the
// channel's lookup before any resend (rule DG-1).
func (p *Pass) one(ctx context.Context, week weekly.Week, o Owner, entries []weekly.Entry, fates *fateCache, rep *Report) error {
	d, err := Build(ctx, fates, p.Dismissals, o, week, entries)
	if err != nil {
		return err
	}
	if d.Empty() {
		rep.Empty++
		return nil
	}
	id := IdentityOf(o.Address, week, p.Hash)
	msg, err := Compose(d, id, p.From, p.Now.Now())
	if err != nil {
		return failure.Wrap(failure.InternalBug, err)
	}
	// KeepPending: a digest has no job whose operator would requeue its row, so
	// a refusal that is the service's own is fixed and the week run again.
	proto := outbox.Protocol{Ref: id.Item(), KeepPending: true, Name: id.Item().String(), Window: p.Window, Words: digestWords, Now: p.Now.Now,
		Log: p.Log.With("week", id.Week.String(), "owner", id.Owner[:16])}
	sent, err := outbox.Deliver(ctx, proto, p.Rows, p.Channel, msg)
	switch {
	case sent:
		rep.Sent++
		return err // a mark that failed: the next run settles the row by lookup
	case err == nil:
		rep.AlreadySent++
	case inDoubt(p.Channel, err):
		rep.InDoubt++ // left sending: settled by the lookup, never resent on a guess
		return nil
	}
	return err
}

// inDoubt says err leaves a send that may have happened: the answer was
// lost, the channel has no lookup, or the provider may still complete it.
func inDoubt(ch delivery.Channel[*notify.Message], err error) bool {
	return ch.Classify(err).MaybeSent || errors.Is(err, outbox.ErrInFlight) || failure.Classify(err) == failure.DeliveryUnconfirmed
}

// digestWords are the protocol's log lines for a digest.
var digestWords = outbox.Words{
	ReleaseLeaseFailed: "releasing an unsent digest row failed; the next run settles it",
	MaybeSent:          "digest send outcome unknown; the row stays sending until settled",
	ReleaseFailed:      "releasing a refused digest send failed; the next run settles it",
	MarkFailed:         "marking a sent digest failed; the next run settles and backfills it",
	Done:               "weekly digest e-mailed", DoneKey: "notification_id",
	Found:       "settled: the provider had accepted the earlier digest",
	MayComplete: "digest send may still complete at the provider; not resending",
	NotFound:    "settled: the earlier digest never reached the provider; resending",
}
