// Package notifystage is the notify stage's stage.Processor: ReviewResult →
// one e-mail per recipient through the outbox, send first then mark, with a
// provider lookup before any resend of a send that may have happened.
package notifystage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/digest"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/ledger"
	"github.com/criticizer/criticizer/shared/notify"
	"github.com/criticizer/criticizer/shared/obs"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/recipients"
	"github.com/criticizer/criticizer/shared/rerun"
	"github.com/criticizer/criticizer/shared/swarm"
)

// Sender delivers one composed e-mail and returns the provider's id for it.
type Sender interface {
	Send(ctx context.Context, k delivery.Key, m *notify.Message) (string, error)
}

// Evidence answers "did the provider accept the message with this
// Message-ID?" — the lookup that settles a send that may have happened
// (shared/evidence).
type Evidence interface {
	Delivered(ctx context.Context, messageID string) (bool, error)
}

// Rows is the part of the outbox the notify stage uses.
type Rows interface {
	Begin(ctx context.Context, k delivery.Key, jobID string, now time.Time) (*outbox.Send, error)
	MarkSent(ctx context.Context, k delivery.Key, notificationID string, now time.Time) error
	Release(ctx context.Context, k delivery.Key, sendToken string, class failure.Class, msg string, permanent bool, now time.Time) error
	Reset(ctx context.Context, k delivery.Key, sendToken string, now time.Time) error
}

// Notify is the notify stage.
type Notify struct {
	Outbox    Rows
	Artifacts *artifacts.Store // the redacted bucket
	Sender    Sender
	// Evidence of accepted messages, to settle uncertain sends; nil when the
	// provider has none, in which case an uncertain send is never retried
	// blindly but dead-lettered as DELIVERY_UNCONFIRMED for an operator.
	Evidence Evidence
	From     string
	HTML     bool
	// Secret is the delivery key the e-mail's token is keyed by (the outbox
	// keys its rows by the same key); nil only in tests without one.
	Secret *delivery.Secret
	// JobPage mints the job page link the e-mail carries (jobpage.Links);
	// nil when the environment has no job page.
	JobPage JobPageLinks
	// SwarmLinks links a Swarm review in the e-mail of a job that came
	// from one (SWARM_URL/reviews/{id}); zero for none.
	SwarmLinks swarm.Settings
	Log        *slog.Logger
	// Swarm reports the outcome to a Helix Swarm test run once every
	// recipient is e-mailed (swarm.Reporter); nil for none.
	Swarm SwarmPasser
	// Gate is SWARM_GATE_SEVERITY (GateFromEnv): findings at or above it
	// fail the Swarm run; "" never does.
	Gate string
	// EmailParticipants (SWARM_EMAIL_PARTICIPANTS) e-mails a Swarm review's
	// participants its findings beside the comments; false (the default)
	// leaves them to Swarm's own notification of the comments, so nobody
	// hears of a finding twice.
	EmailParticipants bool
	// Window is how long after a send started the provider may still
	// complete it (SEND_COMPLETION_WINDOW_SECONDS): a send that may have
	// happened is resent only after it, and only if the provider evidence still
	// has no record. Zero means the sender's outcome is final when its call
	// returns (tests with a synchronous fake).
	Window time.Duration
	// Now is the time source (the system clock when nil).
	Now job.Clock
	// Recipients is the recipient policy, checked again before every send
	// (the policy may have tightened since fetch, a replayed job may carry
	// an old list); nil checks nothing (tests only: the function always sets
	// it). Metrics counts its refusals.
	Recipients *recipients.Policy
	Metrics    *obs.Metrics
	// Comments posts the findings on the job's Swarm review, after the
	// e-mails (NOTIFY_CHANNELS has swarm-comments); nil: e-mail only.
	Comments *SwarmComments
	// Ledger has the previous version's entry, for a rerun's grouping new /
	// still open / resolved (e-mail and Swarm summary); Jobs reads that
	// version's job for its findings' titles. nil Ledger: every version is
	// shown as a first one.
	Ledger ledger.Entries
	Jobs   job.Getter
	// Outcomes records the fate of each finding posted on a Swarm review
	// (outcomes.go); nil: not recorded.
	Outcomes *Outcomes
	// Digest records each job's entry for the weekly digest
	// (shared/digest); nil: the digest is off.
	Digest DigestEntries
}

// DigestEntries keeps the weekly digest's entries (digest.Entries).
type DigestEntries interface {
	Record(ctx context.Context, week digest.Week, e digest.Entry) error
}

// JobPageLinks mints a job's page URL.
type JobPageLinks interface {
	URL(ctx context.Context, jobID string) (string, error)
}

// SwarmPasser reports a finished review to its Swarm test run.
type SwarmPasser interface {
	Pass(ctx context.Context, j *job.Job, o swarm.Outcome) error
}

