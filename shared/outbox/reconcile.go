package outbox

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
)

// Reconciling is a row in doubt (stuck sending past the window, or sent without
// evidence): Begin refuses it until the reconciler or an operator resolves it.
const Reconciling Status = "reconciling"

// Suspect is a row the reconciler looks at, with its reconciliation state.
type Suspect struct {
	Row
	Reason     string `dynamodbav:"reconcile_reason,omitempty" json:"reconcile_reason,omitempty"`
	Since      string `dynamodbav:"reconciling_since,omitempty" json:"reconciling_since,omitempty"`
	Requeues   int    `dynamodbav:"reconcile_requeues,omitempty" json:"reconcile_requeues,omitempty"`
	VerifiedAt string `dynamodbav:"verified_at,omitempty" json:"verified_at,omitempty"`
}

// Suspects returns up to limit (≤ 0: all) rows needing reconciling, ranked:
// sending since before stuckBefore; sent in [sentFrom, sentTo) and unverified
// (only when verifySent); reconciling — each oldest first. It Queries the doubt
// index with eventually consistent reads (every repair is conditional, so a
// stale row costs only a refused write).
func (o *Outbox) Suspects(ctx context.Context, stuckBefore, sentFrom, sentTo time.Time, verifySent bool, limit int) ([]Suspect, error) {
	out, err := o.doubtQuery(ctx, Sending, "#at < :at1", stuckBefore)
	if err != nil {
		return nil, err
	}
	if verifySent && sentFrom.Before(sentTo) {
		// BETWEEN is inclusive; the window's end is not.
		sent, err := o.doubtQuery(ctx, Sent, "#at BETWEEN :at1 AND :at2", sentFrom, sentTo)
		if err != nil {
			return nil, err
		}
		end := job.FormatTime(sentTo)
		for _, s := range sent {
			if s.NotifiedAt < end && s.VerifiedAt == "" {
				out = append(out, s)
			}
		}
	}
	reconciling, err := o.doubtQuery(ctx, Reconciling, "")
	if err != nil {
		return nil, err
	}
	out = append(out, reconciling...)
	// Ranked before the limit: an operator's backlog must not take every pass's
	// places.
	slices.SortStableFunc(out, func(a, b Suspect) int {
		if d := suspectRank(a) - suspectRank(b); d != 0 {
			return d
		}
		return strings.Compare(a.since(), b.since())
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func suspectRank(s Suspect) int {
	switch s.Status {
	case Sending:
		return 0
	case Sent:
		return 1
	}
	return 2
}

func (s Suspect) since() string {
	switch s.Status {
	case Sending:
		return s.SendStartedAt
	case Sent:
		return s.NotifiedAt
	}
	return s.Since
}

// update is an owned write (write) to an existing row under cond. Its own token
// matters: without it the reconciler read its applied but unanswered
// MarkReconciling as a row that moved on.
func (o *Outbox) update(ctx context.Context, op string, k Ref, set, cond string, values map[string]types.AttributeValue) (bool, error) {
	_, ok, err := o.write(ctx, k, op, "reconcile/"+uuid.NewString(), set, "attribute_exists(pk) AND "+cond, expected(cond, values), values)
	return ok, err
}

// MarkReconciling moves a row from observed to Reconciling, blocking sends; ok
// is false when it moved on.
func (o *Outbox) MarkReconciling(ctx context.Context, k Ref, observed Status, reason string, now time.Time) (bool, error) {
	values := map[string]types.AttributeValue{":reconciling": sv(string(Reconciling)), ":observed": sv(string(observed)),
		":why": sv(reason), ":now": sv(job.FormatTime(now))}
	set := inDoubt("SET #s = :reconciling, reconcile_reason = :why, reconciling_since = :now, updated_at = :now", values, Reconciling, job.FormatTime(now))
	return o.update(ctx, "mark outbox row reconciling", k, set, "#s = :observed", values)
}

// Verified records that the provider has evidence of a sent row's message.
func (o *Outbox) Verified(ctx context.Context, k Ref, now time.Time) error {
	_, err := o.update(ctx, "verify outbox row", k, outOfDoubt("SET verified_at = :now"), "#s = :sent",
		map[string]types.AttributeValue{":sent": sv(string(Sent)), ":now": sv(job.FormatTime(now))})
	return err
}

// Backfill resolves a reconciling row the provider has: sent, verified, the
// evidence as notification id when it had none.
func (o *Outbox) Backfill(ctx context.Context, k Ref, evidence string, now time.Time) (bool, error) {
	at := sv(job.FormatTime(now))
	return o.update(ctx, "backfill outbox row", k,
		outOfDoubt("SET #s = :sent, verified_at = :now, updated_at = :now, notified_at = if_not_exists(notified_at, :now),"+
			" notification_id = if_not_exists(notification_id, :nid) REMOVE reconcile_reason, reconciling_since"),
		"#s = :reconciling", map[string]types.AttributeValue{":sent": sv(string(Sent)), ":reconciling": sv(string(Reconciling)),
			":now": at, ":nid": sv(evidence)})
}

// RequeueReconciled makes a reconciling row the provider has no record of
// pending again, markers cleared, once; ok is false after that (an operator
// decides).
func (o *Outbox) RequeueReconciled(ctx context.Context, k Ref, now time.Time) (bool, error) {
	return o.update(ctx, "requeue reconciled outbox row", k,
		outOfDoubt("SET #s = :pending, updated_at = :now, reconcile_requeues = if_not_exists(reconcile_requeues, :zero) + :one"+
			" REMOVE notified_at, notification_id, send_started_at, reconcile_reason, reconciling_since"),
		"#s = :reconciling AND (attribute_not_exists(reconcile_requeues) OR reconcile_requeues < :one)",
		map[string]types.AttributeValue{":pending": sv(string(Pending)), ":reconciling": sv(string(Reconciling)),
			":now": sv(job.FormatTime(now)), ":zero": &types.AttributeValueMemberN{Value: "0"}, ":one": &types.AttributeValueMemberN{Value: "1"}})
}

// Resolve is the operator's settlement of a reconciling row: delivered marks it
// sent; not delivered makes it pending.
func (o *Outbox) Resolve(ctx context.Context, k Ref, delivered bool, evidence string, now time.Time) error {
	var ok bool
	var err error
	if delivered {
		ok, err = o.Backfill(ctx, k, "operator-confirmed: "+evidence, now)
	} else {
		ok, err = o.update(ctx, "resolve outbox row", k,
			outOfDoubt("SET #s = :pending, updated_at = :now REMOVE notified_at, notification_id, send_started_at, reconcile_reason, reconciling_since"),
			"#s = :reconciling", map[string]types.AttributeValue{":pending": sv(string(Pending)), ":reconciling": sv(string(Reconciling)), ":now": sv(job.FormatTime(now))})
	}
	if err == nil && !ok {
		return failure.Errorf(failure.Conflict, "resolve %s: the row is not reconciling", k)
	}
	return err
}
