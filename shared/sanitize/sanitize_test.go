package sanitize

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	smtpstandin "github.com/criticizer/criticizer/internal/standin/smtp"
	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/letter"
	"github.com/criticizer/criticizer/shared/llm"
	"github.com/criticizer/criticizer/shared/notify"
	"github.com/criticizer/criticizer/shared/obs"
	"github.com/criticizer/criticizer/shared/p4"
	"github.com/criticizer/criticizer/shared/smtpmail"
)

// planted are the secrets an upstream echoes back in a test: fresh random
// values per run, bare (no key name, no armor) and in context, plus one
// registered secret of no recognisable shape and a recipient address.
type planted struct {
	awsSecret  string // an AWS secret access key, alone
	pemLine    string // one line of a PEM private key body, alone
	token      string // a bare random API token
	password   string // a password in an assignment
	registered string // a value loaded from Secrets Manager: masked by value
	recipient  string
}

// random draws from a generator seeded by the test's name: values are
// generated, not written into the test, and a failure reproduces.
func random(t *testing.T, set string, n int) string {
	t.Helper()
	h := fnv.New64a()
	h.Write([]byte(t.Name()))
	seeds[t.Name()]++
	r := rand.New(rand.NewPCG(h.Sum64(), seeds[t.Name()]))
	b := make([]byte, n)
	for i := range b {
		b[i] = set[r.IntN(len(set))]
	}
	return string(b)
}

var seeds = map[string]uint64{}

func newPlanted(t *testing.T) planted {
	const alnum = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"
	p := planted{
		awsSecret:  "K" + random(t, alnum, 30) + "/q7" + random(t, alnum, 6),
		pemLine:    "MIIEpAIBAAKCAQEA" + random(t, alnum+"+/", 48),
		token:      "Zq8" + random(t, alnum, 29),
		password:   "Sommer" + random(t, "0123456789", 4) + "!x",
		registered: "correct horse " + random(t, "abcdefghijklmnopqrstuvwxyz", 8) + " staple",
		recipient:  random(t, "abcdefghijklmnopqrstuvwxyz", 7) + "@example.com",
	}
	obs.DefaultMasker.Add(p.registered)
	return p
}

// quote is what a misbehaving upstream echoes: every planted value.
func (p planted) quote() string {
	return fmt.Sprintf("offending line: %s %s %s password=%s (%s) for <%s>", p.awsSecret, p.pemLine, p.token, p.password, p.registered, p.recipient)
}

func (p planted) assertAbsent(t *testing.T, where, text string) {
	t.Helper()
	for name, v := range map[string]string{"aws secret": p.awsSecret, "pem line": p.pemLine, "token": p.token,
		"password": p.password, "registered secret": p.registered, "recipient": p.recipient} {
		if strings.Contains(text, v) {
			t.Errorf("%s: %s leaked: %s", where, name, text)
		}
	}
}

// An SMTP server answering 550 with a reply that quotes the message: the
// stored and logged text keeps the codes and none of the reply.
func TestSMTPReplyEchoingSecrets(t *testing.T) {
	p := newPlanted(t)
	for _, stage := range []smtpstandin.Stage{smtpstandin.StageRcpt, smtpstandin.StageData} {
		t.Run(string(stage), func(t *testing.T) {
			srv := smtpstandin.NewServer(smtpstandin.Options{})
			addr, err := srv.Start()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(srv.Close)
			if err := srv.QueueFault(smtpstandin.Fault{Stage: stage, Code: 550, Enhanced: "5.7.1", Message: "Message rejected, " + p.quote()}); err != nil {
				t.Fatal(err)
			}
			host, port, _ := net.SplitHostPort(addr)
			n, _ := strconv.Atoi(port)
			var logs bytes.Buffer
			s, err := smtpmail.New(smtpmail.Config{Host: host, Port: n, TLS: smtpmail.TLSNone,
				From: "bounces@example.com", Timeout: 5 * time.Second}, obs.NewLogger(&logs, "debug", "notify", Logs))
			if err != nil {
				t.Fatal(err)
			}
			k := delivery.Key{Changelist: 7, Recipient: p.recipient, ReviewVersion: 1}
			m, err := notify.Compose(k, letter.Content{Author: "bob", Description: "fix", JobID: "j-1"}, notify.Envelope{From: "Criticizer <c@example.com>"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Send(context.Background(), k, m)
			if err == nil {
				t.Fatal("send succeeded")
			}
			if !strings.Contains(err.Error(), p.awsSecret) {
				t.Fatalf("the stand-in did not echo the secret; the test proves nothing: %v", err)
			}
			got := Error(err)
			p.assertAbsent(t, "stored error", got)
			if !strings.Contains(got, "550") || !strings.Contains(got, "5.7.1") {
				t.Errorf("reply codes lost: %s", got)
			}
			if strings.Contains(got, "Message rejected") {
				t.Errorf("reply text kept: %s", got)
			}
			p.assertAbsent(t, "notify log", logs.String())
		})
	}
}

// An LLM provider answering 400 with a body that echoes the request (the
// shape carries both OpenAI's and Anthropic's error fields).
func TestLLMErrorBodyEchoingSecrets(t *testing.T) {
	p := newPlanted(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		// "Input should be" makes it an invalid request to the openai
		// client, whose validation reason is kept: masked here all the same.
		fmt.Fprintf(w, `{"type":"error","error":{"message":%q,"type":%q,"code":%q}}`, "Invalid request: Input should be "+p.quote(), p.awsSecret, p.token)
	}))
	defer srv.Close()
	for _, provider := range []string{llm.OpenAI, llm.Anthropic} {
		t.Run(provider, func(t *testing.T) {
			var logs bytes.Buffer
			c, err := llm.New(provider, llm.Config{Endpoint: srv.URL, Model: "m", Timeout: 5 * time.Second, ResponseFormat: llm.FormatJSONObject, Logger: obs.NewLogger(&logs, "debug", "review", Logs)}, llm.Credentials{APIKey: "sk-test-" + p.token})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Complete(context.Background(), llm.Prompt{System: "s", User: "u"})
			if err == nil {
				t.Fatal("complete succeeded")
			}
			got := Error(err)
			p.assertAbsent(t, "stored error", got)
			if !strings.Contains(got, "400") {
				t.Errorf("status lost: %s", got)
			}
			p.assertAbsent(t, "review log", logs.String())
		})
	}
}