// reviewURL is the Swarm review's page, when the job came from one.
func (n *Notify) reviewURL(j *job.Job) string {
	if j.Swarm == nil {
		return ""
	}
	return n.SwarmLinks.ReviewURL(j.Swarm.Review)
}

// Process sends the review to every recipient that has not been notified.
func (n *Notify) Process(ctx context.Context, j *job.Job) (job.Result, error) {
	if j.Artifacts.Result == "" || j.Artifacts.Redacted == "" {
		return job.Result{}, failure.Errorf(failure.InternalBug, "job reached notify without review artifacts")
	}
	var review domain.ReviewResult
	if err := n.Artifacts.GetJSON(ctx, j.Artifacts.Result, &review); err != nil {
		return job.Result{}, err
	}
	var cs domain.Changeset
	if err := n.Artifacts.GetJSON(ctx, j.Artifacts.Redacted, &cs); err != nil {
		return job.Result{}, err
	}
	if n.Outcomes != nil && j.Swarm != nil && j.Swarm.Review > 0 {
		var err error
		if review, err = n.withholdDismissed(ctx, review, &cs); err != nil {
			return job.Result{}, err
		}
	}
	// The findings by fingerprint, and one comparison with the previous
	// version, for every channel and recipient.
	current := rerun.Distinct(review.Findings, &cs)
	groups, err := n.compare(ctx, j, review, current, &cs)
	if err != nil {
		return job.Result{}, err
	}
	pageURL := ""
	if n.JobPage != nil {
		// Unreadable key: retried like any dependency, so the e-mail never
		// goes out without the link the environment promises.
		var err error
		if pageURL, err = n.JobPage.URL(ctx, j.ID); err != nil {
			return job.Result{}, fmt.Errorf("job page link: %w", err)
		}
	}
	rcpts := n.emailRecipients(j)
	var refused []recipients.Refusal
	if n.Recipients != nil {
		// An address outside the policy is never e-mailed, whatever the job says.
		rcpts, refused = n.Recipients.Split(rcpts)
		recipients.Report(ctx, n.Log, n.Metrics, string(domain.StageNotify), j.Source, refused)
		if len(rcpts) == 0 && len(refused) > 0 {
			return job.Result{}, failure.Errorf(failure.PolicyRejected, "no recipient allowed by the recipient policy: %s", recipients.Describe(refused))
		}
	}
	var permanent []error
	sent := 0
	for _, rcpt := range rcpts {
		k := delivery.Key{Changelist: j.Changelist, Recipient: rcpt, ReviewVersion: j.ReviewVersion}
		msg, err := notify.Compose(k, notify.Content{Author: cs.User, Description: cs.Description, JobID: j.ID, Review: review, From: n.From, HTML: n.HTML, Secret: n.Secret, Changeset: &cs, ReviewURL: n.reviewURL(j), JobPageURL: pageURL, Rerun: groups, Current: current})
		if err != nil {
			return job.Result{}, failure.Wrap(failure.InternalBug, err)
		}
		did, err := n.deliver(ctx, j.ID, k, msg)
		switch {
		case err == nil:
			if did {
				sent++
			}
		case recipientLevel(failure.Classify(err)):
			// This recipient cannot be e-mailed; the others still get theirs.
			permanent = append(permanent, fmt.Errorf("%s: %w", rcpt, err))
		default:
			return job.Result{}, err
		}
	}
	commented := ""
	if n.Comments != nil && j.Swarm != nil && j.Swarm.Review > 0 {
		// After the e-mails: a Swarm failure retries the stage, whose outbox
		// skips the recipients already e-mailed.
		out, err := n.postComments(ctx, j, review, current, &cs, pageURL, groups)
		if err != nil {
			return job.Result{}, err
		}
		if n.Outcomes != nil {
			if err := n.recordOutcomes(ctx, j, review, out.findings, groups); err != nil {
				return job.Result{}, err
			}
		}
		commented = "; " + out.detail()
	}
	if n.Outcomes != nil && commented == "" && len(rcpts) > 0 {
		if err := n.recordEmailOnly(ctx, j, review, current); err != nil {
			return job.Result{}, err
		}
	}
	if err := n.recordDigest(ctx, j, review, current, &cs); err != nil {
		return job.Result{}, err
	}
	if len(permanent) > 0 {
		return job.Result{}, errors.Join(permanent...)
	}
	if n.Swarm != nil && j.Swarm != nil {
		// After the e-mails, never before: a failing callback retries this
		// stage, whose outbox skips the recipients already e-mailed.
		where := "e-mailed to the author"
		if commented != "" {
			where = "posted on the review"
		}
		if err := n.Swarm.Pass(ctx, j, outcome(j.FindingCount, review.Findings, domain.ReadReviewMeta(review.Meta).Gates, n.Gate, where)); err != nil {
			if failure.Classify(err).Retryable() {
				return job.Result{}, err
			}
			// Swarm refused it for good (the run was deleted, …): the review
			// was delivered, which is what the job is for.
			n.Log.WarnContext(ctx, "swarm pass callback refused; not retried", "err", err, "error_class", failure.Classify(err))
		}
	}
	detail := fmt.Sprintf("%d of %d recipients e-mailed now, the rest earlier", sent, len(rcpts))
	if len(j.Recipients) > 0 && len(rcpts) == 0 && len(refused) == 0 {
		detail = "not e-mailed: the review's participants hear of the comments from Swarm"
	}
	if len(refused) > 0 {
		detail += "; not e-mailed, outside the recipient policy: " + recipients.Describe(refused)
	}
	detail += commented
	return job.Result{Detail: detail}, nil
}

