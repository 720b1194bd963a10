package integration

import (
	"bytes"
	"context"
	"encoding/json"
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
		if _, err := env.outbox.Begin(ctx, k, j.ID, sentAt); err != nil {
			t.Fatal(err)
		}
		if err := env.outbox.MarkSent(ctx, k, "claimed-"+k.Recipient, sentAt); err != nil {
			t.Fatal(err)
		}
	}
	provenID := proven.MessageID("example.com")
	ev, _ := json.Marshal(map[string]any{"eventType": "Delivery", "mail": map[string]any{"messageId": "0100019a-int-0002",
		"timestamp": job.FormatTime(sentAt), "tags": map[string][]string{evidence.TagName: {evidence.Tag(provenID)}}}})
	if _, err := events.HandleSES(ctx, ev, env.quiet, nil); err != nil {
		t.Fatal(err)
	}

	var metrics bytes.Buffer
	// The pass runs as if the completion window had passed; only this
	// changelist's rows are looked at, since the table is shared.
	rows := onlyChangelist{env.outbox, cl}
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
	row, err := env.outbox.Get(ctx, unproven)
	if err != nil {
		t.Fatal(err)
	}
	if row.Status != outbox.Pending || row.NotifiedAt != "" || row.NotificationID != "" {
		t.Fatalf("erin's row %+v: want pending with the sent markers cleared", row)
	}

	// The requeued row is sent again by notify; if that send too leaves no
	// evidence, the next pass finds it reconciling and stops: no second requeue.
	if _, err := env.outbox.Begin(ctx, unproven, j.ID, sentAt); err != nil {
		t.Fatal(err)
	}
	if err := env.outbox.MarkSent(ctx, unproven, "claimed again", sentAt); err != nil {
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
	if _, err := env.outbox.Begin(ctx, unproven, j.ID, job.Now()); err == nil {
		t.Fatal("Begin succeeded on a reconciling row")
	}

	// The operator checked with the provider: not delivered. The row is
	// pending again for the next notify run.
	if err := env.outbox.Resolve(ctx, unproven, false, "", job.Now()); err != nil {
		t.Fatal(err)
	}
	if row, _ := env.outbox.Get(ctx, unproven); row.Status != outbox.Pending {
		t.Errorf("after the operator's resolution: %+v, want pending", row)
	}
}

// onlyChangelist narrows a reconciliation pass to one changelist's rows.
type onlyChangelist struct {
	*outbox.Outbox
	cl int64
}

func (o onlyChangelist) Suspects(ctx context.Context, stuckBefore, sentFrom, sentTo time.Time, verifySent bool, limit int) ([]outbox.Suspect, error) {
	all, err := o.Outbox.Suspects(ctx, stuckBefore, sentFrom, sentTo, verifySent, 1000)
	var mine []outbox.Suspect
	for _, s := range all {
		if s.Changelist == o.cl {
			mine = append(mine, s)
		}
	}
	return mine, err
}
