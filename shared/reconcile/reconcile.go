// Package reconcile enforces the outbox ordering contract after the fact: a
// periodic pass (the sweeper) finds delivery rows in doubt — "sending" past the
// provider's completion window, or sent with no provider record — moves them to
// "reconciling" (no send for the key), counts each in the paging
// OutboxViolations metric, and repairs them: provider has it → backfill as sent;
// no record → clear the sent markers and requeue once (a succeeded job's row
// with a redelivery message for notify). A row requeued before, or of a
// dead-lettered or missing job, stays reconciling (OutboxReconciling, paging)
// for an operator (criticizer outbox reconcile).
//
// Swarm comment rows are reconciled the same way: their evidence is the review's
// comments matched by each comment's marker (shared/swarm), their window the
// comment window.
package reconcile

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/criticizer/criticizer/shared/envelope"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/obs"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/swarm"
)

// Rows is the part of the outbox the reconciler uses.
type Rows interface {
	Suspects(ctx context.Context, stuckBefore, sentFrom, sentTo time.Time, verifySent bool, limit int) ([]outbox.Suspect, error)
	MarkReconciling(ctx context.Context, k outbox.Ref, observed outbox.Status, reason string, now time.Time) (bool, error)
	Verified(ctx context.Context, k outbox.Ref, now time.Time) error
	Backfill(ctx context.Context, k outbox.Ref, evidence string, now time.Time) (bool, error)
	RequeueReconciled(ctx context.Context, k outbox.Ref, now time.Time) (bool, error)
}

// Progress keeps where a pass stopped (outbox.Pass).
type Progress interface {
	Load(ctx context.Context) (string, error)
	Save(ctx context.Context, cursor string) error
}

// Enqueuer sends a stage message (the notify redelivery of a succeeded job).
type Enqueuer interface {
	Send(ctx context.Context, e envelope.Envelope) error
}

// Evidence says whether the provider accepted the message with this Message-ID
// (SES events, an SMTP relay's log).
type Evidence interface {
	Delivered(ctx context.Context, messageID string) (bool, error)
}

// Comments is the Swarm comments channel's evidence (swarm.Client): the
// service's marked comments on a review, every page, or only those after a
// known id — a comment row records the id its send came after
// (outbox.Row.LookupAfter), so its lookup skips the review's history.
type Comments interface {
	Marked(ctx context.Context, review int64) (map[swarm.Marker]swarm.Comment, error)
	MarkedAfter(ctx context.Context, review, after int64) (map[swarm.Marker]swarm.Comment, error)
}

// listing is one review's marked comments, from the id it started after (0:
// all).
type listing struct {
	from   int64
	marked map[swarm.Marker]swarm.Comment
}

// Reasons a row is reconciling.
const (
	ReasonStuck    = "sending past the provider's completion window"
	ReasonUnproven = "marked sent without provider evidence"
)

// Reconciler makes reconciliation passes.
type Reconciler struct {
	Rows Rows
	// Evidence is the provider's record (shared/evidence); nil: stuck rows wait
	// for an operator and sent rows are not checked.
	Evidence Evidence
	// Jobs tells whether the row's job will notify again: a finished or missing
	// job's row is left reconciling for an operator. Nil requeues without
	// asking.
	Jobs job.Getter
	// Redeliver hands a succeeded job's requeued row to notify; nil leaves it
	// reconciling.
	Redeliver Enqueuer
	// FromDomain is the From address's domain, which every deterministic
	// Message-ID carries.
	FromDomain string
	// Window is how long after a send started the provider may still complete
	// it.
	Window time.Duration
	// Comments is the Swarm comments evidence; nil: comment rows are left to the
	// notify stage's lookup.
	Comments Comments
	// CommentWindow is SWARM_COMMENT_WINDOW_SECONDS; zero: Window.
	CommentWindow time.Duration
	// Lookback bounds how far back sent rows are verified.
	Lookback time.Duration
	Limit    int
	// Budget bounds how long a pass judges rows (0: unbounded); rows not reached
	// are the backlog (ReconcileBacklog).
	Budget time.Duration
	// Progress keeps the position among rows already reconciling (they stay in
	// doubt pass after pass), so a pass cut short resumes after the last one
	// judged. Nil: from the start.
	Progress Progress
	Log      *slog.Logger
	Metrics  *obs.Metrics
	Now      job.Clock // the system clock when nil
}

