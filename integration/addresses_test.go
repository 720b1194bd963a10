//go:build integration

package integration

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/evidence"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/letter"
	"github.com/criticizer/criticizer/shared/notify"
	"github.com/criticizer/criticizer/shared/obs"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/reconcile"
	"github.com/criticizer/criticizer/shared/smtpmail"
)

const year = 365 * 24 * time.Hour

// rawText is a delivery row as DynamoDB stores it, every key and attribute
// as text.
func rawText(t *testing.T, r outbox.Row) string {
	t.Helper()
	var m map[string]any
	if err := attributevalue.UnmarshalMap(rawRow(t, r), &m); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(m)
}

// rawRow reads a delivery row as DynamoDB stores it, every attribute.
func rawRow(t *testing.T, r outbox.Row) map[string]ddbtypes.AttributeValue {
	t.Helper()
	out, err := env.ddb.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(env.out["JobsTableName"]), ConsistentRead: aws.Bool(true),
		Key: map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: r.PK}, "sk": &ddbtypes.AttributeValueMemberS{Value: r.SK}}})
	if err != nil || out.Item == nil {
		t.Fatalf("row %s/%s: %v", r.PK, r.SK, err)
	}
	return out.Item
}

// ageAndScrub makes a changelist version's e-mail rows created at, then
// runs the data scrub (the retention check's, RETENTION_DAYS 30) on them.
func ageAndScrub(t *testing.T, cl int64, at time.Time) []outbox.Row {
	t.Helper()
	ctx := context.Background()
	rows, err := env.outbox.List(ctx, cl, 1)
	if err != nil || len(rows) == 0 {
		t.Fatalf("rows of %d: %v, %v", cl, rows, err)
	}
	now := job.Now()
	scrub := env.outbox.Scrubber(now.Add(-30*24*time.Hour), now)
	for _, r := range rows {
		if _, err := env.ddb.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(env.out["JobsTableName"]), Key: map[string]ddbtypes.AttributeValue{
			"pk": &ddbtypes.AttributeValueMemberS{Value: r.PK}, "sk": &ddbtypes.AttributeValueMemberS{Value: r.SK}},
			UpdateExpression:          aws.String("SET created_at = :at"),
			ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":at": &ddbtypes.AttributeValueMemberS{Value: job.FormatTime(at)}}}); err != nil {
			t.Fatal(err)
		}
		item := rawRow(t, r)
		if !scrub.Match(item) {
			t.Fatalf("the scrub does not want a row created %s", at)
		}
		if err := scrub.Visit(ctx, item); err != nil {
			t.Fatal(err)
		}
	}
	rows, err = env.outbox.List(ctx, cl, 1)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// Rules ID-3, OB-1 and OB-3 on DynamoDB: the deployed notify stage keys its
// row by the keyed hash of the recipient; a year later, past the data
// scrub, the row holds no address in any key or attribute, still refuses a
// resend to the mailbox however it is spelled, and the e-mail it sent is
// still named by the row (its Message-ID).
func TestYearOldRowWithoutAddressBlocksResend(t *testing.T) {
	ctx := context.Background()
	cl, id := submit(t, 12345)
	waitJob(t, id, untilSettled(), "succeeded", succeeded)
	mails := mailsFor(cl, 1)
	if len(mails) != 1 {
		t.Fatalf("%d e-mails, want 1", len(mails))
	}
	before, err := env.outbox.List(ctx, cl, 1)
	if err != nil || len(before) != 1 || !strings.Contains(rawText(t, before[0]), "alice@example.com") {
		t.Fatalf("rows %+v (%v): want alice's row, naming her until the scrub", before, err)
	}
	rows := ageAndScrub(t, cl, job.Now().Add(-year+24*time.Hour))
	for _, r := range rows {
		if raw := rawText(t, r); strings.Contains(strings.ToLower(raw), "alice") {
			t.Errorf("a year-old delivery row still names the recipient: %s", raw)
		}
		if r.MessageID("localhost") != mails[0].MessageID {
			t.Errorf("row names Message-ID %s, the e-mail carried %s", r.MessageID("localhost"), mails[0].MessageID)
		}
	}
	_, err = env.outbox.Begin(ctx, outbox.Email(delivery.Key{Changelist: cl, Recipient: " ALICE@example.com", ReviewVersion: 1}), "resend", job.Now())
	if !errors.Is(err, outbox.ErrAlreadySent) {
		t.Fatalf("resend a year later: %v, want ErrAlreadySent", err)
	}
	if n := len(mailsFor(cl, 1)); n != 1 {
		t.Errorf("%d e-mails after the resend attempt, want 1", n)
	}
}

// Rule OB-3 on DynamoDB, for a row the scrub stripped: a send that may have
// happened a year ago (the process died between the relay's acceptance and
// the mark) is settled by the relay's own lookup, under the Message-ID the
// row keeps, and the mailbox is not e-mailed again.
func TestScrubbedDoubtfulSendIsSettledByTheRelayLookup(t *testing.T) {
	ctx := context.Background()
	nv := functionEnv(t, "NotifyFunctionName")
	if nv["SMTP_LOOKUP_URL"] == "" {
		t.Fatal("the local stack's notify stage has no SMTP_LOOKUP_URL")
	}
	cl := changeSeq.Add(1)
	k := delivery.Key{Changelist: cl, Recipient: "Erin@example.com", ReviewVersion: 1}
	msg, err := notify.Compose(k, letter.Content{JobID: "doubt"}, notify.Envelope{From: nv["SMTP_FROM"], Secret: env.deliveryKey})
	if err != nil {
		t.Fatal(err)
	}
	user, pass := smtpCredentials(t)
	host, port, _ := net.SplitHostPort(env.smtp.Addr())
	p, _ := strconv.Atoi(port)
	sender, err := smtpmail.New(smtpmail.Config{Host: host, Port: p, From: nv["SMTP_FROM"], TLS: smtpmail.TLSNone,
		Username: user, Password: pass, Timeout: 2 * env.lease}, env.quiet)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.outbox.Begin(ctx, outbox.Email(k), "doubt", job.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := sender.Send(ctx, k, msg); err != nil {
		t.Fatal(err)
	} // … and the process dies before MarkSent.
	for _, r := range ageAndScrub(t, cl, job.Now().Add(-year+24*time.Hour)) {
		if raw := rawText(t, r); strings.Contains(strings.ToLower(raw), "erin") {
			t.Fatalf("scrubbed row names the recipient: %s", raw)
		}
	}
	from := nv["SMTP_FROM"]
	r := &reconcile.Reconciler{Rows: onlyChangelist(cl), Evidence: evidence.HTTP{URL: nv["SMTP_LOOKUP_URL"]}, FromDomain: from[strings.LastIndexByte(from, '@')+1:],
		Window: time.Minute, Lookback: time.Hour, Log: env.quiet, Metrics: obs.NewMetrics(&strings.Builder{}, "test"),
		Now: func() time.Time { return job.Now().Add(2 * time.Minute) }}
	rep, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Backfilled != 1 || rep.Requeued != 0 {
		t.Fatalf("reconcile %+v: want the doubtful send settled by the relay's record of %s", rep, msg.MessageID)
	}
	if _, err := env.outbox.Begin(ctx, outbox.Email(k), "resend", job.Now()); !errors.Is(err, outbox.ErrAlreadySent) {
		t.Errorf("resend after settling: %v, want ErrAlreadySent", err)
	}
}