// recipientLevel reports whether a failure concerns one recipient only (the
// mailbox does not exist, policy refuses it) rather than the whole send
// (credentials, connectivity, a bug), which stops the stage at once.
func recipientLevel(c failure.Class) bool {
	return c == failure.NotFound || c == failure.PolicyRejected
}

// deliver runs the outbox protocol (run) for one recipient: the e-mail
// channel sends through the Sender and looks up the provider's evidence by
// the message's deterministic Message-ID. It reports whether it sent now.
func (n *Notify) deliver(ctx context.Context, jobID string, k delivery.Key, msg *notify.Message) (bool, error) {
	d := channelDelivery{name: msg.Token, log: n.Log.With("key", msg.Token), window: n.Window, words: emailWords,
		begin: func(ctx context.Context, now time.Time) (*outbox.Send, error) {
			return n.Outbox.Begin(ctx, k, jobID, now)
		},
		markSent: func(ctx context.Context, id string, now time.Time) error { return n.Outbox.MarkSent(ctx, k, id, now) },
		release: func(ctx context.Context, tok string, c failure.Class, m string, permanent bool, now time.Time) error {
			return n.Outbox.Release(ctx, k, tok, c, m, permanent, now)
		},
		reset:     func(ctx context.Context, tok string, now time.Time) error { return n.Outbox.Reset(ctx, k, tok, now) },
		send:      func(ctx context.Context) (string, error) { return n.Sender.Send(ctx, k, msg) },
		maybeSent: func(err error) bool { return errors.Is(err, notify.ErrOutcomeUnknown) },
	}
	if n.Evidence != nil {
		d.lookup = func(ctx context.Context, _ *outbox.Row) (string, bool, error) {
			ok, err := n.Evidence.Delivered(ctx, msg.MessageID)
			return msg.MessageID, ok, err
		}
	}
	return n.run(ctx, d)
}

// emailWords are the e-mail channel's log lines.
var emailWords = protocolWords{
	releaseLeaseFailed: "releasing an unsent row failed; the next attempt settles it",
	maybeSent:          "send outcome unknown; the row stays sending until settled",
	releaseFailed:      "releasing a refused send failed; the next attempt settles it",
	markFailed:         "marking a sent row failed; the retry settles and backfills it",
	done:               "review e-mailed", doneKey: "notification_id",
	found:       "settled: the provider had accepted the earlier send",
	mayComplete: "send may still complete at the provider; retrying after its completion window, not resending",
	notFound:    "settled: the earlier send never reached the provider; resending",
	unconfirmed: "a send of %s may have happened and no provider evidence is configured to check; confirm by hand, then replay",
}

// rowError is what a row keeps of a refused send: the class and the
// provider's reply codes ("reply 550 5.7.1"). The reply text is untrusted (a
// relay may quote the message, an address or a credential back), so it is
// never stored.
func rowError(err error) string {
	if code := failure.UpstreamCode(err); code != 0 {
		if st := failure.UpstreamStatus(err); st != "" {
			return fmt.Sprintf("%s (reply %d %s)", failure.Classify(err), code, st)
		}
		return fmt.Sprintf("%s (reply %d)", failure.Classify(err), code)
	}
	return string(failure.Classify(err))
}

// SenderFunc adapts a function to Sender.
type SenderFunc func(ctx context.Context, k delivery.Key, m *notify.Message) (string, error)

// Send calls f.
func (f SenderFunc) Send(ctx context.Context, k delivery.Key, m *notify.Message) (string, error) {
	return f(ctx, k, m)
}

// emailRecipients is who gets the e-mail: the job's recipients, sorted;
// none for a Swarm review whose findings go to the review as comments
// (Swarm notifies its participants, who are all a Swarm job's recipients:
// the fetch stage reads them from the review), unless EmailParticipants.
// A changelist from a trigger or the API keeps its e-mail.
func (n *Notify) emailRecipients(j *job.Job) []string {
	if j.Swarm != nil && j.Swarm.Review > 0 && n.Comments != nil && !n.EmailParticipants {
		return nil
	}
	rcpts := slices.Clone(j.Recipients)
	slices.Sort(rcpts)
	return rcpts
}