// Report says what one pass did.
type Report struct {
	Examined    int `json:"examined"`
	Verified    int `json:"verified"`
	Reconciling int `json:"reconciling"` // rows left for an operator
	Backfilled  int `json:"backfilled"`
	Requeued    int `json:"requeued"`
	Redelivered int `json:"redelivered"` // requeued rows of succeeded jobs handed to notify's redelivery
	// Violations counts rows moved to reconciling in this pass, repaired or not.
	Violations int `json:"violations"`
	Errors     int `json:"errors"`
	// Comments counts the examined rows that are Swarm comments.
	Comments int `json:"comments"`
	// Backlog counts rows this pass would judge but did not reach; Stopped says
	// why ("limit", "time").
	Backlog int    `json:"backlog,omitempty"`
	Stopped string `json:"stopped,omitempty"`
}

// Run makes one pass. A row's error is logged and counted; the next pass retries
// it.
func (r *Reconciler) Run(ctx context.Context) (Report, error) {
	now := r.Now.Now()
	limit := cmp.Or(max(r.Limit, 0), 200)
	// The scan takes the shorter window; each row is held to its own channel's
	// (subject).
	pastWindow := now.Add(-min(r.Window, r.commentWindow()))
	verify := r.Evidence != nil || r.Comments != nil
	// The limit counts judged rows, so skipped ones never take a judged row's
	// place.
	suspects, err := r.Rows.Suspects(ctx, pastWindow, pastWindow.Add(-r.Lookback), pastWindow, verify, 0)
	if err != nil {
		return Report{}, err
	}
	suspects, cursor, err := r.resume(ctx, suspects)
	if err != nil {
		return Report{}, err
	}
	var rep Report
	marked := map[int64]listing{} // one listing per review per pass
	last := ""                    // the position of the last reconciling row judged
	for i, s := range suspects {
		sub, ok := r.subject(s, now, marked)
		if !ok {
			continue
		}
		if stop := r.stop(rep.Examined, limit, now); stop != "" {
			rep.Stopped, rep.Backlog = stop, r.judgeable(suspects[i:], now)
			break
		}
		if s.Status == outbox.Reconciling {
			last = position(s)
		}
		rep.Examined++
		if sub.comment {
			rep.Comments++
		}
		r.judge(ctx, sub, s, now, &rep)
	}
	if err := r.saveCursor(ctx, cursor, last, rep.Stopped != ""); err != nil {
		rep.failed(ctx, r.Log, "reconcile: saving the pass's position failed; the next pass starts from the oldest row", err)
	}
	// Every pass emits all three, zeros too, so alarms see rows resolved; every
	// violation pages, repaired or not (the contract should never break).
	r.Metrics.Put("OutboxReconciling", float64(rep.Reconciling), obs.Count, nil)
	r.Metrics.Put("ReconcileBacklog", float64(rep.Backlog), obs.Count, nil)
	r.Metrics.Put("OutboxViolations", float64(rep.Violations), obs.Count, nil)
	return rep, nil
}

// failed logs a row's error and counts it; the next pass retries the row.
func (rep *Report) failed(ctx context.Context, log *slog.Logger, msg string, err error) bool {
	log.WarnContext(ctx, msg, "err", err)
	rep.Errors++
	return false
}

// judge verifies, marks reconciling and repairs one suspect.
func (r *Reconciler) judge(ctx context.Context, sub subject, s outbox.Suspect, now time.Time, rep *Report) {
	log := sub.log
	status := s.Status
	if status == outbox.Sent {
		_, ok, err := sub.evidence(ctx, true)
		if err != nil {
			rep.failed(ctx, log, "reconcile: delivery lookup failed", err)
			return
		}
		if ok {
			if err := r.Rows.Verified(ctx, sub.ref, now); err != nil {
				rep.failed(ctx, log, "reconcile: recording verification failed", err)
			}
			rep.Verified++
			return
		}
	}
	reason := s.Reason
	if status != outbox.Reconciling {
		reason = ReasonStuck
		if status == outbox.Sent {
			reason = ReasonUnproven
		}
		moved, err := r.Rows.MarkReconciling(ctx, sub.ref, status, reason, now)
		if err != nil || !moved {
			if err != nil {
				rep.failed(ctx, log, "reconcile: marking reconciling failed", err)
			}
			return // moved on meanwhile (a send completed): not ours
		}
		rep.Violations++
		log.ErrorContext(ctx, "ordering contract violated: outbox row reconciling, nothing is sent for this key until it is resolved", "reason", reason, "was", status)
	}
	if !r.repair(ctx, sub, s, reason, now, rep) {
		rep.Reconciling++
	}
}

