//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	swarmstandin "github.com/criticizer/criticizer/internal/standin/swarm"
	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/digest"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/swarm"
	"github.com/criticizer/criticizer/shared/weekly"
)

// waitCS holds one medium finding (the LLM stand-in's standin.task-result,
// reliability) on line 3, waitFixedCS is the file without it; keyCS holds
// one of the same kind graded critical (the stand-in's standin-severity
// mark) on line 3.
const (
	waitCS      = "class W\n{\n    int Get() { return Load().Result; }\n}\n"
	waitFixedCS = "class W\n{\n    async Task<int> Get() { return await Load(); }\n}\n"
	keyCS       = "class K\n{\n    int Key() { return LoadKey().Result; } // standin-severity: critical\n}\n"
)

// runReviewed is runVersion for a review whose author is bob, whose
// reviewer Swarm lists is carol, touching projects' branches, and returns
// the version's test run.
func runReviewed(t *testing.T, review, change int64, version int, projects map[string][]string) swarmstandin.Run {
	t.Helper()
	env.local.Swarm.AddReview(swarmstandin.Review{ID: review, Author: "bob", Reviewers: []string{"carol"}, Change: change, Version: version, Projects: projects})
	run := env.local.Swarm.StartRun(review, version)
	resp := swarmPost(t, change, run, "shelved")
	if resp.Status != http.StatusAccepted {
		t.Fatalf("version %d: Swarm's request: %d %s", version, resp.Status, resp.Body)
	}
	waitJob(t, resp.Decoded["job_id"].(string), untilSettled(), "succeeded", succeeded)
	return run
}

