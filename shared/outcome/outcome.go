// Package outcome owns what reviewers did with each finding the service
// posted (issue 32): its fate, derived by fingerprint from what Swarm keeps
// on our comment (task state, archived flag, likes, replies) and from our
// own reruns (resolved by a later version), and the record of that fate,
// one per (review, fingerprint). A finding told by e-mail only has no
// comment to react to: its fate is unknown, never accepted.
package outcome

import (
	"cmp"
	"slices"

	"github.com/criticizer/criticizer/shared/swarm"
)

// Fate is what became of one posted finding.
type Fate string

const (
	// Accepted fates.
	Addressed Fate = "addressed" // task moved to addressed by a person
	Verified  Fate = "verified"  // task verified
	Resolved  Fate = "resolved"  // a later version changed its lines and it is gone
	Liked     Fate = "liked"     // someone other than us liked the comment
	// Dismissed fates.
	Disliked  Fate = "disliked"  // our 👎 convention: a reply "👎" or "-1" (Swarm has no dislike)
	Dismissed Fate = "dismissed" // a reply by the documented convention ("false positive", "won't fix", …)
	Archived  Fate = "archived"  // archived while never addressed
	// Neither.
	Open     Fate = "open"     // still open, nobody reacted
	Withheld Fate = "withheld" // withheld as a kind repeatedly dismissed: not posted again, not judged, never resolved
	Unknown  Fate = "unknown"  // no comment to read (e-mail only, or the comment is gone)
)

// Accepted reports whether f counts as the finding taken.
func (f Fate) Accepted() bool { return f == Addressed || f == Verified || f == Resolved || f == Liked }

// Dismissive reports whether f counts as the finding rejected.
func (f Fate) Dismissive() bool { return f == Disliked || f == Dismissed || f == Archived }

// archivedFlags are the flags that mark a comment archived: Swarm archives
// by the flag "closed" (its 2022.1 source, IComment::FLAG_CLOSED; the
// reference names only "an archived flag"), and "archived" is tolerated.
var archivedFlags = []string{"closed", "archived"}

// Derive reads the finding whose comment is ours, given every comment on
// the review (all pages) and our login; resolved says whether a later
// version resolved it (rerun.Compare's Resolved). Its fate is the highest
// by Rank of what the comment shows: verified, resolved, addressed, liked
// by someone other than us (what people did), then the standing replies
// (what people said: Dismissed or Disliked), archived, open. Replies are
// the comments whose context.comment names ours or a reply in its thread,
// never a comment of ours (byUs) and never a top-level comment elsewhere
// on the same line (docs/swarm-comments.md "Reactions").
func Derive(ours swarm.Comment, all []swarm.Comment, self string, resolved bool) Verdict {
	v := replyVerdict(ours, all, self)
	// Our own rerun sets a resolved finding's open task to addressed: that
	// is the rerun's verdict, not a person's (resolved outranks addressed).
	switch {
	case ours.TaskState == swarm.TaskVerified:
		v.Fate = Verified
	case resolved:
		v.Fate = Resolved
	case ours.TaskState == swarm.TaskAddressed:
		v.Fate = Addressed
	case slices.ContainsFunc(ours.Likes, func(u string) bool { return u != self }):
		v.Fate = Liked
	case v.Fate != "":
	case slices.ContainsFunc(ours.Flags, func(f string) bool { return slices.Contains(archivedFlags, f) }):
		v.Fate = Archived
	default:
		v.Fate = Open
	}
	return v
}

// replyVerdict is what the people's replies in our thread say, oldest
// first (ReadReply): each person's last dismissal or dislike stands
// unless that person retracted it since; a dismissal by anyone outweighs a
// dislike. Fate is empty when none stands.
func replyVerdict(ours swarm.Comment, all []swarm.Comment, self string) Verdict {
	sorted := slices.SortedFunc(slices.Values(all), func(a, b swarm.Comment) int { return cmp.Compare(a.ID, b.ID) })
	// Our thread: ours and, oldest first, every reply to one in it (whether
	// Swarm names the thread's first comment or the one answered in
	// context.comment is unverified: both are read). A comment of ours is
	// never part of it, so a second finding of ours on the same line, or
	// our note on a reply, never pulls its own replies in.
	thread := map[int64]bool{ours.ID: true}
	said := map[string]Fate{}
	var v Verdict
	for _, c := range sorted {
		if c.ID == ours.ID || c.ReplyTo == 0 || !thread[c.ReplyTo] || byUs(c, self) {
			continue
		}
		thread[c.ID] = true
		switch ReadReply(c.Body) {
		case Dislikes:
			said[c.User] = Disliked
		case Dismisses:
			said[c.User] = Dismissed
		case Retracts:
			if _, ok := said[c.User]; ok {
				v.Retracted = true
			}
			delete(said, c.User)
		}
	}
	for u, f := range said {
		v.By = append(v.By, u)
		if v.Fate == "" || f == Dismissed {
			v.Fate = f
		}
	}
	slices.Sort(v.By)
	return v
}

// byUs: the service wrote c, as self or under any login it has used
// since (credentials rotate): everything it posts carries its marker.
func byUs(c swarm.Comment, self string) bool {
	_, marked := swarm.MarkerOf(c.Body)
	return c.User == self || marked
}
