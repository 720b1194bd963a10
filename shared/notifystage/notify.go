// Package notifystage is the notify stage's stage.Processor: it delivers
// the review the llm stage decided (package decide) and plans what to
// tell whom about it — one e-mail per recipient, the
// findings as comments on the job's Swarm review with their task changes,
// the Swarm test run's outcome — and runs each delivery through the one
// outbox protocol (outbox.Deliver) and its channel (shared/smtpmail,
// shared/ses, shared/swarm/comments; the test run is swarm.RunReport,
// whose record is the job).
package notifystage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/criticizer/criticizer/shared/decide"
	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/notify"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/swarm"
)

// Notify is the notify stage.
type Notify struct {
	Outbox    outbox.Rows
	Artifacts Artifacts // the redacted bucket (*artifacts.Store)
	// Email is the e-mail channel (smtpmail.Channel, ses.Channel): it settles
	// an uncertain send by the provider's evidence, or refuses to guess
	// (DELIVERY_UNCONFIRMED for an operator).
	Email delivery.Channel[*notify.Message]
	From  string
	HTML  bool
	// Secret keys the e-mail's token, as the outbox keys its rows; nil in tests only.
	Secret *delivery.Secret
	Log    *slog.Logger
	// Swarm is the test-run channel (swarm.RunReport): the outcome, once
	// every recipient is e-mailed, kept once by the job record; nil: none.
	Swarm delivery.Channel[swarm.Finished]
	// EmailParticipants (SWARM_EMAIL_PARTICIPANTS) e-mails a Swarm review's
	// participants beside the comments; false leaves them to Swarm's own
	// notification, so nobody hears of a finding twice.
	EmailParticipants bool
	// Window is how long the provider may still complete a started send
	// (SEND_COMPLETION_WINDOW_SECONDS): a send that may have happened is
	// resent only after it, and only if the evidence has no record. Zero:
	// final when the call returns (synchronous test fakes).
	Window time.Duration
	Now    job.Clock // the system clock when nil
	// Recipients is the recipient policy (recipients.Gate), checked again
	// before every send (it may have tightened since fetch, a replayed job
	// may carry an old list); nil checks nothing (tests only).
	Recipients RecipientPolicy
	// Comments posts the findings on the job's Swarm review, after the
	// e-mails (NOTIFY_CHANNELS has swarm-comments); nil: e-mail only.
	Comments *SwarmComments
	// Outcomes records what was told of each finding (decide.Outcomes):
	// commented on a Swarm review, or e-mailed only; nil: not recorded.
	Outcomes Outcomes
}

// Artifacts reads the decided review and the redacted changeset.
type Artifacts interface {
	GetJSON(ctx context.Context, key string, v any) error
}

// Outcomes records the findings posted on a Swarm review or e-mailed only.
type Outcomes interface {
	Posted(ctx context.Context, j *job.Job, d *decide.Decided, fingerprints []string) error
	EmailOnly(ctx context.Context, j *job.Job, d *decide.Decided) error
}

// RecipientPolicy splits addresses into those allowed and a description of
// those refused ("" for none), reporting each refusal.
type RecipientPolicy interface {
	Allow(ctx context.Context, source string, addrs []string) (allowed []string, refused string)
}

// Process tells every recipient and channel of j what it has not been told yet.
func (n *Notify) Process(ctx context.Context, j *job.Job) (job.Result, error) {
	in, err := n.read(ctx, j)
	if err != nil {
		return job.Result{}, err
	}
	rcpts, refused, err := n.recipients(ctx, j)
	if err != nil {
		return job.Result{}, err
	}
	sent, permanent, err := n.emailAll(ctx, j, in, rcpts)
	if err != nil {
		return job.Result{}, err
	}
	commented, err := n.commentAll(ctx, j, in, len(rcpts) > 0)
	if err != nil {
		return job.Result{}, err
	}
	if len(permanent) > 0 {
		return job.Result{}, errors.Join(permanent...)
	}
	if err := n.reportRun(ctx, j, in.Gate, commented != ""); err != nil {
		return job.Result{}, err
	}
	return job.Result{Detail: detail(j, sent, len(rcpts), refused, commented)}, nil
}

// read loads j's decided review — its letter, comments and links: decided
// once, by the llm stage, so every attempt of this stage delivers the same
// review, and reads no code.
func (n *Notify) read(ctx context.Context, j *job.Job) (*decide.Decided, error) {
	if j.Artifacts.Result == "" || j.Artifacts.Redacted == "" {
		return nil, failure.Errorf(failure.InternalBug, "job reached notify without review artifacts")
	}
	in := &decide.Decided{}
	if err := n.Artifacts.GetJSON(ctx, decide.Key(j.ID), in); err != nil {
		return nil, err
	}
	if in.Email.Text == "" {
		return nil, failure.Errorf(failure.InternalBug, "the decided review has no e-mail: restart the job from fetch")
	}
	return in, nil
}

// recipients is who is e-mailed (emailRecipients) within the recipient
// policy, and whom the policy refused; none allowed of some is an error.
func (n *Notify) recipients(ctx context.Context, j *job.Job) ([]string, string, error) {
	rcpts := n.emailRecipients(j)
	if n.Recipients == nil {
		return rcpts, "", nil
	}
	// An address outside the policy is never e-mailed, whatever the job says.
	rcpts, refused := n.Recipients.Allow(ctx, j.Source, rcpts)
	if len(rcpts) == 0 && refused != "" {
		return nil, "", failure.Errorf(failure.PolicyRejected, "no recipient allowed by the recipient policy: %s", refused)
	}
	return rcpts, refused, nil
}

