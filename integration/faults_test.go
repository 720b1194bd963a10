//go:build integration

package integration

// The deterministic cases behind issue 8's duplicate e-mails and stalled
// jobs, each reproduced by one injected fault.

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/criticizer/criticizer/internal/faultproxy"
	smtpstandin "github.com/criticizer/criticizer/internal/standin/smtp"
	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/outbox"
)

// useProxyPlan installs a fault plan for this test only.
func useProxyPlan(t *testing.T, p *faultproxy.Plan) {
	t.Helper()
	env.proxy.SetDecider(p)
	t.Cleanup(func() { env.proxy.SetDecider(nil) })
}

// The SMTP server holds the message after the final dot, and the notify
// worker dies meanwhile (SIGKILL, as a Lambda timeout or crash would end
// it). The held transaction completes later; the retry, a lease after the
// death, looks the Message-ID up while the server still holds it and finds
// nothing. Resending then delivers the message twice.
func TestStalledDataReplyIsNotSentTwice(t *testing.T) {
	stall := 3 * env.lease
	if err := env.smtp.QueueFault(smtpstandin.Fault{Stage: smtpstandin.StageData, Delay: stall}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.smtp.Reset)
	cl, id := submit(t, 12345)
	killSMTPClientWhileHeld(t, 2*env.lease+sweepEvery)
	// The stalled send, its worker's death after a lease, a retry that
	// must wait for the provider's completion window or the lookup to
	// find the message, and a sweep at worst.
	j := waitJob(t, id, stall+4*env.lease+2*sweepEvery, "succeeded", succeeded)
	waitHeld(t)
	mails := mailsFor(cl, 1)
	if len(mails) != 1 {
		ids := []string{}
		for _, m := range mails {
			ids = append(ids, m.MessageID)
		}
		t.Fatalf("%d e-mails to alice (Message-IDs %v), want exactly 1; history %s", len(mails), ids, historyOf(j))
	}
	row, err := env.outbox.Get(context.Background(), outbox.Email(delivery.Key{Changelist: cl, Recipient: "alice@example.com", ReviewVersion: 1}))
	if err != nil {
		t.Fatal(err)
	}
	if row.Status != outbox.Sent || row.NotificationID != mails[0].MessageID {
		t.Fatalf("outbox row %+v: want sent, with the accepted Message-ID %s", row, mails[0].MessageID)
	}
}

// killSMTPClientWhileHeld waits until the SMTP stand-in holds a DATA
// transaction, then SIGKILLs the function process on the other end.
func killSMTPClientWhileHeld(t *testing.T, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for env.smtp.Held() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no DATA transaction held after %s", within)
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, port, _ := net.SplitHostPort(env.smtp.Addr())
	p, _ := strconv.Atoi(port)
	pids, err := faultproxy.KillBootstrapsConnectedTo(p)
	if err != nil {
		t.Fatalf("kill the notify worker: %v", err)
	}
	t.Logf("killed notify worker(s) %v while the server held the message", pids)
}

// The answer to a stage's Complete write is lost after DynamoDB applied it.
// The retried write meets its own completion: it must be recognised as done
// and the next stage sent at once — not read as a lost lease and left to
// the sweeper (which would take a sweep interval plus two leases).
func TestLostCompleteAnswerFinishesWithoutSweep(t *testing.T) {
	for _, tc := range []struct {
		name string
		kind faultproxy.Kind
	}{
		{"connection reset after the write", faultproxy.LostAnswer},
		{"500 after the write", faultproxy.LostAnswer5xx},
	} {
		t.Run(tc.name, func(t *testing.T) {
			useProxyPlan(t, &faultproxy.Plan{Seed: 1, Jobs: map[int][]faultproxy.Rule{
				0: {{Op: "dynamodb.UpdateItem", Contains: "stage_completed", Nth: 1, Kinds: []faultproxy.Kind{tc.kind}}},
			}})
			before := len(env.proxy.Events())
			cl := newChange(t, 12345)
			r := postWebhook(t, map[string]any{"changelist_id": cl, "review_version": 1, "idempotency_key": uniqueKey(t)})
			if r.Status != 202 {
				t.Fatalf("webhook: %d %s", r.Status, r.Body)
			}
			id := r.Decoded["job_id"].(string)
			env.proxy.Register(0, id)
			// Far less than a sweep: the stages run back to back, with
			// room for one lease in case a worker is slow to start.
			j := waitJob(t, id, sweepEvery, "succeeded before any sweep", succeeded)
			ev := env.proxy.Events()[before:]
			if len(ev) != 1 || ev[0].Kind != tc.kind || ev[0].Op != "dynamodb.UpdateItem" {
				t.Fatalf("injected %+v, want one %s on a Complete", ev, tc.kind)
			}
			for _, e := range j.History {
				if e.Type == "swept" && strings.HasPrefix(e.Detail, "re-enqueued") {
					t.Fatalf("the job needed the sweeper after the lost answer: history %s", historyOf(j))
				}
			}
			if a := j.StageRecord(domain.StageFetch).Attempts; a != 1 {
				t.Errorf("fetch ran %d times: the applied completion was not recognised (history %s)", a, historyOf(j))
			}
			if n := len(mailsFor(cl, 1)); n != 1 {
				t.Fatalf("%d e-mails, want 1", n)
			}
			if j.State != job.Succeeded {
				t.Fatal(j.State)
			}
		})
	}
}
