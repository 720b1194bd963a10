//go:build integration

package integration

import (
	"context"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	smtpstandin "github.com/criticizer/criticizer/internal/standin/smtp"
	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/outbox"
)

// An SMTP server refusing a recipient with a 550 that quotes a line of the
// message — secrets without context, a registered credential and the
// recipient's address in it — leaves none of them in the outbox row, the job
// record, the dead letter or the function logs; the reply codes stay.
func TestSMTPReplyEchoingSecretsIsNotStored(t *testing.T) {
	// Generated from a fixed seed: reproducible, and no credential written
	// into the test.
	rng := rand.New(rand.NewPCG(8, 12))
	b := make([]byte, 24)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	r := hex.EncodeToString(b)
	// Mixed-case, random: an AWS secret access key alone, one PEM body line
	// and a bare token, none with the key name or armor around it.
	mix := func(s string) string {
		var o strings.Builder
		for i, c := range s {
			if i%3 == 0 && c >= 'a' && c <= 'f' {
				c -= 'a' - 'A'
			}
			o.WriteRune(c)
		}
		return o.String()
	}
	awsSecret := "Kq7" + mix(r[:34]) + "/zX"
	pemLine := "MIIEpAIBAAKCAQEA" + mix(r) + "Zy9"
	token := "Tk4" + mix(r[10:40])
	rcpt := "ziggy" + r[:6] + "@example.com"
	leaks := map[string]string{"aws secret": awsSecret, "pem line": pemLine, "token": token, "recipient": rcpt}
	for name, v := range env.secrets {
		if v != "" && len(v) >= 8 {
			leaks[name] = v
		}
	}
	quote := "5.7.1 Message rejected, offending line: " + awsSecret + " " + pemLine + " " + token + " from <" + rcpt + ">"
	for name, v := range env.secrets {
		if strings.Contains(name, "SMTP") && v != "" {
			quote += " auth " + v
		}
	}
	if err := env.smtp.QueueFault(smtpstandin.Fault{Stage: smtpstandin.StageRcpt, Code: 550, Enhanced: "5.7.1", Message: quote, Count: 1}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.smtp.Reset)
	cl := newChange(t, 12345)
	// "a…" sorts before the author "alice", so the refused RCPT is this one.
	resp := postWebhook(t, map[string]any{"changelist_id": cl, "review_version": 1, "idempotency_key": uniqueKey(t), "recipients": []string{"aa" + rcpt}})
	id := resp.Decoded["job_id"].(string)
	leaks["recipient"] = "aa" + rcpt
	j := waitJob(t, id, 60*time.Second, "failed", failed)
	// On its way the job passed review's guard on the strength of fetch's
	// proof of redaction, recorded with the artifact.
	if !strings.HasPrefix(j.Artifacts.RedactedProof, "rv1.") {
		t.Errorf("no proof of redaction recorded: %+v", j.Artifacts)
	}
	it := awaitDLQ(t, domain.StageNotify, forJob(id), 30*time.Second)
	row, err := env.outbox.Get(context.Background(), outbox.Email(delivery.Key{Changelist: cl, Recipient: "aa" + rcpt, ReviewVersion: 1}))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("outbox last_error: %s", row.LastError)
	rec := j.StageRecord(domain.StageNotify)
	stored := map[string]string{"outbox last_error": row.LastError, "job last_error": rec.LastError, "dead letter": it.Body}
	for where, text := range stored {
		if text == "" {
			t.Errorf("%s is empty: the test proves nothing", where)
		}
		for name, v := range leaks {
			if strings.Contains(text, v) {
				t.Errorf("%s holds the %s: %s", where, name, text)
			}
		}
	}
	if !strings.Contains(row.LastError, "550") || !strings.Contains(row.LastError, "5.7.1") || strings.Contains(row.LastError, "offending line") {
		t.Errorf("outbox last_error should keep the reply codes and drop the reply text: %s", row.LastError)
	}
	// The functions' logs go to the emulator's log file.
	logs, err := os.ReadFile(env.local.Emulator.LogFile)
	if err != nil || !strings.Contains(string(logs), id) {
		t.Logf("skipping the log check: the emulator log does not carry this job's function logs (%v)", err)
		return
	}
	for name, v := range leaks {
		if strings.Contains(string(logs), v) {
			t.Errorf("function logs hold the %s", name)
		}
	}
}
