//go:build integration

package integration

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	swarmstandin "github.com/criticizer/criticizer/internal/standin/swarm"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/swarm"
)

// TestReviewerOutcomesFromWebhooks is issue 32's acceptance for P4 Code
// Review's webhooks, beside TestReviewerOutcomesAcceptance (the comments
// API): the findings of a review's version 1 are addressed, disliked and
// replied to in the Swarm stand-in, which sends a signed webhook per
// reaction to the deployed POST /webhooks/swarm-events. Forged deliveries
// are refused (401) and record nothing; the real ones, each sent twice
// under one delivery id (a retry), record each fate once; the sweeper's
// read, twice, then finds nothing left to write.
func TestReviewerOutcomesFromWebhooks(t *testing.T) {
	ctx := context.Background()
	dir := fmt.Sprintf("//depot/libs/events%d/", time.Now().UnixNano()%1e6)
	const shell = "import subprocess\n\ndef run(cmd):\n    subprocess.call(cmd, shell=True)\n"
	cl := reviewVersionChange(t, map[string]string{dir + "copy.c": copyV1, dir + "log.c": logC, dir + "a.py": shell, dir + "b.py": shell})
	review := cl + 1
	runVersion(t, review, cl, 1)
	table := env.out["JobsTableName"]
	st := outcome.NewStore(env.ddb, table)
	t.Cleanup(func() { _ = st.Allow(ctx, "//depot/libs/...", "security", "standin.shell") })

	byFile := map[string]swarmstandin.Comment{}
	for _, c := range ourComments(t, review) {
		if c.Context != nil {
			byFile[strings.TrimPrefix(c.Context.File, dir)] = c
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"copy.c", "log.c", "a.py", "b.py"} {
		if _, ok := byFile[f]; !ok {
			t.Fatalf("version 1: no comment on %s (%v)", f, byFile)
		}
	}
	must(env.local.Swarm.Address(byFile["copy.c"].ID))
	_, err := env.local.Swarm.Dislike(byFile["a.py"].ID, "alice")
	must(err)
	_, err = env.local.Swarm.Reply(byFile["b.py"].ID, "alice", "False positive: cmd is a constant here.", true)
	must(err)

	fates := func() map[string]outcome.Fate {
		t.Helper()
		recs, err := st.Review(ctx, review)
		must(err)
		out := map[string]outcome.Fate{}
		for _, r := range recs {
			out[strings.TrimPrefix(r.File, dir)] = r.Fate
		}
		return out
	}
	allOpen := map[string]outcome.Fate{"copy.c": outcome.Open, "log.c": outcome.Open, "a.py": outcome.Open, "b.py": outcome.Open}
	if got := fates(); fmt.Sprint(got) != fmt.Sprint(allOpen) {
		t.Fatalf("before any delivery: %v, want every finding open", got)
	}

	// Forged: signed with another key. Refused, nothing recorded, and the
	// deliveries stay queued, as a sender retries them.
	forged := env.local.Swarm.DeliverEvents(ctx, swarmstandin.DeliverOptions{Key: []byte("not-the-shared-secret"), Review: review})
	if len(forged) != 3 {
		t.Fatalf("forged: %d deliveries, want 3 (one per reaction): %+v", len(forged), forged)
	}
	for _, a := range forged {
		if a.Status != http.StatusUnauthorized || !strings.Contains(a.Body, "invalid_signature") {
			t.Errorf("forged delivery %s: %d %s, want 401 invalid_signature", a.ID, a.Status, a.Body)
		}
	}
	if got := fates(); fmt.Sprint(got) != fmt.Sprint(allOpen) {
		t.Fatalf("a forged delivery recorded something: %v", got)
	}

	// Signed, each sent twice under its delivery id.
	sent := env.local.Swarm.DeliverEvents(ctx, swarmstandin.DeliverOptions{SendTwice: true, Review: review})
	if len(sent) != 6 {
		t.Fatalf("signed: %d attempts, want 6 (3 deliveries, each retried once): %+v", len(sent), sent)
	}
	// An event only points: the first delivery reads the review back from
	// Swarm and records every reaction it shows; the others find them
	// recorded (unchanged); each retry is a duplicate.
	recorded := 0
	for i := 0; i < len(sent); i += 2 {
		first, retry := sent[i], sent[i+1]
		if strings.Contains(first.Body, `"recorded"`) {
			recorded++
		}
		if first.ID != retry.ID || first.Status != http.StatusOK || !strings.Contains(first.Body, `"recorded"`) && !strings.Contains(first.Body, `"unchanged"`) ||
			retry.Status != http.StatusOK || !strings.Contains(retry.Body, `"duplicate"`) {
			t.Errorf("delivery %s: %d %s, then %d %s; want recorded or unchanged, then duplicate", first.ID, first.Status, first.Body, retry.Status, retry.Body)
		}
	}
	if recorded != 1 {
		t.Errorf("%d deliveries recorded: want the first alone, which read the review back", recorded)
	}
	want := map[string]outcome.Fate{"copy.c": outcome.Addressed, "log.c": outcome.Open, "a.py": outcome.Disliked, "b.py": outcome.Dismissed}
	if got := fates(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after the webhooks: %v, want %v", got, want)
	}

	// The sweeper's read of this review, twice: the same fates, nothing
	// left to write.
	client := &swarm.Client{BaseURL: env.local.Swarm.URL(), Credentials: func(context.Context, bool) (swarm.Credentials, error) {
		return swarm.Credentials{User: "criticizer", Ticket: env.local.Secrets["Swarm API ticket"]}, nil
	}}
	reader := &outcome.Reader{Store: st, Rows: env.outbox, Comments: client}
	for i := 1; i <= 2; i++ {
		tally, err := reader.Read(ctx, review, nil)
		must(err)
		if tally.Read != 4 || tally.FatesChanged != 0 {
			t.Errorf("sweeper read %d: %+v, want 4 read and nothing written", i, tally)
		}
	}
	if got := fates(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after the sweeper: %v, want %v", got, want)
	}
	// The tally under //depot/libs/... counted each dismissal once.
	ts, err := st.Tallies(ctx, "//depot/libs/...")
	must(err)
	for _, s := range ts {
		if s.Kind == "standin.shell" && s.Dismissed != 2 {
			t.Errorf("standin.shell under //depot/libs/...: %d dismissals, want 2 (a.py disliked, b.py dismissed)", s.Dismissed)
		}
	}
}
