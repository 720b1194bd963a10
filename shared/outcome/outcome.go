// Package outcome owns what reviewers did with each finding the service
// posted (issue 32): its fate, derived by fingerprint from what Swarm keeps
// on our comment (task state, archived flag, likes, replies) and from our
// own reruns (resolved by a later version), and the record of that fate,
// one per (review, fingerprint). A finding told by e-mail only has no
// comment to react to: its fate is unknown, never accepted.
package outcome

import (
	"regexp"
	"slices"
	"strings"

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
	Open    Fate = "open"    // still open, nobody reacted
	Unknown Fate = "unknown" // no comment to read (e-mail only, or the comment is gone)
)

// Accepted reports whether f counts as the finding taken.
func (f Fate) Accepted() bool { return f == Addressed || f == Verified || f == Resolved || f == Liked }

// Dismissive reports whether f counts as the finding rejected.
func (f Fate) Dismissive() bool { return f == Disliked || f == Dismissed || f == Archived }

// The reply convention (docs/swarm-comments.md "Reactions"): a reply whose
// first line starts with one of these phrases dismisses the finding; a
// reply that is only a thumbs-down (or "-1") is our dislike, as Swarm has
// likes but no dislike.
var (
	dismissReply = regexp.MustCompile(`(?i)^\s*(false[ -]positive|won'?t fix|wontfix|not (a |an )?(bug|issue|problem)|not applicable|ignore)\b`)
	dislikeReply = regexp.MustCompile(`^\s*(👎|:-1:|-1|:thumbsdown:)\s*$`)
)

// archivedFlags are the flags that mark a comment archived: Swarm's UI
// archives by the flag "closed" (*unverified* in the reference, which names
// only "an archived flag"), and "archived" is tolerated too.
var archivedFlags = []string{"closed", "archived"}

// Derive returns the fate of the finding whose comment is ours, given
// every comment on the review (all pages) and our login. resolved says
// whether a later version resolved it (rerun.Compare's Resolved). Replies
// are linked by context.comment when Swarm names it; where it does not
// (the field name is unverified), a comment by someone else on the same
// file and line, made after ours, is taken as the reply.
func Derive(ours swarm.Comment, all []swarm.Comment, self string, resolved bool) Fate {
	for _, c := range all {
		if c.ID == ours.ID || c.User == self || !repliesTo(c, ours) {
			continue
		}
		first, _, _ := strings.Cut(strings.TrimSpace(c.Body), "\n")
		switch {
		case dislikeReply.MatchString(first):
			return Disliked
		case dismissReply.MatchString(first):
			return Dismissed
		}
	}
	// Our own rerun sets a resolved finding's open task to addressed: that
	// is the rerun's verdict, not a person's.
	switch {
	case ours.TaskState == swarm.TaskVerified:
		return Verified
	case resolved:
		return Resolved
	case ours.TaskState == swarm.TaskAddressed:
		return Addressed
	}
	if slices.ContainsFunc(ours.Likes, func(u string) bool { return u != self }) {
		return Liked
	}
	if slices.ContainsFunc(ours.Flags, func(f string) bool { return slices.Contains(archivedFlags, f) }) {
		return Archived
	}
	return Open
}

func repliesTo(c, ours swarm.Comment) bool {
	if c.ReplyTo != 0 {
		return c.ReplyTo == ours.ID
	}
	if c.ID < ours.ID || c.Context == nil || ours.Context == nil {
		return false
	}
	return c.Context.File == ours.Context.File && c.Context.RightLine == ours.Context.RightLine && c.Context.LeftLine == ours.Context.LeftLine
}
