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

// Rows lists a review's comment rows in the outbox: which comment holds
// each finding we posted (its notification id).
type Rows interface {
	ListThread(ctx context.Context, channel string, thread int64) ([]outbox.Row, error)
}

// Reader reads a review's reactions and changes the fates they decide.
type Reader struct {
	Store    *Store
	Rows     Rows
	Comments Comments
}

// Tally is what one read did.
type Tally struct {
	Read         int `json:"read"`          // posted findings looked at
	FatesChanged int `json:"fates_changed"` // fates that changed and were written
	Unknown      int `json:"unknown"`       // posted findings whose comment could not be read
}

// Read derives the fate of every finding posted on review and records the
// ones that changed. resolved holds the fingerprints a later version
// resolved (rerun.Compare's Resolved); a fate recorded as Resolved stays
// resolved however the comment reads later. A fate only rises (Rank), as
// by events: the first judgement of a finding is the one that counts, so a
// reopened task, a like withdrawn or an unarchive leaves it recorded, and a
// recorded fate and its tallies and metrics never flip back and forth.
// Reading twice writes nothing the second time.
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
	for _, rec := range recs {
		t.Read++
		ours, ok := byID[ids[rec.Fingerprint]]
		if !ok {
			t.Unknown++ // never posted, or deleted: no reaction to read
			continue
		}
		fate := Derive(ours, all, ours.User, gone[rec.Fingerprint] || rec.Fate == Resolved)
		if Rank(fate) <= Rank(rec.Fate) {
			continue // a fate recorded stays: a judgement is not taken back by a reopened task, a withdrawn like or an unarchive
		}
		written, err := r.Store.ChangeFate(ctx, rec, fate)
		if err != nil {
			return t, err
		}
		if written {
			t.FatesChanged++
		}
	}
	return t, nil
}
