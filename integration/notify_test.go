package integration

import (
	"context"
	"testing"
	"time"

	smtpstandin "github.com/criticizer/criticizer/internal/standin/smtp"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/outbox"
)

// The provider accepts the message but the connection drops before its
// reply: the send may have happened. The retry must reconcile through the
// delivery log and backfill the row, never e-mail twice.
func TestSendThatMayHaveHappenedIsReconciledNotResent(t *testing.T) {
	if err := env.smtp.QueueFault(smtpstandin.Fault{Stage: smtpstandin.StageData, Drop: true, Count: 1}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.smtp.Reset)
	cl, id := submit(t, 12345)
	j := waitJob(t, id, 90*time.Second, "succeeded", succeeded)
	if a := j.StageRecord(domain.StageNotify).Attempts; a != 2 {
		t.Fatalf("notify attempts %d, want 2 (the uncertain send, then the reconciling retry)", a)
	}
	if n := len(mailsFor(cl, 1)); n != 1 {
		t.Fatalf("%d e-mails to alice, want exactly 1", n)
	}
	row, err := env.outbox.Get(context.Background(), outbox.Key{Changelist: cl, Recipient: "alice@example.com", ReviewVersion: 1})
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
	j := waitJob(t, id, 90*time.Second, "succeeded", succeeded)
	if r := j.StageRecord(domain.StageNotify); r.Attempts != 2 || r.LastErrorClass == "" {
		t.Fatalf("notify stage %+v, want a recorded failure then success", r)
	}
	if n := len(mailsFor(cl, 1)); n != 1 {
		t.Fatalf("%d e-mails, want 1", n)
	}
	row, _ := env.outbox.Get(context.Background(), outbox.Key{Changelist: cl, Recipient: "alice@example.com", ReviewVersion: 1})
	if row.Attempts != 2 || row.Status != outbox.Sent {
		t.Fatalf("outbox row %+v, want two send attempts, sent", row)
	}
}
