package outcome

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/swarm"
)

// Comments lists every comment on a review, every page (the Swarm client).
type Comments interface {
	List(ctx context.Context, review int64) ([]swarm.Comment, error)
}

// Deciders reads, as Swarm lists them (the Swarm client), the moderators
// of the project branches a review touches and the members of groups.
type Deciders interface {
	GetModerators(ctx context.Context, project string, branches []string) (swarm.Moderators, error)
	GetGroup(ctx context.Context, id string) (swarm.Group, bool, error)
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
	recs, first, err := r.Store.review(ctx, review)
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
	deciders := lazyDeciders{reviews: r.Reviews, first: first, policy: r.Policy}
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
	first   swarm.Review // who was on it when first fetched (Store.FirstFetched)
	policy  Policy
	who     []string
	read    bool
}

func (l *lazyDeciders) get(ctx context.Context) ([]string, error) {
	if l.read || l.reviews == nil {
		return l.who, nil
	}
	who, err := decidersOf(ctx, l.reviews, l.first, l.policy)
	l.who, l.read = who, err == nil
	return who, err
}

// decidersOf is everyone who may decide on a review, first as the fetch
// stage first read it (a review nothing recorded has only the policy's
// deciders): its author, its participants then (reviewers, required
// reviewers; not whoever joined later by commenting), the moderators of
// the project branches it touched (Project::getModerators), the policy's
// deciders, and every member of a group among them, subgroups followed
// once each as Swarm follows them (GroupDAO::fetchAllMembers; a group that
// does not exist has none).
func decidersOf(ctx context.Context, sw Deciders, first swarm.Review, p Policy) ([]string, error) {
	users, groups := p.decidersNamed()
	if first.Author != "" {
		users = append(users, first.Author)
	}
	users = append(users, first.Participants...)
	groups = append(groups, first.Groups...)
	for _, project := range slices.Sorted(maps.Keys(first.Projects)) {
		m, err := sw.GetModerators(ctx, project, first.Projects[project])
		if err != nil {
			return nil, fmt.Errorf("moderators of %s: %w", project, err)
		}
		users, groups = append(users, m.Users...), append(groups, m.Groups...)
	}
	seen := map[string]bool{}
	for len(groups) > 0 {
		id := groups[0]
		if groups = groups[1:]; seen[id] {
			continue
		}
		seen[id] = true
		g, found, err := sw.GetGroup(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("members of group %s: %w", id, err)
		}
		if found {
			users, groups = append(users, g.Users...), append(groups, g.Subgroups...)
		}
	}
	slices.Sort(users)
	return slices.Compact(users), nil
}
