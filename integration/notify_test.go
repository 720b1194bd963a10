//go:build integration

package integration

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	smtpstandin "github.com/criticizer/criticizer/internal/standin/smtp"
	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/outbox"
)

// The provider accepts the message but the connection drops before its
// reply: the send may have happened. The retry must reconcile through the
// provider evidence and backfill the row, never e-mail twice.
func TestSendThatMayHaveHappenedIsSettledNotResent(t *testing.T) {
	if err := env.smtp.QueueFault(smtpstandin.Fault{Stage: smtpstandin.StageData, Drop: true, Count: 1}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.smtp.Reset)
	cl, id := submit(t, 12345)
	j := waitJob(t, id, untilSettled(), "succeeded", succeeded)
	if a := j.StageRecord(domain.StageNotify).Attempts; a != 2 {
		t.Fatalf("notify attempts %d, want 2 (the uncertain send, then the reconciling retry)", a)
	}
	if n := len(mailsFor(cl, 1)); n != 1 {
		t.Fatalf("%d e-mails to alice, want exactly 1", n)
	}
	row, err := env.outbox.Get(context.Background(), outbox.Email(delivery.Key{Changelist: cl, Recipient: "alice@example.com", ReviewVersion: 1}))
	if err != nil {
		t.Fatal(err)
	}
	if row.Status != outbox.Sent || row.NotifiedAt == "" || row.Attempts != 1 || row.NotificationID != mailsFor(cl, 1)[0].MessageID {
		t.Fatalf("outbox row %+v: want sent once, backfilled with the accepted Message-ID", row)
	}
}

// A provider that refuses the message (a transient 451) certainly did not
// send it: the row goes back to pending and the retry sends once.
func TestRefusedSendIsRetriedOnce(t *testing.T) {
	if err := env.smtp.QueueFault(smtpstandin.Fault{Stage: smtpstandin.StageRcpt, Code: 451, Message: "try again later", Count: 1}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.smtp.Reset)
	cl, id := submit(t, 12345)
	j := waitJob(t, id, untilSettled(), "succeeded", succeeded)
	if r := j.StageRecord(domain.StageNotify); r.Attempts != 2 || r.LastErrorClass == "" {
		t.Fatalf("notify stage %+v, want a recorded failure then success", r)
	}
	if n := len(mailsFor(cl, 1)); n != 1 {
		t.Fatalf("%d e-mails, want 1", n)
	}
	row, _ := env.outbox.Get(context.Background(), outbox.Email(delivery.Key{Changelist: cl, Recipient: "alice@example.com", ReviewVersion: 1}))
	if row.Attempts != 2 || row.Status != outbox.Sent {
		t.Fatalf("outbox row %+v, want two send attempts, sent", row)
	}
}

// A recipient the provider rejects permanently (550) blocks success: the
// others are e-mailed, the job dead-letters at notify, and after the operator
// requeues the row (mailbox fixed) a replay sends only what was missing.
func TestPermanentRecipientFailureThenOperatorRequeue(t *testing.T) {
	if err := env.smtp.QueueFault(smtpstandin.Fault{Stage: smtpstandin.StageRcpt, Code: 550, Enhanced: "5.1.1", Message: "no such mailbox", Count: 1}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.smtp.Reset)
	cl := newChange(t, 12345)
	// "aaron" sorts before the author "alice", so the rejected RCPT is his.
	r := postWebhook(t, map[string]any{"changelist_id": cl, "review_version": 1, "idempotency_key": uniqueKey(t), "recipients": []string{"aaron@example.com"}})
	id := r.Decoded["job_id"].(string)
	waitJob(t, id, untilSettled(), "failed", failed)
	it := awaitDLQ(t, domain.StageNotify, forJob(id), untilDeadLettered())
	if dl := it.Env.DeadLetter; dl.ErrorClass != "NOT_FOUND" || dl.Attempts != 1 || strings.Contains(it.Body, "aaron@example.com") {
		t.Fatalf("dead letter %+v (recipient addresses are PII and must be redacted)", dl)
	}
	if n := len(mailsFor(cl, 1)); n != 1 {
		t.Fatalf("%d e-mails before the fix, want 1 (alice's)", n)
	}
	// Put the item back for the operator, who inspects and requeues the row.
	url, body := stageURLs("DlqUrl")[domain.StageNotify], it.Body
	if _, err := env.sqs.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: &url, MessageBody: &body}); err != nil {
		t.Fatal(err)
	}
	listing := criticizer(t, "outbox", id)
	rowOf := func(rcpt string) string {
		for _, line := range strings.Split(listing, "\n") {
			if strings.HasPrefix(line, rcpt) {
				return line
			}
		}
		return ""
	}
	if !strings.Contains(rowOf("aaron@example.com"), "failed") || !strings.Contains(rowOf("alice@example.com"), "sent") {
		t.Fatalf("outbox listing:\n%s", listing)
	}
	if err := env.outbox.Requeue(context.Background(), outbox.Email(delivery.Key{Changelist: cl, Recipient: "alice@example.com", ReviewVersion: 1}), job.Now()); err == nil {
		t.Fatal("a sent row was requeued: that would e-mail twice")
	}
	criticizer(t, "outbox", "requeue", id, "aaron@example.com", "--note", "OPS-43 mailbox created")
	criticizer(t, "dlq", "replay", "--stage", "notify", "--job", id, "--note", "OPS-43")
	waitJob(t, id, untilSettled(), "succeeded after requeue and replay", succeeded)
	mails := mailsFor(cl, 1)
	if len(mails) != 2 {
		t.Fatalf("%d e-mails, want 2: alice once, aaron once", len(mails))
	}
	for _, m := range mails {
		if len(m.To) != 1 {
			t.Fatalf("unexpected envelope %v", m.To)
		}
	}
	if mails[0].To[0] == mails[1].To[0] {
		t.Fatalf("the same recipient was e-mailed twice: %v", mails[0].To)
	}
}
