package outcome

// The precedence of fates, stated once: every reader records through Decide and
// orders by Rank. What people did outranks what anyone said: verified, resolved,
// addressed or liked stays accepted whatever is replied; a dismissal counts only
// if never accepted and outranks archived, then withheld, then open.

// rank: higher replaces lower; Disliked ties Dismissed.
var rank = map[Fate]int{
	Unknown: 0, Open: 1, Withheld: 2, Archived: 3, Disliked: 4, Dismissed: 4,
	Liked: 5, Addressed: 6, Resolved: 7, Verified: 8,
}

// Rank orders fates; equal ranks do not replace each other.
func Rank(f Fate) int { return rank[f] }

// Verdict is one read of a comment: the fate now, who stands dismissing it
// (never us), and whether someone retracted a dismissal.
type Verdict struct {
	Fate      Fate
	By        []string
	Retracted bool
}

// Decide is the fate to record: the higher by Rank, so an acceptance never
// becomes a dismissal and a judgement is not undone by a reopened task or
// unliking — except that a retracted dismissal gives way to what the comment
// shows without it.
func Decide(recorded Fate, now Verdict) Fate {
	switch {
	case Rank(now.Fate) > Rank(recorded):
		return now.Fate
	case (recorded == Dismissed || recorded == Disliked) && now.Retracted && Rank(now.Fate) < Rank(Dismissed) && now.Fate != "":
		return now.Fate
	}
	return recorded
}
