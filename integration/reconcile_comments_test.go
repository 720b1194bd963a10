//go:build integration

package integration

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	swarmstandin "github.com/criticizer/criticizer/internal/standin/swarm"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/obs"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/reconcile"
	"github.com/criticizer/criticizer/shared/store"
	"github.com/criticizer/criticizer/shared/swarm"
)

// Swarm comment rows are reconciled like e-mail rows, against the Swarm
// stand-in over the emulator's table: a create stuck sending whose comment
// Swarm stored (past the first page of the review's comments) is backfilled
// with the comment's id; one Swarm never stored is pending again; a row
// marked sent with no comment is a violation, requeued once and then left
// reconciling. The operator CLI lists the rows by review and item, and
// settles one by its item.
func TestCommentRowsAreReconciled(t *testing.T) {
	ctx := context.Background()
	cl := changeSeq.Add(1)
	review := cl + 1
	env.local.Swarm.AddReview(swarmstandin.Review{ID: review, Author: "bob", Change: cl, Version: 1})
	topic := fmt.Sprint("reviews/", review)
	for i := range 120 { // more than one page (100) before the service's comment
		env.local.Swarm.AddComment(swarmstandin.Comment{Topic: topic, Body: fmt.Sprint("reviewer note ", i), User: "alice"})
	}
	j := job.New(uuid.NewString(), uniqueKey(t), cl, 1, job.Now(), time.Hour)
	j.TraceID, j.Swarm = "test", &job.SwarmRun{Review: review}
	if err := env.jobs.Create(ctx, j, &store.Idempotency{Key: j.IdempotencyKey, JobID: j.ID, RequestHash: "test", CreatedAt: j.CreatedAt}); err != nil {
		t.Fatal(err)
	}

	fpLanded, fpClaimed := strings.Repeat("a", 64), strings.Repeat("c", 64)
	item := func(id string) outbox.Item {
		return outbox.Item{Channel: outbox.ChannelSwarmComments, Thread: review, ID: id}
	}
	landed, lost, claimed := item("finding/"+fpLanded), item("summary/v1"), item("finding/"+fpClaimed)
	started := job.Now()
	for _, it := range []outbox.Item{landed, lost, claimed} {
		if _, err := env.outbox.Begin(ctx, it, j.ID, started); err != nil {
			t.Fatal(err)
		}
	}
	// The create of "landed" was stored, its answer lost; "claimed" was
	// marked sent with an id Swarm never gave.
	stored := env.local.Swarm.AddComment(swarmstandin.Comment{Topic: topic, User: "criticizer",
		Body: swarm.FindingKey(review, fpLanded).Marker().Sign("**HIGH** · security · SQL built from input")})
	if err := env.outbox.MarkSent(ctx, claimed, "424242", started); err != nil {
		t.Fatal(err)
	}

	client := &swarm.Client{BaseURL: env.local.Swarm.URL(), Credentials: func(context.Context, bool) (swarm.Credentials, error) {
		return swarm.Credentials{User: "criticizer", Ticket: env.local.Secrets["Swarm API ticket"]}, nil
	}}
	// The passes run as if the comment window had passed; only this
	// review's rows are looked at, since the table is shared.
	r := &reconcile.Reconciler{Rows: onlyThread(review), Comments: client, Jobs: env.jobs, FromDomain: "example.com",
		Window: 15 * time.Minute, CommentWindow: 2 * time.Minute, Lookback: time.Hour,
		Log: env.quiet, Metrics: obs.NewMetrics(io.Discard, "test"), Now: func() time.Time { return started.Add(3 * time.Minute) }}
	// settle runs one pass, as the sweeper's schedule does, and wants done
	// to hold for the review's rows after it: a pass sees every suspect.
	settle := func(what string, done func(map[string]outbox.Row) bool) reconcile.Report {
		t.Helper()
		rep, err := r.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if rows := threadRows(t, review); !done(rows) {
			t.Fatalf("%s: rows %+v not settled by the pass %+v", what, rows, rep)
		}
		return rep
	}
	sum := settle("first pass", func(rows map[string]outbox.Row) bool {
		return rows[landed.ID].Status == outbox.Sent && rows[lost.ID].Status == outbox.Pending && rows[claimed.ID].Status == outbox.Pending
	})
	if sum.Backfilled != 1 || sum.Requeued != 2 || sum.Violations != 3 || sum.Errors != 0 {
		t.Fatalf("first pass %+v: want landed backfilled, lost and claimed requeued, 3 violations", sum)
	}
	rows := threadRows(t, review)
	if r := rows[landed.ID]; r.NotificationID != strconv.FormatInt(stored.ID, 10) {
		t.Errorf("landed row %+v: want sent with comment id %d", r, stored.ID)
	}
	for _, it := range []outbox.Item{lost, claimed} {
		if r := rows[it.ID]; r.NotifiedAt != "" || r.NotificationID != "" {
			t.Errorf("%s row %+v: want pending with the sent markers cleared", it.ID, r)
		}
	}

	// "claimed" is marked sent without a comment again: reconciling, for an
	// operator, not requeued twice.
	if _, err := env.outbox.Begin(ctx, claimed, j.ID, started); err != nil {
		t.Fatal(err)
	}
	if err := env.outbox.MarkSent(ctx, claimed, "434343", started); err != nil {
		t.Fatal(err)
	}
	sum = settle("second pass", func(rows map[string]outbox.Row) bool { return rows[claimed.ID].Status == outbox.Reconciling })
	if sum.Requeued != 0 || sum.Violations != 1 || sum.Reconciling != 1 {
		t.Fatalf("second pass %+v: want claimed left reconciling, not requeued twice; its row and history: %+v", sum, threadRows(t, review)[claimed.ID])
	}

	// The operator sees the row by review and item, and the job's comments.
	list := criticizer(t, "outbox", "reconcile")
	if !lineWith(list, j.ID, fmt.Sprint("review ", review), claimed.ID, reconcile.ReasonUnproven) {
		t.Errorf("reconcile listing:\n%s\nwant a line naming review %d and %s", list, review, claimed.ID)
	}
	listing := criticizer(t, "outbox", j.ID)
	if !lineWith(listing, "finding", landed.ID, "sent", strconv.FormatInt(stored.ID, 10)) || !lineWith(listing, "summary", lost.ID, "pending") {
		t.Errorf("outbox listing:\n%s\nwant the job's comment rows", listing)
	}
	criticizer(t, "outbox", "reconcile", "resolve", j.ID, claimed.ID, "--not-delivered", "--note", "INC-9 not in the review")
	if r := threadRows(t, review)[claimed.ID]; r.Status != outbox.Pending {
		t.Errorf("after the operator's resolution: %+v, want pending", r)
	}
}

// onlyThread narrows a pass to one Swarm review's comment rows.
func onlyThread(review int64) onlyRows {
	return onlyRows{env.outbox, func(s outbox.Suspect) bool {
		return s.Channel == outbox.ChannelSwarmComments && s.Thread == review
	}}
}

// threadRows reads a review's comment rows by item.
func threadRows(t *testing.T, review int64) map[string]outbox.Row {
	t.Helper()
	rows, err := env.outbox.ListThread(context.Background(), outbox.ChannelSwarmComments, review)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]outbox.Row{}
	for _, r := range rows {
		out[r.Item] = r
	}
	return out
}

// lineWith reports whether one line of text holds every part.
func lineWith(text string, parts ...string) bool {
	for _, l := range strings.Split(text, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l, p)
		}
		if all {
			return true
		}
	}
	return false
}
