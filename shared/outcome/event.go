package outcome

import (
	"context"
	"strconv"
	"strings"

	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/swarm"
)

// An event is one reaction P4 Code Review pushed to us (package
// swarmevents): a comment as it stands after a like, a task-state move, an
// archive, or a reply. Unlike a read of every comment it shows one comment,
// and events may arrive late, twice or out of order, so an event only ever
// raises a fate along Rank, as a full read (Reader.Read) does: a fate is
// never moved back (a task reopened, a like withdrawn).

// Rank orders fates as Derive weighs them: a dismissing reply outweighs
// every task state, verified outweighs resolved, resolved addressed, and so
// on down to open. Equal ranks do not replace each other.
func Rank(f Fate) int {
	switch f {
	case Disliked, Dismissed:
		return 7
	case Verified:
		return 6
	case Resolved:
		return 5
	case Addressed:
		return 4
	case Liked:
		return 3
	case Archived:
		return 2
	case Open:
		return 1
	}
	return 0
}

// EventFate is the fate one comment event shows, and the comment whose
// finding it is about: for a reply, the comment it answers (by
// context.comment; a reply that names none cannot be placed from the event
// alone and is left to the next full read: about is 0); for any other
// comment, the comment itself, read as Derive reads it alone. A reply of
// our own is no reaction, as in a full read: the event names no login of
// ours, but what we post carries our marker (byUs).
func EventFate(c swarm.Comment) (fate Fate, about int64) {
	if c.ReplyTo != 0 {
		return Derive(swarm.Comment{ID: c.ReplyTo}, []swarm.Comment{c}, "", false), c.ReplyTo
	}
	return Derive(c, nil, c.User, false), c.ID
}

// Raise records fate for the finding held by comment on review when it
// outranks the fate recorded (Rank), in the same transaction as a read's
// change (Store.ChangeFate). found is false when no finding we posted is
// held by that comment (someone else's comment, or one not ours to track).
func (r *Reader) Raise(ctx context.Context, review, comment int64, fate Fate) (written, found bool, err error) {
	ids, err := r.commentIDs(ctx, review)
	if err != nil {
		return false, false, err
	}
	fp := ""
	for f, id := range ids {
		if id == comment {
			fp = f
		}
	}
	if fp == "" {
		return false, false, nil
	}
	recs, err := r.Store.Review(ctx, review)
	if err != nil {
		return false, false, err
	}
	for _, rec := range recs {
		if rec.Fingerprint != fp {
			continue
		}
		if Rank(fate) <= Rank(rec.Fate) {
			return false, true, nil // already as far or further: a retry, a replay, or an older event
		}
		written, err = r.Store.ChangeFate(ctx, rec, fate)
		return written, true, err
	}
	return false, false, nil // commented, but never recorded (outcomes were off then)
}

// commentIDs maps each finding posted on review to the comment that holds
// it (its outbox row's notification id).
func (r *Reader) commentIDs(ctx context.Context, review int64) (map[string]int64, error) {
	rows, err := r.Rows.ListThread(ctx, outbox.ChannelSwarmComments, review)
	if err != nil {
		return nil, err
	}
	ids := map[string]int64{}
	for _, row := range rows {
		fp, ok := strings.CutPrefix(row.Item, swarm.KindFinding+"/")
		if !ok || row.NotifiedAt == "" {
			continue
		}
		if id, err := strconv.ParseInt(row.NotificationID, 10, 64); err == nil {
			ids[fp] = id
		}
	}
	return ids, nil
}
