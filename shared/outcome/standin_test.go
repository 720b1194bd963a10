package outcome_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	swarmstandin "github.com/criticizer/criticizer/internal/standin/swarm"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/swarm"
)

// Reactions made in the Swarm stand-in, read back through the real client's
// listing (every page), give each finding its fate: the client parses
// likes, flags and context.comment as the stand-in shows them, and a reply
// without context.comment (the field is unverified) still counts.
func TestReactionsThroughTheClient(t *testing.T) {
	s := swarmstandin.NewServer(swarmstandin.Options{User: "criticizer", Ticket: "t1"})
	if _, err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	s.AddReview(swarmstandin.Review{ID: 885, Author: "bob", Change: 886, Version: 1})
	cl := &swarm.Client{BaseURL: s.URL(), HTTP: &http.Client{Timeout: 5 * time.Second},
		Credentials: func(context.Context, bool) (swarm.Credentials, error) {
			return swarm.Credentials{User: "criticizer", Ticket: "t1"}, nil
		}}
	ctx := context.Background()
	post := func(line int, task bool) int64 {
		t.Helper()
		c, err := cl.Create(ctx, swarm.NewComment{Review: 885, Body: "finding", Marker: swarm.FindingKey(885, "fp").Marker(), Task: task,
			Context: &swarm.CommentContext{File: "//depot/a.go", RightLine: line, Content: []string{"+x"}}})
		if err != nil {
			t.Fatal(err)
		}
		return c.ID
	}
	addressed, verified, liked, archived, disliked, replied, unlinked, untouched := post(1, true), post(2, true), post(3, false),
		post(4, false), post(5, false), post(6, false), post(7, false), post(8, true)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.Address(addressed))
	must(s.Verify(verified))
	must(s.Like(liked, "bob"))
	must(s.Archive(archived))
	_, err := s.Dislike(disliked, "bob")
	must(err)
	_, err = s.Reply(replied, "bob", "Won't fix: generated code", true)
	must(err)
	_, err = s.Reply(unlinked, "bob", "false positive", false)
	must(err)
	// Filler past one page: the reactions are read from every page.
	for range 120 {
		s.AddComment(swarmstandin.Comment{Topic: "reviews/885", Body: "chatter", User: "alice"})
	}
	all, err := cl.List(ctx, 885)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[int64]swarm.Comment{}
	for _, c := range all {
		byID[c.ID] = c
	}
	want := map[int64]outcome.Fate{addressed: outcome.Addressed, verified: outcome.Verified, liked: outcome.Liked, archived: outcome.Archived,
		disliked: outcome.Disliked, replied: outcome.Dismissed, unlinked: outcome.Open, untouched: outcome.Open}
	for id, w := range want {
		if got := outcome.Derive(byID[id], all, "criticizer", false).Fate; got != w {
			t.Errorf("comment %d: fate %s, want %s", id, got, w)
		}
	}
}
