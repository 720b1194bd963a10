package outcome

// The precedence of fates, stated once: every reader (a full read of the
// review, the sweeper's pass, an event, the notify stage's read at a later
// version, the report and the digest) records a fate through Decide and
// orders fates by Rank. What people did outranks what anyone said: a
// finding verified, resolved by a later version, addressed or liked stays
// accepted whatever is replied after, and a dismissal counts only for a
// finding never accepted; a dismissal outranks an archive, which outranks
// a finding withheld (never posted again, not judged), which outranks open.

// rank is each fate's place: higher replaces lower. Disliked ranks with
// Dismissed (neither replaces the other); the accepted fates rank above
// every dismissive one.
var rank = map[Fate]int{
	Unknown: 0, Open: 1, Withheld: 2, Archived: 3, Disliked: 4, Dismissed: 4,
	Liked: 5, Addressed: 6, Resolved: 7, Verified: 8,
}

// Rank orders fates by the precedence; equal ranks do not replace each
// other, an unknown fate ranks lowest.
func Rank(f Fate) int { return rank[f] }

// Verdict is what one read of a finding's comment shows: the fate the
// precedence gives it now, who stands dismissing it (the logins whose
// last reply dismisses or dislikes it, our own never), and whether a
// person withdrew a dismissal of theirs (Retracts).
type Verdict struct {
	Fate      Fate
	By        []string
	Retracted bool
}

// Decide is the fate to record given the one recorded and what a read
// shows now: the higher by Rank, so a recorded acceptance is never turned
// into a dismissal and a judgement is not taken back by a reopened task,
// a withdrawn like or an unarchive; except that a dismissal its people
// withdrew (a retraction, whenever it is read) gives way to what the
// comment shows without it.
func Decide(recorded Fate, now Verdict) Fate {
	switch {
	case Rank(now.Fate) > Rank(recorded):
		return now.Fate
	case (recorded == Dismissed || recorded == Disliked) && now.Retracted && Rank(now.Fate) < Rank(Dismissed) && now.Fate != "":
		return now.Fate
	}
	return recorded
}
