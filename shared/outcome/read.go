package outcome

import (
	"context"

	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/swarm"
)

// Comments lists every comment on a review, every page (the Swarm client).
type Comments interface {
	List(ctx context.Context, review int64) ([]swarm.Comment, error)
}

// Deciders reads who may decide on a review as Swarm lists them: its author and participants
// (the Swarm client's GetReview).
type Deciders interface {
	GetReview(ctx context.Context, id int64) (swarm.Review, error)
}

// Rows lists a review's comment rows in the outbox: which comment holds
// each finding we posted (its notification id).
type Rows interface {
	ListThread(ctx context.Context, channel string, thread int64) ([]outbox.Row, error)
}

// Reader reads a review's reactions and changes the fates they decide.
// Reviews nil: nobody has standing (fates are still recorded; nothing
// counts toward withholding).
type Reader struct {
	Store    *Store
	Rows     Rows
	Comments Comments
	Reviews  Deciders
	Policy   Policy
}

// Tally is what one read did.
type Tally struct {
	Read         int `json:"read"`          // posted findings looked at
	FatesChanged int `json:"fates_changed"` // fates that changed and were written
	Unknown      int `json:"unknown"`       // posted findings whose comment could not be read
}

// Read derives the fate of every finding posted on review, as Swarm's API
// lists its comments now, and records the ones that changed by the one
// precedence (Decide). resolved holds the fingerprints a later version
// resolved (rerun.Compare's Resolved); a fate recorded as Resolved stays
// resolved, a withheld finding is never resolved (it was not posted
// again). Who stands dismissing a finding is kept only for the people
// with a say on the review (Policy.Standing). Reading twice writes
// nothing the second time.
func (r *Reader) Read(ctx context.Context, review int64, resolved []string) (Tally, error) {
	var t Tally
	recs, err := r.Store.Review(ctx, review)
	if err != nil || len(recs) == 0 {
		return t, err
	}
	ids, err := r.commentIDs(ctx, review)
	if err != nil {
		return t, err
	}
	all, err := r.Comments.List(ctx, review)
	if err != nil {
		return t, err
	}
	byID := map[int64]swarm.Comment{}
	for _, c := range all {
		byID[c.ID] = c
	}
	gone := map[string]bool{}
	for _, fp := range resolved {
		gone[fp] = true
	}
	deciders := lazyDeciders{reviews: r.Reviews, review: review}
	for _, rec := range recs {
		t.Read++
		ours, ok := byID[ids[rec.Fingerprint]]
		if !ok {
			t.Unknown++ // never posted, withheld, or deleted: no reaction to read
			continue
		}
		v := Derive(ours, all, ours.User, gone[rec.Fingerprint] && rec.Fate != Withheld || rec.Fate == Resolved)
		fate := Decide(rec.Fate, v)
		var by []string
		if fate.Dismissive() && len(v.By) > 0 {
			who, err := deciders.get(ctx)
			if err != nil {
				return t, err
			}
			by = r.Policy.Standing(v.By, ours.User, who)
		}
		written, err := r.Store.ChangeFate(ctx, rec, fate, by)
		if err != nil {
			return t, err
		}
		if written {
			t.FatesChanged++
		}
	}
	return t, nil
}

// lazyDeciders reads who may decide on the review once, and only when a
// dismissal needs it (cost follows work).
type lazyDeciders struct {
	reviews Deciders
	review  int64
	who     []string
	read    bool
}

func (l *lazyDeciders) get(ctx context.Context) ([]string, error) {
	if l.read || l.reviews == nil {
		return l.who, nil
	}
	rv, err := l.reviews.GetReview(ctx, l.review)
	if err != nil {
		return nil, err
	}
	l.who, l.read = append([]string{rv.Author}, rv.Participants...), true
	return l.who, nil
}
