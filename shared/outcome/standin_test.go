package outcome_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	swarmstandin "github.com/criticizer/criticizer/internal/standin/swarm"
	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
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

// Who may decide, as the real client reads Swarm (the stand-in in Swarm's
// shapes): the author, a participant group's members (as the review was
// when first fetched: a reply makes its author a participant, as Swarm
// does, and gives no say), the moderators of
// the review's project branch and the members of its moderators group
// with their subgroups, a configured decider group's members; not the
// moderators of a branch the review does not touch, not a non-member, not
// a member of a group nobody made a decider.
func TestDecidersAsSwarmListsThem(t *testing.T) {
	s := swarmstandin.NewServer(swarmstandin.Options{User: "criticizer", Ticket: "t1"})
	if _, err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	s.AddGroup(swarmstandin.Group{ID: "qa", Users: []string{"quinn"}})
	s.AddGroup(swarmstandin.Group{ID: "leads", Users: []string{"lee"}, Subgroups: []string{"seniors", "leads"}})
	s.AddGroup(swarmstandin.Group{ID: "seniors", Users: []string{"sam"}, Subgroups: []string{"leads"}})
	s.AddGroup(swarmstandin.Group{ID: "release", Users: []string{"rel"}})
	s.AddGroup(swarmstandin.Group{ID: "art", Users: []string{"artie"}})
	s.AddProject(swarmstandin.Project{ID: "game", Branches: []swarmstandin.Branch{
		{ID: "main", Moderators: []string{"mod"}, ModeratorGroups: []string{"leads", "gone"}},
		{ID: "dev", Moderators: []string{"devmod"}}}})
	s.AddReview(swarmstandin.Review{ID: 885, Author: "bob", Change: 886, Version: 1, Reviewers: []string{"swarm-group-qa"},
		Projects: map[string][]string{"game": {"main"}, "deleted": {"main"}}})
	cl := &swarm.Client{BaseURL: s.URL(), HTTP: &http.Client{Timeout: 5 * time.Second},
		Credentials: func(context.Context, bool) (swarm.Credentials, error) {
			return swarm.Credentials{User: "criticizer", Ticket: "t1"}, nil
		}}
	ctx := context.Background()
	people := []string{"bob", "quinn", "mod", "lee", "sam", "rel", "devmod", "artie", "eve", "lintbot"}
	st := outcome.NewStore(dynamotest.New(), dynamotest.Table)
	first, err := cl.GetReview(ctx, 885) // as the fetch stage records it
	if err != nil {
		t.Fatal(err)
	}
	if err := st.FirstFetched(ctx, first); err != nil {
		t.Fatal(err)
	}
	var posts rows
	for i, who := range people {
		c, err := cl.Create(ctx, swarm.NewComment{Review: 885, Body: "finding", Marker: swarm.FindingKey(885, who).Marker(), Context: &swarm.CommentContext{File: "//depot/a.go", RightLine: i + 1, Content: []string{"+x"}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Reply(c.ID, who, "false positive", true); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Posted(ctx, outcome.Record{Review: 885, Fingerprint: who, Category: "bug"}); err != nil {
			t.Fatal(err)
		}
		posts = append(posts, posted(who, c.ID))
	}
	pol := outcome.PolicyFromEnv(config.NewReaderFrom(map[string]string{"DISMISS_DECIDERS": "swarm-group-release", "DISMISS_BOT_LOGINS": "lintbot"}))
	rd := &outcome.Reader{Store: st, Rows: posts, Comments: cl, Reviews: cl, Policy: pol}
	if p := s.Participants(885); !slices.Contains(p, swarmstandin.Participant{ID: "eve"}) {
		t.Fatalf("eve replied and is not a participant (%v): Swarm makes every commenter one", p)
	}
	if _, err := rd.Read(ctx, 885, nil); err != nil {
		t.Fatal(err)
	}
	recs, err := st.Review(ctx, 885)
	if err != nil {
		t.Fatal(err)
	}
	stands := map[string]bool{"bob": true, "quinn": true, "mod": true, "lee": true, "sam": true, "rel": true}
	for _, r := range recs {
		if r.Fate != outcome.Dismissed {
			t.Errorf("%s's reply: fate %s, want dismissed (recorded whoever replied)", r.Fingerprint, r.Fate)
		}
		if got := len(r.By) == 1 && r.By[0] == r.Fingerprint; got != stands[r.Fingerprint] {
			t.Errorf("%s's dismissal counts: %v (by %v), want %v", r.Fingerprint, got, r.By, stands[r.Fingerprint])
		}
	}
}
