package swarm

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

func TestGetCallouts(t *testing.T) {
	got := GetCallouts("cc @alice, (@*bob) \"@@leads\" @@*ops. @@!one @!nope x@y `@*code` **@emph** ＠wide @first.last! @*a-b @alice")
	want := Callouts{Plain: []string{"alice", "leads", "first.last"}, Starred: []string{"bob", "ops", "a-b"}, RequireOne: []string{"one"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("GetCallouts = %+v\nwant %+v", got, want)
	}
}

// A comment's callouts change the review as Swarm's CommentListener does,
// on create and on edit, and the reviews API answer lists the change;
// full-width look-alikes change nothing; the comment's author joins it
// (CommentListener adds every commenter).
func TestCommentCalloutsChangeTheReview(t *testing.T) {
	s, c := startComments(t)
	s.AddUsers("alice", "mallory")
	s.AddGroup(Group{ID: "leads"})
	s.AddGroup(Group{ID: "ops"})
	participants := func() map[string]any {
		t.Helper()
		r := c.do("GET", "/api/v9/reviews/885", "criticizer", "t1", nil)
		return r.doc["review"].(map[string]any)["participants"].(map[string]any)
	}
	if r := c.do("POST", "/api/v9/comments", "criticizer", "t1", form("topic", "reviews/885", "body", "＠alice ＠*mallory ＠＠*leads\n\n~~~\n＠*x\n~~~")); r.status != 200 {
		t.Fatalf("create: %d", r.status)
	}
	if got, _ := json.Marshal(participants()); string(got) != `{"bob":[],"criticizer":[]}` {
		t.Fatalf("look-alikes changed the participants, or the commenter did not join: %s", got)
	}
	r := c.do("POST", "/api/v9/comments", "criticizer", "t1", form("topic", "reviews/885", "body", "see\n\n```\n@*mallory\n```\ncc (@alice)"))
	if r.status != 200 {
		t.Fatalf("create: %d", r.status)
	}
	want := `{"alice":[],"bob":[],"criticizer":[],"mallory":{"required":true}}`
	if got, _ := json.Marshal(participants()); string(got) != want {
		t.Errorf("after create: participants %s, want %s", got, want)
	}
	id := r.doc["comment"].(map[string]any)["id"]
	if r := c.do("PATCH", fmt.Sprint("/api/v9/comments/", id), "criticizer", "t1", form("body", "now @@*leads and @@!ops")); r.status != 200 {
		t.Fatalf("edit: %d", r.status)
	}
	want = `{"alice":[],"bob":[],"criticizer":[],"mallory":{"required":true},"swarm-group-leads":{"required":true},"swarm-group-ops":{"required":"1"}}`
	if got, _ := json.Marshal(participants()); string(got) != want {
		t.Errorf("after edit: participants %s, want %s", got, want)
	}
	if p := s.Participants(885); len(p) != 6 || p[3] != (Participant{ID: "mallory", Required: "true"}) {
		t.Errorf("Participants = %+v", p)
	}
}

// A name counts only as the user or group Swarm knows it for: with no
// accounts, a callout changes nothing.
func TestCalloutsNeedKnownAccounts(t *testing.T) {
	s := NewServer(Options{})
	s.AddReview(Review{ID: 1, Author: "bob"})
	call := func() []Participant {
		s.mu.Lock()
		s.applyCallouts(1, "@alice @*nobody @*leads @ghost @@!leads")
		s.mu.Unlock()
		return s.Participants(1)
	}
	if got, want := call(), []Participant{{ID: "bob"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("no accounts: Participants = %+v, want %+v", got, want)
	}
	s.AddUsers("alice")
	s.AddGroup(Group{ID: "leads"})
	want := []Participant{{ID: "alice"}, {ID: "bob"}, {ID: "swarm-group-leads", Required: "1"}}
	if got := call(); !reflect.DeepEqual(got, want) {
		t.Errorf("Participants = %+v, want %+v", got, want)
	}
}
