// Package outcome owns what reviewers did with each posted finding (issue 32):
// its fate, derived by fingerprint from our comment in Swarm (task state,
// archive, likes, replies) and our own reruns, and its record, one per (review,
// fingerprint). An e-mail-only finding's fate is unknown, never accepted.
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

// archivedFlags mark an archived comment: Swarm uses "closed" (2022.1 source,
// IComment::FLAG_CLOSED; the reference says only "an archived flag"); "archived"
// is tolerated.
var archivedFlags = []string{"closed", "archived"}

// Derive reads our finding's comment given every comment on the review and our
// login; resolved: a later version resolved it (rerun.Compare). The fate is the
// highest by Rank shown: verified, resolved, addressed, liked by another (what
// people did), then standing replies (what they said), archived, open. Replies
// are comments whose context.comment names ours or a reply in its thread, never
// ours (byUs), never a top-level comment on the same line
// (docs/swarm-comments.md "Reactions").
func Derive(ours swarm.Comment, all []swarm.Comment, self string, resolved bool) Verdict {
	v := replyVerdict(ours, all, self)
	// Our rerun sets a resolved finding's task addressed: resolved outranks it.
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

// replyVerdict is what people's replies in our thread say, oldest first: each
// person's last dismissal or dislike stands unless retracted since; a dismissal
// outweighs a dislike. Fate is empty when none stands.
func replyVerdict(ours swarm.Comment, all []swarm.Comment, self string) Verdict {
	sorted := slices.SortedFunc(slices.Values(all), func(a, b swarm.Comment) int { return cmp.Compare(a.ID, b.ID) })
	// Our thread: ours and every reply to one in it (whether Swarm names the
	// thread's first comment or the one answered is unverified: both are read);
	// never a comment of ours, so our other findings on the line never pull
	// their replies in.
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

// byUs: the service wrote c, under any login it has used (all it posts is
// marked).
func byUs(c swarm.Comment, self string) bool {
	_, marked := swarm.MarkerOf(c.Body)
	return c.User == self || marked
}
