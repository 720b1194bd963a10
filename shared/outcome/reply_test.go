package outcome

import "testing"

// The reply corpus: replies written the way people answer a review
// comment on a studio's P4 Code Review, each with what a reader takes it
// to say (docs/swarm-comments.md "Reactions", the grammar). A dismissal is
// a first meaningful line that IS the phrase; a sentence that starts with
// one and says the opposite, a question, struck-through text and quotes
// are not.
func TestReplyCorpus(t *testing.T) {
	corpus := []struct {
		body string
		want Reaction
	}{
		// Dismissals: the phrase, alone or with a reason that keeps it.
		{"False positive", Dismisses},
		{"false positive.", Dismisses},
		{"False-positive", Dismisses},
		{"FP", Dismisses},
		{"fp.", Dismisses},
		{"Not a bug", Dismisses},
		{"not a bug!", Dismisses},
		{"Not an issue here", Dismisses},
		{"Won't fix", Dismisses},
		{"won’t fix", Dismisses},
		{"Won't fix for now", Dismisses},
		{"wontfix", Dismisses},
		{"**wontfix**", Dismisses},
		{"_False positive_", Dismisses},
		{"__Not a bug__", Dismisses},
		{"*By design*", Dismisses},
		{"By design.", Dismisses},
		{"Works as intended", Dismisses},
		{"Ignore", Dismisses},
		{"ignore this one", Dismisses},
		{"Please ignore", Dismisses},
		{"False positive: the lock is held by the caller", Dismisses},
		{"False positive, `len` is checked two lines up.", Dismisses},
		{"Not a bug - the buffer is sized by the allocator", Dismisses},
		{"Won't fix — legacy code, scheduled for removal", Dismisses},
		{"By design (the cache is per-thread)", Dismisses},
		{"@criticizer false positive", Dismisses},
		{"@alice @bob: not a bug", Dismisses},
		{"@criticizer\nFalse positive", Dismisses},
		{"> **Possible null dereference** of `conn`\n\nFalse positive, conn is never null here", Dismisses},
		{"> quoted\n>\n> more quote\n\nwon't fix", Dismisses},
		{"\n\n  Not applicable  \n", Dismisses},
		{"Intentional", Dismisses},
		// Sentences that start like a dismissal and go on to say otherwise.
		{"Ignore my earlier comment: this is a real bug, fixing it now", Retracts},
		{"Not a bug in our code but in the vendored lib; fixing anyway", Says},
		{"By design? No: this leaks the session token", Says},
		{"FP: fixed in the next shelve", Says},
		{"False positive? No, it's real", Says},
		{"Not a bug, but I'll fix it anyway", Says},
		{"Won't fix in this change but will fix in the follow-up", Says},
		{"ignore the formatting, the logic is wrong", Says},
		{"Not applicable to the release branch, but real here", Says},
		{"FPGA code, the register write is required", Says},
		{"False positives like this one are why I read the code: this one is real", Says},
		// Questions are not dismissals.
		{"FP?", Says},
		{"false positive? @lead can you confirm", Says},
		{"Is this a false positive?", Says},
		{"By design?", Says},
		{"not a bug?", Says},
		{"Won't fix, right?", Says},
		// Struck-through text is withdrawn.
		{"~~False positive~~ Edit: it is real", Retracts},
		{"~~Not a bug~~ actually it is, fixing", Says},
		{"~~won't fix~~", Says},
		// Arguments, thanks and the phrase later in the reply.
		{"Fixed, it was not a false positive", Says},
		{"Good point, thanks", Says},
		{"Why? This looks right to me.", Says},
		{"This is fine I think, but let me check with the network team", Says},
		{"Done.", Says},
		{"", Says},
		{"> false positive\n", Says},
		{"@lead", Says},
		// Our dislike convention.
		{"👎", Dislikes},
		{"👎🏽 noise", Dislikes},
		{":-1:", Dislikes},
		{"-1", Dislikes},
		{" -1 ", Dislikes},
		{"-1 because the range check is upstream", Says},
		// Retractions, in their common forms.
		{"Actually you're right", Retracts},
		{"actually, you are right — fixing", Retracts},
		{"Yeah, you're right — the caller can pass null", Retracts},
		{"Fair enough, my mistake", Retracts},
		{"My bad, it is a bug", Retracts},
		{"Never mind, it's real", Retracts},
		{"nevermind", Retracts},
		{"Scratch that, it's a real issue", Retracts},
		{"I stand corrected", Retracts},
		{"Oops, good catch", Retracts},
		{"On second thought this is real", Retracts},
		{"@criticizer sorry, you're right", Retracts},
		{"Disregard my previous reply", Retracts},
	}
	if len(corpus) < 60 {
		t.Fatalf("the corpus has %d replies; it pins the grammar with at least 60", len(corpus))
	}
	for _, c := range corpus {
		if got := ReadReply(c.body); got != c.want {
			t.Errorf("ReadReply(%q) = %s, want %s (first meaningful line %q)", c.body, got, c.want, meaningful(c.body))
		}
	}
}

func (r Reaction) String() string {
	return [...]string{"says", "dismisses", "dislikes", "retracts"}[r]
}
