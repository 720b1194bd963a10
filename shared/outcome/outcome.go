// Package outcome owns what reviewers did with each finding the service
// posted (issue 32): its fate, derived by fingerprint from what Swarm keeps
// on our comment (task state, archived flag, likes, replies) and from our
// own reruns (resolved by a later version), and the record of that fate,
// one per (review, fingerprint). A finding told by e-mail only has no
// comment to react to: its fate is unknown, never accepted.
package outcome

import (
	"cmp"
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

// The reply convention (docs/swarm-comments.md "Reactions"): a reply's
// first line that says something (quoted lines, leading @mentions and
// Markdown emphasis skipped, case ignored) starting with one of these
// phrases dismisses the finding; a first line that starts with a
// thumbs-down (any skin tone, or its shortcode), or is only "-1", is our
// dislike, as Swarm has likes but no dislike; one that
// starts by conceding ("actually you're right", "my mistake") withdraws
// the same person's earlier dismissal.
var (
	dismissReply = regexp.MustCompile(`(?i)^(false[ -]?positive|fp|won'?t fix|will not fix|wontfix|not (a |an )?(bug|issue|problem)|not applicable|by design|works as (intended|designed)|working as (intended|designed)|ignore)\b`)
	dislikeReply = regexp.MustCompile(`^((👎[\x{1F3FB}-\x{1F3FF}\x{FE0F}]*|:-1:|:thumbsdown:)|-1[\s.!]*$)`)
	retractReply = regexp.MustCompile(`(?i)^((actually|ok|okay|oh|ah|hmm)[\s,.!]+)*(you'?re right|you are right|my (mistake|bad)|never ?mind|i stand corrected|retract(ed)?|scratch that)\b`)
	mention      = regexp.MustCompile(`^(@[\w.\-]+[\s,:]*)+`)
)

// archivedFlags are the flags that mark a comment archived: Swarm archives
// by the flag "closed" (its 2022.1 source, IComment::FLAG_CLOSED; the
// reference names only "an archived flag"), and "archived" is tolerated.
var archivedFlags = []string{"closed", "archived"}

// Derive returns the fate of the finding whose comment is ours, given
// every comment on the review (all pages) and our login. resolved says
// whether a later version resolved it (rerun.Compare's Resolved). Replies
// are linked by context.comment when Swarm names it; where it does not
// (the field name is unverified), a comment by someone else on the same
// file, line and version, made after ours, is taken as the reply. A
// person's reply outweighs every task state; then verified, resolved,
// addressed, liked, archived (Rank, which Read and events only raise).
func Derive(ours swarm.Comment, all []swarm.Comment, self string, resolved bool) Fate {
	if f := replyVerdict(ours, all, self); f != "" {
		return f
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

// replyVerdict is what the people's replies to ours say, oldest first:
// each person's last dismissal or dislike counts unless that person
// withdrew it since; a dismissal by anyone outweighs a dislike. Empty:
// no standing verdict. Our own replies (byUs) are never a reaction.
func replyVerdict(ours swarm.Comment, all []swarm.Comment, self string) Fate {
	sorted := slices.SortedFunc(slices.Values(all), func(a, b swarm.Comment) int { return cmp.Compare(a.ID, b.ID) })
	// Our thread: ours and, oldest first, every comment answering one in
	// it (whether Swarm names the thread's first comment or the one
	// answered in context.comment is unverified: both are read).
	thread := map[int64]bool{ours.ID: true}
	said := map[string]Fate{}
	for _, c := range sorted {
		if c.ID == ours.ID || !(thread[c.ReplyTo] || repliesTo(c, ours)) {
			continue
		}
		thread[c.ID] = true
		if byUs(c, self) {
			continue
		}
		switch line := saying(c.Body); {
		case dislikeReply.MatchString(line):
			said[c.User] = Disliked
		case dismissReply.MatchString(line):
			said[c.User] = Dismissed
		case retractReply.MatchString(line):
			delete(said, c.User)
		}
	}
	verdict := Fate("")
	for _, f := range said {
		if verdict == "" || f == Dismissed {
			verdict = f
		}
	}
	return verdict
}

// byUs: the service wrote c, as self or under any login it has used
// since (credentials rotate): everything it posts carries its marker.
func byUs(c swarm.Comment, self string) bool {
	_, marked := swarm.MarkerOf(c.Body)
	return c.User == self || marked
}

// saying is a reply's first line that says something: quoted lines ("> …",
// Markdown's quote of the comment answered) and blank lines skipped, leading
// @mentions and emphasis stripped, typographic apostrophes made plain.
func saying(body string) string {
	for line := range strings.SplitSeq(body, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, ">") {
			continue
		}
		line = mention.ReplaceAllString(line, "")
		line = strings.TrimLeft(line, "*_~ ")
		return strings.NewReplacer("\u2019", "'", "\u2018", "'").Replace(line)
	}
	return ""
}

// repliesTo: c answers ours by context.comment, or, naming none, by being
// later on the same file, lines and (where both name one) review version.
func repliesTo(c, ours swarm.Comment) bool {
	if c.ReplyTo != 0 {
		return c.ReplyTo == ours.ID
	}
	if c.ID < ours.ID || c.Context == nil || ours.Context == nil {
		return false
	}
	a, b := c.Context, ours.Context
	if a.Version != 0 && b.Version != 0 && a.Version != b.Version {
		return false // another version's line N is another line
	}
	return a.File == b.File && a.RightLine == b.RightLine && a.LeftLine == b.LeftLine
}