// TestReactionsOnlyDecidersWithhold is issue 38's acceptance, end to end
// with the environment's threshold and depth changed (DISMISS_THRESHOLD 2,
// DISMISS_SCOPE_DEPTH 2), a decider group (DISMISS_DECIDERS swarm-group-qa)
// and a gate (high): one non-participant's three "ignore" replies on three
// reviews, and a second's on another, withhold nothing, though replying
// made each a participant as Swarm makes every commenter one; the author on one review and a reviewer on
// another dismissing the medium kind withhold it at the next review, which
// names the kind, its scope and how to lift it, while a critical finding
// of that kind there is still posted and fails the gated run; under
// another scope, a moderator of the reviews' project branch and a member
// of the decider group withhold the kind, a non-member's dismissal
// counting for nothing;
// the finding withheld at version 1 of that review is recorded as
// withheld, and is not "resolved" when version 2 removes it; a finding
// addressed and then replied "ignore" stays accepted; and the digest,
// given the same settings, lists the suppression as notify applies it.
func TestReactionsOnlyDecidersWithhold(t *testing.T) {
	ctx := context.Background()
	vars := map[string]string{"DISMISS_THRESHOLD": "2", "DISMISS_SCOPE_DEPTH": "2", "SWARM_GATE_SEVERITY": "high", "DISMISS_DECIDERS": "swarm-group-qa"}
	setFunctionEnv(t, "LlmFunctionName", vars) // the llm stage decides what is withheld and the gate (shared/decide)
	setFunctionEnv(t, "NotifyFunctionName", vars)
	dir := fmt.Sprintf("//depot/projectA/reactions%d/", time.Now().UnixNano()%1e6)
	scope := strings.TrimSuffix(dir, "/") + "/..."
	pol := outcome.PolicyFromEnv(config.NewReaderFrom(vars))
	if got := pol.Scope(dir + "wait.cs"); got != scope {
		t.Fatalf("scope %s, want %s", got, scope)
	}
	table := env.out["JobsTableName"]
	st := outcome.NewStore(env.ddb, table)
	client := &swarm.Client{BaseURL: env.local.Swarm.URL(), Credentials: func(context.Context, bool) (swarm.Credentials, error) {
		return swarm.Credentials{User: "criticizer", Ticket: env.local.Secrets["Swarm API ticket"]}, nil
	}}
	reader := &outcome.Reader{Store: st, Rows: env.outbox, Comments: client, Reviews: client, Policy: pol} // as the sweeper reads
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// lineOn is the comment holding review's wait.cs finding on line, if
	// posted (line 3: the medium one).
	lineOn := func(review int64, line int) (swarmstandin.Comment, bool) {
		for _, c := range ourComments(t, review) {
			if c.Context != nil && strings.HasSuffix(c.Context.File, "wait.cs") && c.Context.RightLine == line {
				return c, true
			}
		}
		return swarmstandin.Comment{}, false
	}
	mediumOn := func(review int64) (swarmstandin.Comment, bool) { return lineOn(review, 3) }
	fileOn := func(review int64, name string) (swarmstandin.Comment, bool) {
		for _, c := range ourComments(t, review) {
			if c.Context != nil && strings.HasSuffix(c.Context.File, name) {
				return c, true
			}
		}
		return swarmstandin.Comment{}, false
	}
	reviewIn := func(dir string, projects map[string][]string) int64 {
		t.Helper()
		rv := reviewNoCheck(t, dir, projects)
		if _, ok := mediumOn(rv); !ok {
			t.Fatalf("review %d: the medium finding was not posted", rv)
		}
		return rv
	}
	review := func() int64 { return reviewIn(dir, nil) }

	// mallory takes no part in any review: three "ignore"s withhold nothing.
	var reviews []int64
	for range 3 {
		rv := review()
		c, _ := mediumOn(rv)
		_, err := env.local.Swarm.Reply(c.ID, "mallory", "ignore", true)
		must(err)
		_, err = reader.Read(ctx, rv, nil)
		must(err)
		reviews = append(reviews, rv)
	}
	// dave, on none of them either, replies on the second: two people
	// across three reviews, both participants by now.
	d, _ := mediumOn(reviews[1])
	_, err := env.local.Swarm.Reply(d.ID, "dave", "ignore", true)
	must(err)
	_, err = reader.Read(ctx, reviews[1], nil)
	must(err)
	for _, who := range []string{"mallory", "dave"} {
		if p := env.local.Swarm.Participants(reviews[1]); !slices.Contains(p, swarmstandin.Participant{ID: who}) {
			t.Fatalf("%s replied and is not a participant (%+v): the stand-in must add commenters as Swarm does", who, p)
		}
	}
	for _, rv := range reviews[:2] {
		recs, err := st.Review(ctx, rv)
		must(err)
		if len(recs) != 1 || recs[0].Fate != outcome.Dismissed || len(recs[0].By) != 0 {
			t.Fatalf("review %d: %+v, want dismissed (a measurement) with nobody of standing", rv, recs)
		}
	}
	probe := review() // still posted
	_ = probe

	// The author (bob) on one review and the reviewer (carol) on another.
	c1, _ := mediumOn(reviews[0])
	_, err = env.local.Swarm.Reply(c1.ID, "bob", "Won't fix: legacy code, going away", true)
	must(err)
	c2, _ := mediumOn(reviews[1])
	_, err = env.local.Swarm.Reply(c2.ID, "carol", "**Not a bug**", true)
	must(err)
	for _, rv := range reviews[:2] {
		_, err := reader.Read(ctx, rv, nil)
		must(err)
	}

	// The next review: the medium finding of the kind withheld and named,
	// the critical one of the same kind posted and failing the gated run.
	cl := reviewVersionChange(t, map[string]string{dir + "wait.cs": waitCS, dir + "key.cs": keyCS})
	next := cl + 1
	run := runReviewed(t, next, cl, 1, nil)
	if c, ok := mediumOn(next); ok {
		t.Fatalf("the next review posted the withheld medium finding: %+v", c)
	}
	if c, ok := fileOn(next, "key.cs"); !ok || !strings.Contains(strings.ToLower(c.Body), "critical") || !strings.Contains(c.Body, "Blocking wait on a Task") {
		t.Errorf("the next review did not post the critical finding of the withheld kind (%v): %q", ok, c.Body)
	}
	var summary string
	for _, c := range ourComments(t, next) {
		if c.Context == nil {
			summary = c.Body
		}
	}
	if lift := "criticizer outcomes allow " + scope + " reliability standin.task-result"; !strings.Contains(summary, "1 finding withheld as repeatedly dismissed here") || !strings.Contains(summary, lift) {
		t.Errorf("the next review's summary does not name what it withheld and how to lift it (%q):\n%s", lift, summary)
	}
	awaitCalls(t, run, "fail", untilDeadLettered())
	withheld := func(when string) {
		t.Helper()
		recs, err := st.Review(ctx, next)
		must(err)
		n := 0
		for _, r := range recs {
			if r.Severity == "medium" {
				n++
				if r.Fate != outcome.Withheld {
					t.Errorf("%s: the withheld finding is recorded %s, want withheld", when, r.Fate)
				}
			}
		}
		if n != 1 {
			t.Errorf("%s: %d medium records, want the one withheld: %+v", when, n, recs)
		}
	}
	withheld("version 1")

	// Version 2 removes the medium line: still withheld, never resolved
	// (the critical one stays: a finding of the kind resolved is an
	// acceptance, which would lift the suppression).
	cl2 := reviewVersionChange(t, map[string]string{dir + "wait.cs": waitFixedCS, dir + "key.cs": keyCS})
	runReviewed(t, next, cl2, 2, nil)
	_, err = reader.Read(ctx, next, nil)
	must(err)
	withheld("version 2")

	// The digest lists the suppression as notify withheld it: under the
	// environment's depth, by its threshold and standing.
	setFunctionEnv(t, "DigestFunctionName", vars)
	week := weekly.WeekOf(time.Now())
	t.Cleanup(func() { forgetDigests(t, table, week.String()) })
	mailBefore := len(env.smtp.Messages())
	var rep digest.Report
	if err := json.Unmarshal(invoke(t, "DigestFunctionName", []byte(`{"week":"`+week.String()+`"}`)), &rep); err != nil {
		t.Fatal(err)
	}
	var text string
	for _, m := range env.smtp.Messages()[mailBefore:] {
		if strings.HasPrefix(m.MessageID, "<digest.") && strings.Join(m.To, ",") == "lead@example.com" {
			text = textPart(t, m.Raw)
		}
	}
	if !strings.Contains(text, scope) || !strings.Contains(text, "standin.task-result") {
		t.Errorf("the digest (%+v) does not list the kind notify withholds under %s:\n%s", rep, scope, text)
	}

	// Addressed, then "ignore" by its author: stays accepted.
	c, _ := mediumOn(probe)
	must(env.local.Swarm.Address(c.ID))
	_, err = env.local.Swarm.Reply(c.ID, "bob", "ignore", true)
	must(err)
	_, err = reader.Read(ctx, probe, nil)
	must(err)
	recs, err := st.Review(ctx, probe)
	must(err)
	if len(recs) != 1 || recs[0].Fate != outcome.Addressed {
		t.Errorf("addressed then replied ignore: %+v, want addressed", recs)
	}

	// Another scope, reviews on project game's main branch: mona moderates
	// it (Swarm lists her on the branch), quinn is in the decider group qa,
	// nora is not. nora's dismissal counts for nothing; quinn's and mona's
	// withhold the kind at the next review.
	dir2 := strings.TrimSuffix(dir, "/") + "b/"
	env.local.Swarm.AddGroup(swarmstandin.Group{ID: "qa", Users: []string{"quinn"}})
	env.local.Swarm.AddProject(swarmstandin.Project{ID: "game", Branches: []swarmstandin.Branch{
		{ID: "main", Name: "Main", Paths: []string{dir2 + "..."}, Moderators: []string{"mona"}}}})
	game := map[string][]string{"game": {"main"}}
	a, b := reviewIn(dir2, game), reviewIn(dir2, game)
	ca, _ := mediumOn(a)
	_, err = env.local.Swarm.Reply(ca.ID, "nora", "false positive", true)
	must(err)
	_, err = reader.Read(ctx, a, nil)
	must(err)
	if recs, err = st.Review(ctx, a); err != nil || len(recs) != 1 || recs[0].Fate != outcome.Dismissed || len(recs[0].By) != 0 {
		t.Fatalf("nora's (not in qa) dismissal: %+v, %v; want dismissed with nobody of standing", recs, err)
	}
	cb, _ := mediumOn(b)
	_, err = env.local.Swarm.Reply(cb.ID, "quinn", "false positive", true)
	must(err)
	_, err = env.local.Swarm.Reply(ca.ID, "mona", "Not a bug", true)
	must(err)
	for _, rv := range []int64{a, b} {
		_, err := reader.Read(ctx, rv, nil)
		must(err)
	}
	if c, ok := mediumOn(reviewNoCheck(t, dir2, game)); ok {
		t.Errorf("a moderator's and a decider group member's dismissals did not withhold the kind: posted %+v", c)
	}
}

// reviewNoCheck runs a new review of waitCS under dir and returns its id.
func reviewNoCheck(t *testing.T, dir string, projects map[string][]string) int64 {
	t.Helper()
	cl := reviewVersionChange(t, map[string]string{dir + "wait.cs": waitCS})
	runReviewed(t, cl+1, cl, 1, projects)
	return cl + 1
}
