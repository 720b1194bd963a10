package outcome_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
	"github.com/criticizer/criticizer/shared/swarm"
)

// sumMetrics adds up what FateMoved emits, per metric and dimension set.
type sumMetrics map[string]float64

func (m sumMetrics) Put(name string, v float64, _ string, dims map[string]string) {
	m[fmt.Sprint(name, dims)] += v
}

// A review's reactions in Swarm, moved one random event at a time.
type reactions struct {
	ours     map[int64]*swarm.Comment // by id; deleted ones removed
	replies  []swarm.Comment
	resolved []string
	next     int64
}

var (
	people  = []string{"alice", "bob", "carol", "criticizer"} // the last is us
	sayings = []string{"false positive", "@criticizer FP.", "> quoted\nWon't fix - legacy", "not a bug!", "👎", "-1",
		"actually you're right", "My mistake", "Why? looks right", "Good catch", "by design"}
	// Swarm's task-state transitions (reference "Review comments").
	moves = map[string][]string{swarm.TaskOpen: {swarm.TaskAddressed, "comment"}, "comment": {swarm.TaskOpen},
		swarm.TaskAddressed: {swarm.TaskVerified, swarm.TaskOpen}, swarm.TaskVerified: {swarm.TaskOpen}}
)

// step makes one random reaction and returns the comment it changed (for
// the webhook event), nil when none.
func (s *reactions) step(r *rand.Rand, fps map[int64]string) *swarm.Comment {
	ids := []int64{101, 102, 103, 104}
	id := ids[r.IntN(len(ids))]
	c, alive := s.ours[id]
	who := people[r.IntN(len(people))]
	switch k := r.IntN(9); {
	case k == 0 && alive:
		if !slices.Contains(c.Likes, who) {
			c.Likes = append(c.Likes, who)
		}
	case k == 1 && alive:
		c.Likes = slices.DeleteFunc(slices.Clone(c.Likes), func(u string) bool { return u == who })
	case k == 2 && alive:
		to := moves[c.TaskState]
		c.TaskState = to[r.IntN(len(to))]
	case k == 3 && alive:
		c.Flags = []string{"closed"}
	case k == 4 && alive:
		c.Flags = nil
	case k == 5 && r.IntN(4) == 0:
		delete(s.ours, id)
	case k == 6:
		s.resolved = append(s.resolved, fps[id])
	default:
		s.next++
		rep := swarm.Comment{ID: s.next, User: who, Body: sayings[r.IntN(len(sayings))], TaskState: "comment",
			Context: &swarm.CommentContext{File: "//depot/engine/net/a.cpp", RightLine: int(id), Version: 1 + r.IntN(2)}}
		switch r.IntN(4) {
		case 0, 1:
			rep.ReplyTo = id
		case 2:
			if n := len(s.replies); n > 0 { // an answer to a reply, in whichever thread that is
				rep.ReplyTo = s.replies[r.IntN(n)].ID
			}
		} // else linked only by file, line and version (context.comment unverified)
		if who == "criticizer" || r.IntN(8) == 0 { // ours carry our marker, under any login
			rep.Body = swarm.FindingKey(9, rep.Body).Marker().Sign(rep.Body)
		}
		s.replies = append(s.replies, rep)
		return &rep
	}
	if alive {
		cc := *c
		return &cc
	}
	return nil
}

func (s *reactions) all() []swarm.Comment {
	var out []swarm.Comment
	for _, c := range s.ours {
		out = append(out, *c)
	}
	return append(out, s.replies...)
}

// noAccounts is a Swarm with no projects and no groups: who has a say on
// the review is who was on it when first fetched.
type noAccounts struct{}

func (noAccounts) GetModerators(context.Context, string, []string) (swarm.Moderators, error) {
	return swarm.Moderators{}, nil
}

func (noAccounts) GetGroup(context.Context, string) (swarm.Group, bool, error) {
	return swarm.Group{}, false, nil
}

// For random interleavings of reactions and their webhook events (which
// only point: the review is read back), reading after every step: the fate
// on record is the one precedence (outcome.Decide) applied to every read
// so far; no recorded acceptance ever turns into anything else; a second
// read writes nothing; each kind's tally equals a recount of the records,
// its dismissals with standing are exactly the dismissive records with
// people who have a say (never carol, who has none, never us); and the
// emitted FindingAccepted and FindingJudged sum to the accepted and
// judged records.
func TestReactionsProperty(t *testing.T) {
	for seed := range uint64(60) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { interleave(t, seed) })
	}
}

