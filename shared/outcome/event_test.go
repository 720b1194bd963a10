package outcome_test

import (
	"context"
	"testing"

	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
	"github.com/criticizer/criticizer/shared/swarm"
)

// An event shows one comment: ours after a like, a task move or an
// archive, or a reply naming ours.
func TestEventFate(t *testing.T) {
	cases := []struct {
		name  string
		c     swarm.Comment
		fate  outcome.Fate
		about int64
	}{
		{"addressed", swarm.Comment{ID: 5, User: "svc", TaskState: swarm.TaskAddressed}, outcome.Addressed, 5},
		{"verified", swarm.Comment{ID: 5, User: "svc", TaskState: swarm.TaskVerified}, outcome.Verified, 5},
		{"liked by a person", swarm.Comment{ID: 5, User: "svc", Likes: []string{"alice"}}, outcome.Liked, 5},
		{"liked by ourselves", swarm.Comment{ID: 5, User: "svc", Likes: []string{"svc"}}, outcome.Open, 5},
		{"archived", swarm.Comment{ID: 5, User: "svc", Flags: []string{"closed"}}, outcome.Archived, 5},
		{"thumbs-down reply", swarm.Comment{ID: 9, User: "alice", Body: "👎", ReplyTo: 5}, outcome.Disliked, 5},
		{"dismissing reply", swarm.Comment{ID: 9, User: "bob", Body: "won't fix\nlegacy", ReplyTo: 5}, outcome.Dismissed, 5},
		{"neutral reply", swarm.Comment{ID: 9, User: "bob", Body: "good catch", ReplyTo: 5}, outcome.Open, 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if fate, about := outcome.EventFate(tc.c); fate != tc.fate || about != tc.about {
				t.Errorf("EventFate = %s about %d, want %s about %d", fate, about, tc.fate, tc.about)
			}
		})
	}
}

// Events raise a fate and never lower it: a retried or older event
// ('addressed' after 'verified', a like after a dismissal) writes nothing;
// a comment that holds none of our findings is not found.
func TestRaiseNeverRegresses(t *testing.T) {
	ctx := context.Background()
	st := outcome.NewStore(dynamotest.New(), dynamotest.Table)
	for _, fp := range []string{"fpA", "fpB"} {
		if _, err := st.Posted(ctx, outcome.Record{Review: 7, Fingerprint: fp, Category: "bug", Kind: "k", File: "//depot/a/x.c"}); err != nil {
			t.Fatal(err)
		}
	}
	rd := &outcome.Reader{Store: st, Rows: rows{posted("fpA", 1), posted("fpB", 2)}}
	steps := []struct {
		comment      int64
		fate         outcome.Fate
		written, hit bool
	}{
		{1, outcome.Verified, true, true},
		{1, outcome.Addressed, false, true}, // out of order: verified stands
		{1, outcome.Verified, false, true},  // a replay
		{2, outcome.Dismissed, true, true},
		{2, outcome.Liked, false, true},
		{3, outcome.Addressed, false, false}, // not ours
	}
	for i, s := range steps {
		w, found, err := rd.Raise(ctx, 7, s.comment, s.fate)
		if err != nil || w != s.written || found != s.hit {
			t.Errorf("step %d (%d %s): written %v found %v err %v; want %v %v", i, s.comment, s.fate, w, found, err, s.written, s.hit)
		}
	}
	recs, err := st.Review(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]outcome.Fate{}
	for _, r := range recs {
		got[r.Fingerprint] = r.Fate
	}
	if got["fpA"] != outcome.Verified || got["fpB"] != outcome.Dismissed {
		t.Errorf("fates %v, want fpA verified, fpB dismissed", got)
	}
	ts, err := st.Tallies(ctx, outcome.Scope("//depot/a/x.c"))
	if err != nil || len(ts) != 1 || ts[0].Accepted != 1 || ts[0].Dismissed != 1 {
		t.Errorf("tally %+v %v: want one accepted, one dismissed", ts, err)
	}
}