// stop says why the pass takes no further row ("limit", "time"), or "".
func (r *Reconciler) stop(examined, limit int, start time.Time) string {
	switch {
	case examined >= limit:
		return "limit"
	case r.Budget > 0 && !r.Now.Now().Before(start.Add(r.Budget)):
		return "time"
	}
	return ""
}

// judgeable counts the rows a pass would judge.
func (r *Reconciler) judgeable(rows []outbox.Suspect, now time.Time) int {
	n := 0
	for _, s := range rows {
		if _, ok := r.subject(s, now, nil); ok {
			n++
		}
	}
	return n
}

// position orders the reconciling rows for the saved cursor.
func position(s outbox.Suspect) string { return s.Since + "\x00" + s.Ref().String() }

// resume rotates the reconciling rows (the last rank) to start after the saved
// position.
func (r *Reconciler) resume(ctx context.Context, suspects []outbox.Suspect) ([]outbox.Suspect, string, error) {
	if r.Progress == nil {
		return suspects, "", nil
	}
	cursor, err := r.Progress.Load(ctx)
	if err != nil || cursor == "" {
		return suspects, cursor, err
	}
	first := slices.IndexFunc(suspects, func(s outbox.Suspect) bool { return s.Status == outbox.Reconciling })
	if first < 0 {
		first = len(suspects)
	}
	head, recon := suspects[:first:first], suspects[first:]
	cut := slices.IndexFunc(recon, func(s outbox.Suspect) bool { return position(s) > cursor })
	if cut < 0 {
		cut = len(recon)
	}
	out := append(head, recon[cut:]...)
	return append(out, recon[:cut]...), cursor, nil
}

// saveCursor records where a cut-short pass stopped; a complete pass resets it.
func (r *Reconciler) saveCursor(ctx context.Context, old, last string, cut bool) error {
	next := old
	switch {
	case r.Progress == nil:
		return nil
	case !cut:
		next = ""
	case last != "":
		next = last
	}
	if next == old {
		return nil
	}
	return r.Progress.Save(ctx, next)
}

func (r *Reconciler) commentWindow() time.Duration {
	if r.Comments == nil || r.CommentWindow <= 0 {
		return r.Window
	}
	return r.CommentWindow
}

// subject is a suspect row with its channel's evidence.
type subject struct {
	ref     outbox.Ref
	comment bool
	log     *slog.Logger
	// evidence asks the provider for the row: what to backfill with and whether
	// found; sent: verifying a sent row. nil: no evidence, an operator decides.
	evidence func(ctx context.Context, sent bool) (string, bool, error)
}

// subject returns s with its evidence; ok is false when this pass does not judge
// it (no evidence here, or within its window).
func (r *Reconciler) subject(s outbox.Suspect, now time.Time, marked map[int64]listing) (subject, bool) {
	it, isItem := s.ChannelItem()
	window := r.Window
	if isItem {
		if r.Comments == nil || it.Channel != outbox.ChannelSwarmComments {
			// Asking the mail provider would requeue it and post it twice: the
			// notify stage settles it by the channel's lookup.
			return subject{}, false
		}
		window = r.commentWindow()
	} else if s.Status == outbox.Sent && r.Evidence == nil {
		return subject{}, false // nothing to verify an e-mail against
	}
	at := s.SendStartedAt
	if s.Status == outbox.Sent {
		at = s.NotifiedAt
	}
	if t, err := job.ParseTime(at); err == nil && s.Status != outbox.Reconciling && t.After(now.Add(-window)) {
		return subject{}, false // within its channel's window: the next pass judges it
	}
	if isItem {
		log := r.Log.With("review", it.Thread, "comment", it.ID, "job_id", s.JobID)
		return subject{ref: it, comment: true, log: log, evidence: r.commentEvidence(it, s.LookupAfter, marked)}, true
	}
	// Named by its stored keys and token, so a scrubbed row resolves like any
	// other.
	sub := subject{ref: s.Row.Ref(), log: r.Log.With("changelist", s.Changelist, "review_version", s.ReviewVersion, "job_id", s.JobID)}
	if r.Evidence != nil {
		messageID := s.Row.MessageID(r.FromDomain)
		sub.evidence = func(ctx context.Context, _ bool) (string, bool, error) {
			ok, err := r.Evidence.Delivered(ctx, messageID)
			return messageID, ok, err
		}
	}
	return sub, true
}

