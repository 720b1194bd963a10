//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/evidence"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/obs"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/reconcile"
)

// A row marked sent with no provider evidence (the ordering contract broken:
// marked before, or without, a send) is found by the reconciler, moved to
// reconciling with the paging metric, blocks sends while it is, is cleared
// and requeued exactly once, and a second pass never requeues it again. A
// sent row SES has evidence of is only verified.
func TestSentWithoutEvidenceIsReconciledOnce(t *testing.T) {
	ctx := context.Background()
	cl := changeSeq.Add(1)
	table := env.out["JobsTableName"]
	events := evidence.New(env.ddb, table, 0)
	sentAt := job.Now()
	j := createJob(t, cl, []string{"erin@example.com", "frank@example.com"}) // queued: its notify stage runs again

	unproven := delivery.Key{Changelist: cl, Recipient: "erin@example.com", ReviewVersion: 1}
	proven := delivery.Key{Changelist: cl, Recipient: "frank@example.com", ReviewVersion: 1}
	for _, k := range []delivery.Key{unproven, proven} {
		if _, err := env.outbox.Begin(ctx, outbox.Email(k), j.ID, sentAt); err != nil {
			t.Fatal(err)
		}
		if err := env.outbox.MarkSent(ctx, outbox.Email(k), "claimed-"+k.Recipient, sentAt); err != nil {
			t.Fatal(err)
		}
	}
	provenID := messageID(proven, "example.com")
	ev, _ := json.Marshal(map[string]any{"eventType": "Delivery", "mail": map[string]any{"messageId": "0100019a-int-0002",
		"timestamp": job.FormatTime(sentAt), "tags": map[string][]string{evidence.TagName: {evidence.Tag(provenID)}}}})
	if _, err := events.HandleSES(ctx, ev, env.quiet, nil); err != nil {
		t.Fatal(err)
	}

	var metrics bytes.Buffer
	// The pass runs as if the completion window had passed; only this
	// changelist's rows are looked at, since the table is shared.
	rows := onlyChangelist(cl)
	r := &reconcile.Reconciler{Rows: rows, Evidence: events, Jobs: env.jobs, FromDomain: "example.com", Window: 15 * time.Minute, Lookback: time.Hour,
		Log: env.quiet, Metrics: obs.NewMetrics(&metrics, "test"), Now: func() time.Time { return sentAt.Add(16 * time.Minute) }}

	// First: both rows found; frank's verified; erin's moved to reconciling
	// and, with no record at SES, cleared and made pending once.
	rep, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verified != 1 || rep.Requeued != 1 || rep.Backfilled != 0 {
		t.Fatalf("first pass %+v: want frank verified and erin requeued", rep)
	}
	if !strings.Contains(metrics.String(), `"OutboxReconciling"`) {
		t.Errorf("no OutboxReconciling metric: %s", metrics.String())
	}
	row, err := env.outbox.Get(ctx, outbox.Email(unproven))
	if err != nil {
		t.Fatal(err)
	}
	if row.Status != outbox.Pending || row.NotifiedAt != "" || row.NotificationID != "" {
		t.Fatalf("erin's row %+v: want pending with the sent markers cleared", row)
	}

	// The requeued row is sent again by notify; if that send too leaves no
	// evidence, the next pass finds it reconciling and stops: no second requeue.
	if _, err := env.outbox.Begin(ctx, outbox.Email(unproven), j.ID, sentAt); err != nil {
		t.Fatal(err)
	}
	if err := env.outbox.MarkSent(ctx, outbox.Email(unproven), "claimed again", sentAt); err != nil {
		t.Fatal(err)
	}
	metrics.Reset()
	rep, err = r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requeued != 0 || rep.Reconciling != 1 {
		t.Fatalf("second pass %+v: want erin left reconciling for an operator, not requeued twice", rep)
	}
	if !strings.Contains(metrics.String(), `"OutboxReconciling":1`) {
		t.Errorf("OutboxReconciling not 1 while a row waits: %s", metrics.String())
	}
	// While reconciling, the notify stage cannot send to erin.
	if _, err := env.outbox.Begin(ctx, outbox.Email(unproven), j.ID, job.Now()); err == nil {
		t.Fatal("Begin succeeded on a reconciling row")
	}

	// The operator checked with the provider: not delivered. The row is
	// pending again for the next notify run.
	if err := env.outbox.Resolve(ctx, outbox.Email(unproven), false, "", job.Now()); err != nil {
		t.Fatal(err)
	}
	if row, _ := env.outbox.Get(ctx, outbox.Email(unproven)); row.Status != outbox.Pending {
		t.Errorf("after the operator's resolution: %+v, want pending", row)
	}
}

// onlyRows narrows a reconciliation pass to the rows keep picks: the table
// is shared with every other test.
type onlyRows struct {
	*outbox.Outbox
	keep func(outbox.Suspect) bool
}

