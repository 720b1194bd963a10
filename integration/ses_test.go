//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"

	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/evidence"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/notifystage"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/ses"
)

// recordingSES stands in for the SES v2 API under ses.Sender: it records
// each SendEmail instead of making one, so the test sees exactly which
// recipients were e-mailed through the SES channel.
type recordingSES struct {
	mu   sync.Mutex
	sent []string
}

func (r *recordingSES) SendEmail(_ context.Context, in *sesv2.SendEmailInput, _ ...func(*sesv2.Options)) (*sesv2.SendEmailOutput, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, in.Destination.ToAddresses...)
	return &sesv2.SendEmailOutput{MessageId: aws.String(fmt.Sprintf("ses-%d", len(r.sent)))}, nil
}

// Two sends were in flight when the notify worker died (rows "sending").
// SES published a Send event for alice's message, none for bob's. The retry
// reads the SES events through shared/evidence, recorded by the same code
// the sesevents function runs on the SNS payload: alice's row is backfilled
// and she is not e-mailed again; bob's send provably did not happen, so he
// is e-mailed once. A further run sends nothing.
func TestSESEventsDecideLookupBeforeResend(t *testing.T) {
	ctx := context.Background()
	cl := changeSeq.Add(1)
	table := env.out["JobsTableName"]
	const from = "criticizer@example.com"

	// The review artifacts the notify stage reads.
	bucket := fmt.Sprintf("ses-lookup-%d", cl)
	s3c := artifacts.NewS3Client(env.local.AWS)
	if _, err := s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	arts := artifacts.New(s3c, bucket)
	jobID := fmt.Sprintf("ses-lookup-%d", cl)
	j := &job.Job{ID: jobID, Changelist: cl, ReviewVersion: 1, Recipients: []string{"alice@example.com", "bob@example.com"},
		Artifacts: job.Artifacts{Redacted: artifacts.Key(jobID, "redacted.json"), Result: artifacts.Key(jobID, "result.json")}}
	if err := arts.PutJSON(ctx, j.Artifacts.Redacted, domain.Changeset{User: "carol", Description: "Fix the parser"}); err != nil {
		t.Fatal(err)
	}
	if err := arts.PutJSON(ctx, j.Artifacts.Result, domain.ReviewResult{Summary: "Looks fine."}); err != nil {
		t.Fatal(err)
	}
	decideAsTheLLMStage(t, arts, j)

	// Both sends started and were never confirmed.
	for _, r := range j.Recipients {
		k := delivery.Key{Changelist: cl, Recipient: r, ReviewVersion: 1}
		if _, err := env.outbox.Begin(ctx, outbox.Email(k), jobID, job.Now()); err != nil {
			t.Fatal(err)
		}
	}

	// SES's Send event for alice's message, as SNS hands it to sesevents.
	alice := delivery.Key{Changelist: cl, Recipient: "alice@example.com", ReviewVersion: 1}
	aliceID := messageID(alice, "example.com")
	sesEvent, _ := json.Marshal(map[string]any{"eventType": "Send", "send": map[string]any{},
		"mail": map[string]any{"timestamp": "2026-11-22T10:00:00.000Z", "source": from, "messageId": "0100019a-int-0001",
			"destination": []string{"alice@example.com"},
			"tags":        map[string][]string{"ses:configuration-set": {"criticizer-local"}, evidence.TagName: {evidence.Tag(aliceID)}}}})
	snsPayload, _ := json.Marshal(map[string]any{"Records": []any{map[string]any{"EventSource": "aws:sns",
		"Sns": map[string]any{"Type": "Notification", "Message": string(sesEvent)}}}})
	events := evidence.New(env.ddb, table, 0)
	if rep, err := events.HandleSES(ctx, snsPayload, env.quiet, nil); err != nil || rep.Recorded != 1 {
		t.Fatalf("recording the SES event: %+v, %v", rep, err)
	}

	sender := &recordingSES{}
	client, err := ses.New(sender, "criticizer-local", env.quiet)
	if err != nil {
		t.Fatal(err)
	}
	n := &notifystage.Notify{Outbox: env.outbox, Secret: env.deliveryKey, Artifacts: arts, Email: ses.NewChannel(client, events), From: from, Log: env.quiet}
	if _, err := n.Process(ctx, j); err != nil {
		t.Fatalf("notify: %v", err)
	}
	if strings.Join(sender.sent, ",") != "bob@example.com" {
		t.Fatalf("e-mailed %v, want only bob (alice's send is proven by SES's event)", sender.sent)
	}
	row, err := env.outbox.Get(ctx, outbox.Email(alice))
	if err != nil {
		t.Fatal(err)
	}
	if row.Status != outbox.Sent || row.NotifiedAt == "" || row.NotificationID != aliceID || row.Attempts != 1 {
		t.Errorf("alice's row %+v: want sent, backfilled with her Message-ID, one attempt", row)
	}
	if _, err := n.Process(ctx, j); err != nil {
		t.Fatalf("notify again: %v", err)
	}
	if len(sender.sent) != 1 {
		t.Errorf("a second run e-mailed again: %v", sender.sent)
	}
}