// commentEvidence finds a comment row's comment by its marker, listing the
// review (after LookupAfter) once per pass. A task change
// ("addressed/<fingerprint>") has no comment of its own: its evidence is the
// finding's comment no longer open — or, for a sent row, that it exists (a
// reopened task is not overruled).
func (r *Reconciler) commentEvidence(it outbox.Item, after int64, marked map[int64]listing) func(context.Context, bool) (string, bool, error) {
	kind, id, _ := strings.Cut(it.ID, "/")
	return func(ctx context.Context, sent bool) (string, bool, error) {
		l, ok := marked[it.Thread]
		if !ok || l.from > after {
			var m map[swarm.Marker]swarm.Comment
			var err error
			if after > 0 {
				m, err = r.Comments.MarkedAfter(ctx, it.Thread, after)
			} else {
				after = 0
				m, err = r.Comments.Marked(ctx, it.Thread)
			}
			if err != nil {
				return "", false, err
			}
			l = listing{from: after, marked: m}
			marked[it.Thread] = l
		}
		m := l.marked
		if kind == addressedKind {
			c, ok := m[swarm.FindingKey(it.Thread, id).Marker()]
			return strconv.FormatInt(c.ID, 10), ok && (sent || c.TaskState != swarm.TaskOpen), nil
		}
		c, ok := m[swarm.CommentKey{Review: it.Thread, Kind: kind, ID: id}.Marker()]
		return strconv.FormatInt(c.ID, 10), ok, nil
	}
}

// addressedKind is the item kind of a task set addressed (shared/notifystage).
const addressedKind = "addressed"

// repair resolves a reconciling row per the failure matrix and reports
// whether it did.
func (r *Reconciler) repair(ctx context.Context, sub subject, s outbox.Suspect, reason string, now time.Time, rep *Report) bool {
	k, log := sub.ref, sub.log
	if sub.evidence == nil {
		return false // nothing to ask: an operator checks the provider
	}
	evidence, delivered, err := sub.evidence(ctx, false)
	if err != nil {
		return rep.failed(ctx, log, "reconcile: delivery lookup failed", err)
	}
	if delivered {
		ok, err := r.Rows.Backfill(ctx, k, evidence, now)
		if err != nil {
			return rep.failed(ctx, log, "reconcile: backfill failed", err)
		}
		if ok {
			log.WarnContext(ctx, "reconciled: the provider has the message; row backfilled as sent")
			rep.Backfilled++
		}
		return ok
	}
	var succeeded *job.Job
	if r.Jobs != nil {
		j, err := r.Jobs.Get(ctx, s.JobID)
		switch {
		case err == nil && j.State == job.Succeeded && r.Redeliver != nil:
			succeeded = j // notify will not run again by itself: redeliver this row
		case errors.Is(err, job.ErrNotFound) || (err == nil && j.Terminal()):
			log.WarnContext(ctx, "reconcile: the provider has no record, and the job will not notify again; an operator resolves it")
			return false
		case err != nil:
			return rep.failed(ctx, log, "reconcile: reading the job failed", err)
		}
	}
	ok, err := r.Rows.RequeueReconciled(ctx, k, now)
	if err != nil {
		return rep.failed(ctx, log, "reconcile: requeue failed", err)
	}
	if !ok {
		return false
	}
	if succeeded != nil {
		// The redelivery has notify deliver this one row under its key; if it
		// cannot be sent the row goes back to reconciling for an operator.
		msg := envelope.Redeliver(succeeded, "reconciler", reason+"; the provider has no record of the message", now)
		if err := r.Redeliver.Send(ctx, msg); err != nil {
			log.ErrorContext(ctx, "reconcile: sending the redelivery failed; the row goes back to reconciling", "err", err)
			rep.Errors++
			if _, merr := r.Rows.MarkReconciling(ctx, k, outbox.Pending, "redelivery could not be enqueued", now); merr != nil {
				log.ErrorContext(ctx, "reconcile: the requeued row of a succeeded job could not be parked again; requeue it: criticizer outbox reconcile", "err", merr)
			}
			return false
		}
		log.WarnContext(ctx, "reconciled: the provider has no record; row pending again, redelivery sent to notify for the succeeded job")
		rep.Requeued++
		rep.Redelivered++
		return true
	}
	log.WarnContext(ctx, "reconciled: the provider has no record; markers cleared, row pending again (once)")
	rep.Requeued++
	return true
}
