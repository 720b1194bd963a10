package reconcile

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/letter"
	"github.com/criticizer/criticizer/shared/notify"
	"github.com/criticizer/criticizer/shared/obs"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
)

// Rules ID-3 and OB-3: a send left in doubt a year ago, whose row the data
// scrub has since stripped of the address, is still settled by the e-mail's
// own lookup. The reconciler names the message by the row's stored keyed
// token, which is the Message-ID the composed e-mail carried, so the
// provider's record of it marks the row sent and a resend stays refused.
func TestScrubbedDoubtfulSendSettledByItsMessageID(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	key, err := delivery.NewSecret("a-delivery-key-of-at-least-32-bytes!")
	if err != nil {
		t.Fatal(err)
	}
	d := dynamotest.New()
	rows := outbox.New(d, dynamotest.Table).WithSecret(key)
	k := delivery.Key{Changelist: 77, Recipient: "dana@example.com", ReviewVersion: 1}
	msg, err := notify.Compose(k, letter.Content{JobID: "job-1"}, notify.Envelope{From: "Criticizer <criticizer@example.com>", Secret: key, Date: now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rows.Begin(ctx, outbox.Email(k), "job-1", now.Add(-360*24*time.Hour)); err != nil {
		t.Fatal(err) // sent, and the process died before marking it
	}
	scan, err := d.Scan(ctx, &dynamodb.ScanInput{TableName: new(string)})
	if err != nil {
		t.Fatal(err)
	}
	scrub := rows.Scrubber(now.Add(-30*24*time.Hour), now)
	for _, item := range scan.Items {
		if scrub.Match(item) {
			if err := scrub.Visit(ctx, item); err != nil {
				t.Fatal(err)
			}
		}
	}
	r := &Reconciler{Rows: rows, Evidence: fakeEvidence{msg.MessageID: true}, FromDomain: "example.com", Window: time.Minute, Lookback: time.Hour,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: obs.NewMetrics(io.Discard, "test"), Now: func() time.Time { return now }}
	rep, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Backfilled != 1 {
		t.Fatalf("report %+v: want the doubtful send settled by the provider's record of %s", rep, msg.MessageID)
	}
	row, err := rows.Get(ctx, outbox.Email(k))
	if err != nil || row.Status != outbox.Sent || row.Recipient != "" {
		t.Fatalf("row %+v, %v: want sent, without the address", row, err)
	}
	if _, err := rows.Begin(ctx, outbox.Email(k), "job-2", now); !errors.Is(err, outbox.ErrAlreadySent) {
		t.Errorf("resend after settling: %v, want ErrAlreadySent", err)
	}
}