func (o onlyRows) Suspects(ctx context.Context, stuckBefore, sentFrom, sentTo time.Time, verifySent bool, limit int) ([]outbox.Suspect, error) {
	all, err := o.Outbox.Suspects(ctx, stuckBefore, sentFrom, sentTo, verifySent, 0) // every suspect of the shared table: this test's are picked below
	var mine []outbox.Suspect
	for _, s := range all {
		if o.keep(s) {
			mine = append(mine, s)
		}
	}
	return mine, err
}

// onlyChangelist narrows a pass to one changelist's rows.
func onlyChangelist(cl int64) onlyRows {
	return onlyRows{env.outbox, func(s outbox.Suspect) bool { return s.Changelist == cl }}
}

// Rule OB-5 end to end for a job that already succeeded: a row marked sent
// while the provider has no record of its message is detected (the
// violation pages), requeued once, and its delivery attempted again by the
// deployed notify function under the row's existing key — same
// Message-ID — without reopening the job; the outcome is in the job's
// history, by the reconciler.
func TestSucceededJobsUnprovenRowIsRedelivered(t *testing.T) {
	ctx := context.Background()
	cl := newChange(t, 12345)
	resp := postWebhook(t, map[string]any{"changelist_id": cl, "review_version": 1, "idempotency_key": uniqueKey(t), "recipients": []string{"reviewers@example.com"}})
	if resp.Status != 202 {
		t.Fatalf("webhook: %d %s", resp.Status, resp.Body)
	}
	id := resp.Decoded["job_id"].(string)
	before := waitJob(t, id, untilSettled(), "succeeded", succeeded)
	first := waitMails(t, cl, 1, 2, time.Minute)
	var firstID string
	for _, m := range first {
		if slices.Contains(m.To, "reviewers@example.com") {
			firstID = m.MessageID
		}
	}

	var metrics bytes.Buffer
	now := time.Now().Add(2 * time.Minute) // the rows' completion window has passed
	r := &reconcile.Reconciler{Rows: onlyChangelist(cl), Evidence: onlyOne{"reviewers@example.com", cl}, Jobs: env.jobs, Redeliver: env.queues,
		FromDomain: "localhost", Window: time.Minute, Lookback: time.Hour, Log: env.quiet, Metrics: obs.NewMetrics(&metrics, "test"),
		Now: func() time.Time { return now }}
	rep, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Violations != 1 || rep.Redelivered != 1 || rep.Reconciling != 0 {
		t.Fatalf("pass %+v: want one violation, redelivered", rep)
	}
	if !strings.Contains(metrics.String(), `"OutboxViolations":1`) {
		t.Errorf("the repaired violation does not page: %s", metrics.String())
	}

	mails := waitMails(t, cl, 1, 3, time.Minute)
	again := mails[len(mails)-1]
	if !slices.Equal(again.To, []string{"reviewers@example.com"}) || again.MessageID != firstID {
		t.Errorf("redelivered message to %v id %s, want reviewers@example.com under the row's key (Message-ID %s)", again.To, again.MessageID, firstID)
	}
	after := waitJob(t, id, time.Minute, "redelivery recorded", func(j *job.Job) bool {
		return slices.ContainsFunc(j.History, func(e job.Event) bool { return e.Type == "operator_redelivered" && e.Actor == "reconciler" })
	})
	if after.State != job.Succeeded || after.StageRecord("notify").Attempts != before.StageRecord("notify").Attempts {
		t.Errorf("job %s, notify attempts %d → %d: a redelivery must not reopen the job", after.State, before.StageRecord("notify").Attempts, after.StageRecord("notify").Attempts)
	}
	row, err := env.outbox.Get(ctx, outbox.Email(delivery.Key{Changelist: cl, Recipient: "reviewers@example.com", ReviewVersion: 1}))
	if err != nil || row.Status != outbox.Sent || row.NotifiedAt == "" {
		t.Errorf("row %+v (%v): want sent again", row, err)
	}
}

// messageID is the Message-ID the deployed notify stage gives k's e-mail:
// its token is keyed by the stack's delivery key.
func messageID(k delivery.Key, domain string) string {
	return delivery.MessageIDOf(k.Changelist, k.ReviewVersion, env.deliveryKey.Token(k), domain)
}

// onlyOne is a delivery log with no record of one recipient's message of
// changelist cl, and a record of every other (so only that row is a
// violation in this pass).
type onlyOne struct {
	recipient string
	cl        int64
}

func (o onlyOne) Delivered(_ context.Context, id string) (bool, error) {
	return id != messageID(delivery.Key{Changelist: o.cl, Recipient: o.recipient, ReviewVersion: 1}, "localhost"), nil
}