// p4 printing an error that quotes what it was given.
func TestP4ErrorEchoingSecrets(t *testing.T) {
	p := newPlanted(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "p4")
	script := "#!/bin/sh\ncat >&2 <<'EOF'\nPerforce client error:\n\tConnect to server failed; check $P4PORT.\n\t" + p.quote() + "\n-----BEGIN RSA PRIVATE KEY-----\n" + p.pemLine + "\nEOF\nexit 1\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := p4.NewRunner(p4.Config{Path: bin, Port: "ssl:perforce.example.com:1666", User: "svc", Timeout: 5 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Run(context.Background(), "describe", "-s", "12345")
	if err == nil {
		t.Fatal("p4 succeeded")
	}
	if !strings.Contains(err.Error(), p.awsSecret) {
		t.Fatalf("the fake p4 did not echo the secret; the test proves nothing: %v", err)
	}
	got := Error(err)
	p.assertAbsent(t, "stored error", got)
	if !strings.Contains(got, "Connect to server failed") {
		t.Errorf("p4's own diagnosis lost: %s", got)
	}
}

// Log fields of every kind pass the sanitizer; addresses become pseudonyms.
func TestLogFields(t *testing.T) {
	p := newPlanted(t)
	var logs bytes.Buffer
	log := obs.NewLogger(&logs, "debug", "notify", Logs)
	log.Info("review e-mailed", "recipient", p.recipient, "detail", "bare "+p.awsSecret, "err", errors.New(p.quote()),
		"list", fmt.Sprint([]string{p.pemLine}), "recipients", []string{p.recipient}, "ctx", map[string]any{"token": p.token, "n": 1})
	out := logs.String()
	p.assertAbsent(t, "log", out)
	if !strings.Contains(out, obs.Pseudonym(p.recipient)) {
		t.Errorf("recipient pseudonym missing: %s", out)
	}
}

// Bare values without context, and the registered secret, in an error
// that goes to the job record or a dead letter.
func TestBareValuesInErrors(t *testing.T) {
	p := newPlanted(t)
	for _, v := range []string{p.awsSecret, p.pemLine, p.token, p.registered} {
		err := failure.Wrap(failure.InternalBug, fmt.Errorf("unexpected value %s", v))
		if got := Error(err); strings.Contains(got, v) {
			t.Errorf("bare value survived: %s", got)
		}
	}
	pem := "-----BEGIN PRIVATE KEY-----\n" + p.pemLine + "\n"
	if got := Text(pem[28:]); strings.Contains(got, p.pemLine) {
		t.Errorf("PEM body line without armor survived: %s", got)
	}
	b64 := base64.StdEncoding.EncodeToString([]byte("aws_secret_access_key=" + p.awsSecret))
	if got := Text("config: " + b64); strings.Contains(got, b64) {
		t.Errorf("encoded secret survived: %s", got)
	}
}

// Ordinary error text is kept as it is: operators need it.
func TestOrdinaryTextKept(t *testing.T) {
	for _, s := range []string{
		"NOT_FOUND: p4 describe: exit status 1: Change 12345 unknown.",
		"NETWORK_TIMEOUT: notify: smtp send: context deadline exceeded",
		"SCHEMA_INVALID: llm: provider answered 400 (code \"context_length_exceeded\", type \"invalid_request_error\", request req_123)",
		"CONFLICT: store: complete job 3f2b8c1e-9a4d-4e6f-8b1a-2c3d4e5f6a7b stage fetch: ConditionalCheckFailedException",
		"POLICY_REJECTED: path //depot/secret/x.go is outside the depot allow-list",
	} {
		if got := Error(errors.New(s)); got != s {
			t.Errorf("changed:\n in: %s\nout: %s", s, got)
		}
	}
}

// A stack trace, as dead letters carry it, is diagnostics, not secrets.
func TestStackTraceKept(t *testing.T) {
	stack := string(debug.Stack())
	if got := Text(stack); got != stack {
		t.Errorf("stack changed:\n%s\n---\n%s", stack, got)
	}
}
