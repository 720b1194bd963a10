package outcome

import (
	"regexp"
	"strings"
)

// Reaction is what one reply to our comment says, read as a person reading
// the review would (docs/swarm-comments.md "Reactions", the reply grammar;
// the corpus in reply_test.go pins it).
type Reaction int

const (
	// Says neither dismisses nor retracts: an argument, question, thanks, or a
	// sentence that starts like a dismissal and says the opposite.
	Says Reaction = iota
	// Dismisses: the first meaningful line is a dismissal phrase, alone or with
	// a reason that does not take it back.
	Dismisses
	// Dislikes: our 👎 convention (Swarm has likes and no dislike).
	Dislikes
	// Retracts: the person concedes, withdrawing their own earlier dismissal.
	Retracts
)

// The grammar's vocabulary, matched against the first meaningful line.
var (
	// dismissPhrase must be the whole line, or be followed by a separator
	// and a reason, or by one of the neutral tails.
	dismissPhrase = regexp.MustCompile(`^(false[ -]?positive|false alarm|fp|won'?t fix|will not fix|wont ?fix|not (a |an )?(bug|issue|problem)|no (bug|issue|problem)|not applicable|n/a|by design|(this is )?intended|intentional|works as (intended|designed)|working as (intended|designed)|as (intended|designed)|please ignore|ignore|ignoring|not relevant|irrelevant)`)
	// neutralTail may follow a phrase without a separator: it narrows, it
	// does not argue ("won't fix for now", "ignore this one").
	neutralTail = regexp.MustCompile(`^(here|there|this|this one|that|that one|it|please|pls|for now|in this case|this time|for this one|on this one|in this file|imo|tbh)$`)
	// takesBack in the reason after a phrase says the opposite of it:
	// "FP: fixed in the next shelve", "not a bug in ours but …; fixing anyway".
	takesBack   = regexp.MustCompile(`\b(fix|fixed|fixes|fixing|will fix|real (bug|issue|problem)|is real|it's real|anyway|but|however|though|good catch|you're right|confirm|not sure|unsure|maybe|i think it is)\b|^(no|nope|yes)\b`)
	dislikeLine = regexp.MustCompile(`^((👎[\x{1F3FB}-\x{1F3FF}\x{FE0F}]*|:-1:|:thumbsdown:)|-1[\s.!]*$)`)
	// retractLine: a concession, after any interjections.
	retractLine = regexp.MustCompile(`^((actually|yeah|yes|yep|ok|okay|oh|ah|hmm|oops|sorry|right|well|edit|update)[\s,.!:—–-]+)*(you'?re right|you are right|you're correct|you are correct|my (mistake|bad)|never ?mind|i stand corrected|retract(ed|ing)?|scratch that|fair enough|good catch|my apologies|i was wrong|on second thought|(disregard|ignore) my (earlier|previous|last|first) (comment|reply|note)|(it is|it's|this is|that is|that's) (a )?real|it is valid|it's valid)\b`)
	leadMention = regexp.MustCompile(`^(@[\w.\-]+[\s,:;]*)+`)
	struck      = regexp.MustCompile(`~~[^~]*~~`)
	// separator after a phrase: what starts its reason.
	separator = regexp.MustCompile(`^\s*([.!,:;)(]|—|–|\s-\s|\s-$)`)
)

// ReadReply reads one reply's body by the grammar: its first meaningful
// line (meaningful) decides. A question is never a dismissal.
func ReadReply(body string) Reaction {
	line := meaningful(body)
	switch {
	case line == "":
		return Says
	case dislikeLine.MatchString(line):
		return Dislikes
	case retractLine.MatchString(line):
		return Retracts
	case dismisses(line):
		return Dismisses
	}
	return Says
}

// dismisses: line is a dismissal phrase, whole, or followed by a neutral
// tail, or by a separator and a reason that does not take it back; never
// a question.
func dismisses(line string) bool {
	m := dismissPhrase.FindString(line)
	if m == "" || strings.HasSuffix(strings.TrimRight(line, " .!)"), "?") {
		return false
	}
	rest := line[len(m):]
	trimmed := strings.Trim(rest, " .!")
	switch {
	case trimmed == "":
		return true
	case strings.HasPrefix(strings.TrimSpace(rest), "?"):
		return false // "FP?", "by design? no: …"
	case neutralTail.MatchString(trimmed):
		return true
	case !separator.MatchString(rest):
		return false // the phrase starts a sentence that goes on: "not a bug in our code but …", "ignore my earlier comment"
	}
	return !takesBack.MatchString(strings.TrimLeft(rest, " .!,:;)(—–-"))
}

// meaningful is a reply's first line that says something: blank, quoted ("> …")
// and mention-only lines skipped; struck text (~~…~~) dropped; leading mentions
// and emphasis stripped; apostrophes plain; lower-cased, spaces collapsed.
func meaningful(body string) string {
	for line := range strings.SplitSeq(body, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, ">") {
			continue
		}
		line = strings.TrimSpace(struck.ReplaceAllString(line, ""))
		line = strings.TrimSpace(leadMention.ReplaceAllString(line, ""))
		line = unemphasise(line)
		if line == "" {
			continue
		}
		line = strings.NewReplacer("\u2019", "'", "\u2018", "'").Replace(line)
		return strings.Join(strings.Fields(strings.ToLower(line)), " ")
	}
	return ""
}

// unemphasise strips Markdown emphasis a reader does not read: leading
// and trailing runs of * and _, and emphasis closed inside the line
// ("**wontfix**, the API wants it").
func unemphasise(line string) string {
	line = strings.TrimLeft(line, "*_ ")
	line = strings.ReplaceAll(line, "**", "")
	line = strings.ReplaceAll(line, "__", "")
	if strings.HasPrefix(line, "_") || strings.Contains(line, "_ ") || strings.HasSuffix(line, "_") {
		line = strings.ReplaceAll(strings.ReplaceAll(line, "_ ", " "), "_,", ",")
	}
	return strings.TrimSpace(strings.TrimRight(line, "*_ "))
}
