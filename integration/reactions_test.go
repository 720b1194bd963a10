//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	swarmstandin "github.com/criticizer/criticizer/internal/standin/swarm"
	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/digest"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/swarm"
)

// waitCS holds one medium finding (the LLM stand-in's standin.task-result,
// reliability); waitFixedCS is the same file without it.
const (
	waitCS      = "class W\n{\n    int Get() { return Load().Result; }\n}\n"
	waitFixedCS = "class W\n{\n    async Task<int> Get() { return await Load(); }\n}\n"
)

// runReviewed is runVersion for a review whose author is bob and whose
// reviewer Swarm lists is carol, and returns the version's test run.
func runReviewed(t *testing.T, review, change int64, version int) swarmstandin.Run {
	t.Helper()
	env.local.Swarm.AddReview(swarmstandin.Review{ID: review, Author: "bob", Reviewers: []string{"carol"}, Change: change, Version: version})
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
// DISMISS_SCOPE_DEPTH 2) and a gate (high): one non-participant's three
// "ignore" replies on three reviews withhold nothing; the author on one
// review and a reviewer on another dismissing the medium kind withhold it
// at the next review, which names the kind, its scope and how to lift it,
// while the high finding there is still posted and fails the gated run;
// the finding withheld at version 1 of that review is recorded as
// withheld, and is not "resolved" when version 2 removes it; a finding
// addressed and then replied "ignore" stays accepted; and the digest,
// given the same settings, lists the suppression as notify applies it.
func TestReactionsOnlyDecidersWithhold(t *testing.T) {
	ctx := context.Background()
	vars := map[string]string{"DISMISS_THRESHOLD": "2", "DISMISS_SCOPE_DEPTH": "2", "SWARM_GATE_SEVERITY": "high"}
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
	// mediumOn is the comment holding review's medium finding, if posted.
	mediumOn := func(review int64) (swarmstandin.Comment, bool) {
		for _, c := range ourComments(t, review) {
			if c.Context != nil && strings.HasSuffix(c.Context.File, "wait.cs") {
				return c, true
			}
		}
		return swarmstandin.Comment{}, false
	}
	review := func() int64 {
		t.Helper()
		cl := reviewVersionChange(t, map[string]string{dir + "wait.cs": waitCS})
		runReviewed(t, cl+1, cl, 1)
		if _, ok := mediumOn(cl + 1); !ok {
			t.Fatalf("review %d: the medium finding was not posted", cl+1)
		}
		return cl + 1
	}

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
	recs, err := st.Review(ctx, reviews[0])
	must(err)
	if len(recs) != 1 || recs[0].Fate != outcome.Dismissed || len(recs[0].By) != 0 {
		t.Fatalf("mallory's reply: %+v, want dismissed (a measurement) with nobody of standing", recs)
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

	// The next review: the medium kind withheld and named, the high
	// strcpy posted and failing the gated run.
	cl := reviewVersionChange(t, map[string]string{dir + "wait.cs": waitCS, dir + "copy.c": copyV1})
	next := cl + 1
	run := runReviewed(t, next, cl, 1)
	if c, ok := mediumOn(next); ok {
		t.Fatalf("the next review posted the withheld medium finding: %+v", c)
	}
	var summary string
	strcpy := false
	for _, c := range ourComments(t, next) {
		switch {
		case c.Context == nil:
			summary = c.Body
		case strings.Contains(c.Body, "Unbounded strcpy"):
			strcpy = true
		}
	}
	if !strcpy {
		t.Error("the next review did not post the high strcpy finding")
	}
	if lift := "criticizer outcomes allow " + scope + " reliability standin.task-result"; !strings.Contains(summary, "1 finding withheld as repeatedly dismissed here") || !strings.Contains(summary, lift) {
		t.Errorf("the next review's summary does not name what it withheld and how to lift it (%q):\n%s", lift, summary)
	}
	awaitCalls(t, run, "fail", untilDeadLettered())
	withheld := func(when string) {
		t.Helper()
		recs, err := st.Review(ctx, next)
		must(err)
		for _, r := range recs {
			if strings.HasSuffix(r.File, "wait.cs") && r.Fate != outcome.Withheld {
				t.Errorf("%s: the withheld finding is recorded %s, want withheld", when, r.Fate)
			}
		}
	}
	withheld("version 1")

	// Version 2 removes the medium line: still withheld, never resolved.
	cl2 := reviewVersionChange(t, map[string]string{dir + "wait.cs": waitFixedCS, dir + "copy.c": copyV1})
	runReviewed(t, next, cl2, 2)
	_, err = reader.Read(ctx, next, nil)
	must(err)
	withheld("version 2")

	// The digest lists the suppression as notify withheld it: under the
	// environment's depth, by its threshold and standing.
	setFunctionEnv(t, "DigestFunctionName", vars)
	week := digest.WeekOf(time.Now())
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
	recs, err = st.Review(ctx, probe)
	must(err)
	if len(recs) != 1 || recs[0].Fate != outcome.Addressed {
		t.Errorf("addressed then replied ignore: %+v, want addressed", recs)
	}
}