// emailAll e-mails each recipient once and counts the e-mails sent now. A
// failure of one recipient only is collected in permanent (the others still
// get theirs); any other failure stops the stage at once.
func (n *Notify) emailAll(ctx context.Context, j *job.Job, in *decide.Decided, rcpts []string) (sent int, permanent []error, err error) {
	for _, rcpt := range rcpts {
		k := delivery.Key{Changelist: j.Changelist, Recipient: rcpt, ReviewVersion: j.ReviewVersion}
		msg, err := notify.New(in.Email, k, notify.Envelope{From: n.From, HTML: n.HTML, Secret: n.Secret})
		if err != nil {
			return 0, nil, failure.Wrap(failure.InternalBug, err)
		}
		did, err := n.deliver(ctx, j.ID, k, msg)
		switch {
		case err == nil:
			if did {
				sent++
			}
		case slices.Contains([]failure.Class{failure.NotFound, failure.PolicyRejected}, failure.Classify(err)):
			permanent = append(permanent, fmt.Errorf("%s: %w", rcpt, err))
		default:
			return 0, nil, err
		}
	}
	return sent, permanent, nil
}

// commentAll posts the findings on the job's Swarm review and records
// their outcomes (or, with no comments, the e-mailed findings' outcomes).
// It returns what the job's detail says of the comments ("" for none).
func (n *Notify) commentAll(ctx context.Context, j *job.Job, in *decide.Decided, emailed bool) (string, error) {
	if n.Comments == nil || j.Swarm == nil || j.Swarm.Review <= 0 {
		if n.Outcomes != nil && emailed {
			return "", n.Outcomes.EmailOnly(ctx, j, in)
		}
		return "", nil
	}
	// After the e-mails: a Swarm failure retries the stage, whose outbox
	// skips the recipients already e-mailed.
	out, err := n.postComments(ctx, j, in)
	if err != nil {
		return "", err
	}
	if n.Outcomes != nil {
		if err := n.Outcomes.Posted(ctx, j, in, out.findings); err != nil {
			return "", err
		}
	}
	return "; " + out.detail(), nil
}

// reportRun reports the outcome to the job's Swarm test run after the
// e-mails: a failing callback retries the stage, whose outbox skips those
// already e-mailed. A refusal for good (the run was deleted) is logged: the
// review was delivered, which is what the job is for.
func (n *Notify) reportRun(ctx context.Context, j *job.Job, o swarm.Outcome, commented bool) error {
	if n.Swarm == nil || j.Swarm == nil {
		return nil
	}
	o.Where = "e-mailed to the author"
	if commented {
		o.Where = "posted on the review"
	}
	_, err := n.Swarm.Send(ctx, swarm.Finished{Job: j, Outcome: o})
	if err == nil || n.Swarm.Classify(err).Class.Retryable() {
		return err
	}
	n.Log.WarnContext(ctx, "swarm pass callback refused; not retried", "err", err, "error_class", failure.Classify(err))
	return nil
}

// detail is the job's record of what the attempt told whom.
func detail(j *job.Job, sent, rcpts int, refused string, commented string) string {
	d := fmt.Sprintf("%d of %d recipients e-mailed now, the rest earlier", sent, rcpts)
	if len(j.Recipients) > 0 && rcpts == 0 && refused == "" {
		d = "not e-mailed: the review's participants hear of the comments from Swarm"
	}
	if refused != "" {
		d += "; not e-mailed, outside the recipient policy: " + refused
	}
	return d + commented
}

// deliver runs the outbox protocol for one recipient's e-mail; true: sent now.
func (n *Notify) deliver(ctx context.Context, jobID string, k delivery.Key, msg *notify.Message) (bool, error) {
	p := outbox.Protocol{Ref: outbox.Email(k), JobID: jobID, Name: msg.Token, Log: n.Log.With("key", msg.Token), Window: n.Window, Words: emailWords, Now: n.Now.Now}
	return outbox.Deliver(ctx, p, n.Outbox, n.Email, msg)
}

// emailWords are the e-mail channel's log lines.
var emailWords = outbox.Words{
	ReleaseLeaseFailed: "releasing an unsent row failed; the next attempt settles it",
	MaybeSent:          "send outcome unknown; the row stays sending until settled",
	ReleaseFailed:      "releasing a refused send failed; the next attempt settles it",
	MarkFailed:         "marking a sent row failed; the retry settles and backfills it",
	Done:               "review e-mailed", DoneKey: "notification_id",
	Found:       "settled: the provider had accepted the earlier send",
	MayComplete: "send may still complete at the provider; retrying after its completion window, not resending",
	NotFound:    "settled: the earlier send never reached the provider; resending",
}

// emailRecipients is who gets the e-mail: the job's recipients, sorted;
// none for a Swarm review commented on (Swarm notifies its participants,
// all of a Swarm job's recipients), unless EmailParticipants.
func (n *Notify) emailRecipients(j *job.Job) []string {
	if j.Swarm != nil && j.Swarm.Review > 0 && n.Comments != nil && !n.EmailParticipants {
		return nil
	}
	rcpts := slices.Clone(j.Recipients)
	slices.Sort(rcpts)
	return rcpts
}
