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

// Deciders reads the moderators of a review's project branches and group members
// (the Swarm client).
type Deciders interface {
	GetModerators(ctx context.Context, project string, branches []string) (swarm.Moderators, error)
	GetGroup(ctx context.Context, id string) (swarm.Group, bool, error)
}

// Rows lists a review's comment rows: which comment holds each posted finding.
type Rows interface {
	ListThread(ctx context.Context, channel string, thread int64) ([]outbox.Row, error)
}

// Reader reads a review's reactions and changes the fates they decide. Reviews
// nil: nobody has standing.
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

// Read derives the fate of every finding posted on review from Swarm's comments
// now and records those that changed (Decide). resolved: fingerprints a later
// version resolved; Resolved stays resolved, a withheld finding never is.
// Dismissers are kept only if they have a say (Policy.Standing). Reading twice
// writes nothing the second time.
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

// lazyDeciders reads the deciders once, only when a dismissal needs them.
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

// decidersOf is everyone who may decide on a review as first fetched: author,
// participants then (not later commenters), the moderators of its project
// branches (Project::getModerators), the policy's deciders, and members of
// groups among them, subgroups followed once as Swarm does
// (GroupDAO::fetchAllMembers).
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