func interleave(t *testing.T, seed uint64) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(seed, 32))
	m := sumMetrics{}
	st := outcome.NewStore(dynamotest.New(), dynamotest.Table).WithMetrics(m)
	const file = "//depot/engine/net/a.cpp"
	fps := map[int64]string{101: "f1", 102: "f2", 103: "f3", 104: "f4"}
	s := &reactions{ours: map[int64]*swarm.Comment{}, next: 200}
	var outRows rows
	for id, fp := range fps {
		s.ours[id] = &swarm.Comment{ID: id, User: "criticizer", TaskState: swarm.TaskOpen,
			Context: &swarm.CommentContext{File: file, RightLine: int(id), Version: 1}}
		kind := []string{"k-even", "k-odd"}[id%2]
		if _, err := st.Posted(ctx, outcome.Record{Review: 9, Fingerprint: fp, File: file, Scope: outcome.DefaultPolicy().Scope(file), Category: "bug", Kind: kind, PromptVersion: "1.2", Model: "m"}); err != nil {
			t.Fatal(err)
		}
		outRows = append(outRows, posted(fp, id))
	}
	if err := st.FirstFetched(ctx, swarm.Review{ID: 9, Author: "alice", Participants: []string{"alice", "bob"}}); err != nil {
		t.Fatal(err)
	}
	list := comments(nil)
	pol := outcome.DefaultPolicy()
	rd := &outcome.Reader{Store: st, Rows: outRows, Comments: &list, Reviews: noAccounts{}, Policy: pol}
	model, fpIDs := map[string]outcome.Fate{}, map[string]int64{}
	for id, fp := range fps {
		fpIDs[fp], model[fp] = id, outcome.Open
	}
	for i := range 80 {
		changed := s.step(r, fps)
		list = s.all()
		if changed != nil && r.IntN(2) == 0 { // the webhook's event, sometimes twice: it points, the review is read back
			for range 1 + r.IntN(2) {
				if _, _, err := rd.Point(ctx, 9); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, err := rd.Read(ctx, 9, s.resolved); err != nil {
			t.Fatal(err)
		}
		if again, err := rd.Read(ctx, 9, s.resolved); err != nil || again.FatesChanged != 0 {
			t.Fatalf("step %d: a second read changed %d fates (%v)", i, again.FatesChanged, err)
		}
		recs, err := st.Review(ctx, 9)
		if err != nil {
			t.Fatal(err)
		}
		for id, c := range s.ours { // the model: Decide over every read
			fp := fps[id]
			model[fp] = outcome.Decide(model[fp], outcome.Derive(*c, list, "criticizer", slices.Contains(s.resolved, fp) || model[fp] == outcome.Resolved))
		}
		for _, rec := range recs {
			if _, alive := s.ours[fpIDs[rec.Fingerprint]]; alive && rec.Fate != model[rec.Fingerprint] {
				t.Fatalf("step %d: %s recorded %s, the precedence gives %s", i, rec.Fingerprint, rec.Fate, model[rec.Fingerprint])
			}
			if was := model["was-"+rec.Fingerprint]; was.Accepted() && !rec.Fate.Accepted() {
				t.Fatalf("step %d: %s was accepted (%s) and is now %s", i, rec.Fingerprint, was, rec.Fate)
			}
			model["was-"+rec.Fingerprint] = rec.Fate
			for _, u := range rec.By {
				if u != "alice" && u != "bob" {
					t.Fatalf("step %d: %s counts %s's dismissal, who has no say", i, rec.Fingerprint, u)
				}
			}
		}
		checkTallies(t, st, recs, pol.Scope(file))
		checkMetrics(t, m, recs)
	}
}

func checkTallies(t *testing.T, st *outcome.Store, recs []outcome.Record, scope string) {
	t.Helper()
	want := map[string][2]int64{}
	for _, rec := range recs {
		n := want[rec.Kind]
		if rec.Fate.Accepted() {
			n[0]++
		}
		if rec.Fate.Dismissive() {
			n[1]++
		}
		want[rec.Kind] = n
	}
	got := map[string][2]int64{}
	ts, err := st.Tallies(context.Background(), scope)
	if err != nil {
		t.Fatal(err)
	}
	standing := map[string][]string{}
	for _, rec := range recs {
		if rec.Fate.Dismissive() && len(rec.By) > 0 {
			standing[rec.Kind] = append(standing[rec.Kind], rec.Fingerprint+":"+fmt.Sprint(rec.By))
		}
	}
	for _, s := range ts {
		got[s.Kind] = [2]int64{s.Accepted, s.Dismissed}
		var ds []string
		for _, d := range s.Dismissals {
			ds = append(ds, d.Fingerprint+":"+fmt.Sprint(d.By))
		}
		slices.Sort(ds)
		slices.Sort(standing[s.Kind])
		if !slices.Equal(ds, standing[s.Kind]) {
			t.Fatalf("dismissals with standing of %s are %v, records recount %v", s.Kind, ds, standing[s.Kind])
		}
	}
	for k, n := range want {
		if got[k] != n {
			t.Fatalf("tally of %s is %v, records recount %v", k, got[k], n)
		}
	}
}

func checkMetrics(t *testing.T, m sumMetrics, recs []outcome.Record) {
	t.Helper()
	var accepted, judged float64
	for _, rec := range recs {
		if rec.Fate.Accepted() {
			accepted++
		}
		if rec.Fate.Accepted() || rec.Fate.Dismissive() {
			judged++
		}
	}
	for _, dims := range []string{"map[]", "map[Model:m PromptVersion:1.2]"} {
		if a, j := m["FindingAccepted"+dims], m["FindingJudged"+dims]; a != accepted || j != judged {
			t.Fatalf("metrics %s: accepted %v judged %v, records give %v of %v", dims, a, j, accepted, judged)
		}
	}
}
