package outcome

import (
	"testing"

	"github.com/criticizer/criticizer/shared/swarm"
)

func TestDerive(t *testing.T) {
	at := &swarm.CommentContext{File: "//depot/a.go", RightLine: 10}
	ours := swarm.Comment{ID: 5, User: "criticizer", TaskState: swarm.TaskOpen, Context: at}
	with := func(f func(*swarm.Comment)) swarm.Comment { c := ours; f(&c); return c }
	reply := func(id, to int64, user, body string, ctx *swarm.CommentContext) swarm.Comment {
		return swarm.Comment{ID: id, User: user, Body: body, ReplyTo: to, Context: ctx}
	}
	cases := []struct {
		name     string
		ours     swarm.Comment
		others   []swarm.Comment
		resolved bool
		want     Fate
	}{
		{"untouched", ours, nil, false, Open},
		{"addressed", with(func(c *swarm.Comment) { c.TaskState = swarm.TaskAddressed }), nil, false, Addressed},
		{"verified", with(func(c *swarm.Comment) { c.TaskState = swarm.TaskVerified }), nil, false, Verified},
		{"resolved by a later version", ours, nil, true, Resolved},
		{"our rerun addressed it: resolved", with(func(c *swarm.Comment) { c.TaskState = swarm.TaskAddressed }), nil, true, Resolved},
		{"liked by a person", with(func(c *swarm.Comment) { c.Likes = []string{"alice"} }), nil, false, Liked},
		{"our own like is no signal", with(func(c *swarm.Comment) { c.Likes = []string{"criticizer"} }), nil, false, Open},
		{"archived untouched", with(func(c *swarm.Comment) { c.Flags = []string{"closed"} }), nil, false, Archived},
		{"archived after verified stays verified", with(func(c *swarm.Comment) { c.TaskState = swarm.TaskVerified; c.Flags = []string{"closed"} }), nil, false, Verified},
		{"reply by context.comment: false positive", ours, []swarm.Comment{reply(9, 5, "bob", "False positive: the lock is held by the caller", nil)}, false, Dismissed},
		{"reply won't fix", ours, []swarm.Comment{reply(9, 5, "bob", "won't fix", nil)}, false, Dismissed},
		{"thumbs-down reply is our dislike", ours, []swarm.Comment{reply(9, 5, "bob", "👎", nil)}, false, Disliked},
		{"-1 reply is our dislike", ours, []swarm.Comment{reply(9, 5, "bob", " -1 ", nil)}, false, Disliked},
		{"addressed outranks a dismissal: what people did outranks what anyone said", with(func(c *swarm.Comment) { c.TaskState = swarm.TaskAddressed }), []swarm.Comment{reply(9, 5, "bob", "false positive", nil)}, false, Addressed},
		{"liked outranks a dismissal", with(func(c *swarm.Comment) { c.Likes = []string{"alice"} }), []swarm.Comment{reply(9, 5, "bob", "ignore", nil)}, false, Liked},
		{"our second comment on the same line is not a reply, nor are its replies ours", ours, []swarm.Comment{
			{ID: 7, User: "criticizer", Body: "another finding\n\n[//]: # (criticizer:finding/885/x)", Context: at}, reply(9, 7, "bob", "false positive", at)}, false, Open},
		{"another bot's top-level comment at our line is not a reply", ours, []swarm.Comment{reply(9, 0, "lintbot", "FP precision: 0.93", at)}, false, Open},
		{"reply to another comment is not ours", ours, []swarm.Comment{reply(9, 4, "bob", "false positive", at)}, false, Open},
		{"no context.comment: a top-level comment at the same file and line is no reply", ours, []swarm.Comment{reply(9, 0, "bob", "false positive", &swarm.CommentContext{File: "//depot/a.go", RightLine: 10})}, false, Open},
		{"no context.comment: another line", ours, []swarm.Comment{reply(9, 0, "bob", "false positive", &swarm.CommentContext{File: "//depot/a.go", RightLine: 11})}, false, Open},
		{"no context.comment: before ours", ours, []swarm.Comment{reply(3, 0, "bob", "false positive", at)}, false, Open},
		{"an argument that is not the convention", ours, []swarm.Comment{reply(9, 5, "bob", "Why? This looks right to me.", nil)}, false, Open},
		{"the phrase later in the reply is not the convention", ours, []swarm.Comment{reply(9, 5, "bob", "Fixed, it was not a false positive", nil)}, false, Open},
		{"our own reply is no reaction", ours, []swarm.Comment{reply(9, 5, "criticizer", "false positive", nil)}, false, Open},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			all := append([]swarm.Comment{c.ours}, c.others...)
			if got := Derive(c.ours, all, "criticizer", c.resolved).Fate; got != c.want {
				t.Fatalf("fate = %s, want %s", got, c.want)
			}
		})
	}
}

func TestFateCounts(t *testing.T) {
	for _, f := range []Fate{Addressed, Verified, Resolved, Liked} {
		if !f.Accepted() || f.Dismissive() {
			t.Errorf("%s should count as accepted", f)
		}
	}
	for _, f := range []Fate{Disliked, Dismissed, Archived} {
		if f.Accepted() || !f.Dismissive() {
			t.Errorf("%s should count as dismissed", f)
		}
	}
	for _, f := range []Fate{Open, Withheld, Unknown} {
		if f.Accepted() || f.Dismissive() {
			t.Errorf("%s should count as neither", f)
		}
	}
}
