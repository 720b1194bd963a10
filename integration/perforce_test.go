//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/criticizer/criticizer/internal/devstack"
	"github.com/criticizer/criticizer/internal/p4layer"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/envelope"
)

// Perforce as a real server behaves (issue 27, docs/reference/p4-cli.md
// "Protections" and "Keywords, trust, tickets, edge servers"), through the
// deployed pipeline and the p4 stand-in.

// withServer rewrites the stand-in's server.json with mutate for the rest
// of the test (restored at its end). The fetch function re-reads the
// protections before every fetch, so the change applies to the next job.
func withServer(t *testing.T, mutate func(server map[string]any)) {
	t.Helper()
	name := filepath.Join(env.depot, "server.json")
	orig, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(orig, &s); err != nil {
		t.Fatal(err)
	}
	mutate(s)
	b, _ := json.Marshal(s)
	write := func(b []byte) error {
		tmp := name + ".tmp"
		if err := os.WriteFile(tmp, b, 0o600); err != nil {
			return err
		}
		return os.Rename(tmp, name)
	}
	if err := write(b); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := write(orig); err != nil {
			t.Errorf("restore server.json: %v", err)
		}
	})
}

// logSince waits for s in what the functions logged after offset off.
func logSince(t *testing.T, off int64, s string, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		b, _ := readFrom(env.local.Emulator.LogFile, off)
		if strings.Contains(string(b), s) || time.Now().After(deadline) {
			return string(b)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// deadLetter runs a job for the webhook payload to its fetch dead letter.
func deadLetter(t *testing.T, payload map[string]any) envelope.DeadLetter {
	t.Helper()
	payload["review_version"], payload["idempotency_key"] = 1, uniqueKey(t)
	r := postWebhook(t, payload)
	id, _ := r.Decoded["job_id"].(string)
	if id == "" {
		t.Fatalf("webhook answered %d %s", r.Status, r.Body)
	}
	waitJob(t, id, untilSettled(), "failed", failed)
	return *awaitDLQ(t, domain.StageFetch, forJob(id), untilDeadLettered()).Env.DeadLetter
}

// A change touching a file under an exclusion of the service user's
// protections (12345: deploy.go under //depot/projectA/tools/, hidden from
// describe) is never reviewed without that file: the fetch refuses the
// configuration at once as a security failure, nothing reaches the model
// or a mailbox. The stand-in, like p4d, answers "read" to "protects -m
// //..." whatever is excluded, so a client trusting -m would review the
// change as two files. Once the exclusion is gone the change is reviewed
// whole, all three files.
func TestChangeUnderAnExclusionIsNeverReviewedPartially(t *testing.T) {
	for _, tt := range []struct {
		name   string
		server func(map[string]any)
		reason string
	}{
		{"visible exclusion", func(s map[string]any) { s["protect"] = []string{"//depot/projectA/tools/..."} }, "exclusion_under_allowlist"},
		{"exclusions hidden by dm.protects.hide", func(s map[string]any) {
			s["protect"], s["hide_exclusions"] = []string{"//depot/projectA/..."}, true
		}, "hidden_exclusions"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			withServer(t, tt.server)
			off := fileSize(env.local.Emulator.LogFile)
			cl := newChange(t, 12345)
			dl := deadLetter(t, map[string]any{"changelist_id": cl})
			if dl.ErrorClass != "SECURITY_FAILURE" || dl.Attempts != 1 || !strings.Contains(dl.Reason, "("+tt.reason+")") {
				t.Fatalf("dead letter %+v, want SECURITY_FAILURE (%s) after one attempt", dl, tt.reason)
			}
			if logs := logSince(t, off, `"event":"p4_protections_refused"`, env.lease); !strings.Contains(logs, `"event":"p4_protections_refused","security_event":true,"reason":"`+tt.reason+`"`) {
				t.Errorf("no structured security event for the refusal")
			}
			if files := modelFiles(t, cl); len(files) != 0 {
				t.Errorf("the model saw files of a refused change: %v", files)
			}
			if m := mailsFor(cl, 1); len(m) != 0 {
				t.Errorf("%d e-mails for a refused change", len(m))
			}
		})
	}
	cl, id := submit(t, 12345)
	j := waitJob(t, id, untilSettled(), "succeeded", succeeded)
	if j.Review == nil || j.Review.FilesTotal != 3 {
		t.Errorf("change %d without the exclusion: review %+v, want all 3 files", cl, j.Review)
	}
}

// A ktext file with one real line changed is reviewed as that one change:
// printed with keyword expansion suppressed, its $Id$, $Change$ and
// $DateTime$ lines (different at every revision once expanded) are not a
// hunk the model is billed for or can comment on.
func TestKeywordFileReviewShowsOnlyItsRealChange(t *testing.T) {
	cl, id := submit(t, 12365)
	waitJob(t, id, untilSettled(), "succeeded", succeeded)
	var prompts []string
	for _, req := range env.llm.Requests() {
		if n := len(req.Messages); n > 0 && strings.Contains(req.Messages[n-1].Content, changeMarker(cl)) {
			prompts = append(prompts, req.Messages[n-1].Content)
		}
	}
	if len(prompts) == 0 {
		t.Fatalf("no prompt for change %d", cl)
	}
	for _, p := range prompts {
		if strings.Count(p, "\n@@ ") != 1 || !strings.Contains(p, "-\treturn 64;\n+\treturn 256;") {
			t.Errorf("prompt of the ktext change: want one hunk with the real change:\n%s", p)
		}
		if strings.Contains(p, "$Change:") || strings.Contains(p, "$Id:") || strings.Contains(p, "$DateTime:") {
			t.Errorf("the prompt carries expanded keywords:\n%s", p)
		}
	}
}

// The Perforce server presents another key than the pinned one: the job is
// dead-lettered at once as a security failure, not retried as a network
// timeout, and the DeadLettered metric the SecurityFailureAlarm pages on
// (infra, TestProdStack) is emitted. The client's HostKeyMismatch text may
// come as a -Mj message on stdout (internal/standin/p4 testdata/realshapes
// trust.json) or as "Perforce client error:" text on stderr (the
// reference's form): both are injected.
func TestTrustMismatchDeadLettersAtOnceAndPages(t *testing.T) {
	const text = "******* WARNING P4PORT IDENTIFICATION HAS CHANGED! *******\nIt is possible that someone is intercepting your connection\nto the Perforce P4PORT 'ssl:perforce:1666'\nIf this is not a scheduled key change, then you should contact\nyour Perforce administrator.\nThe fingerprint for the mismatched key sent to your client is\n2E:2E:2E:2E:2E:2E:2E:2E:2E:2E:2E:2E:2E:2E:2E:2E:2E:2E:2E:2E\nTo allow connection use the 'p4 trust' command."
	for name, fault := range map[string]map[string]any{
		"json message on stdout": {"command": "describe", "message": text, "severity": 3, "generic": 38},
		"text on stderr":         {"command": "describe", "exit": 1, "stderr": "Perforce client error:\n\t" + strings.ReplaceAll(text, "\n", "\n\t")},
	} {
		t.Run(name, func(t *testing.T) {
			off := fileSize(env.local.Emulator.LogFile)
			cl := newChangeWith(t, 12349, func(fx map[string]any) { fx["faults"] = []any{fault} })
			dl := deadLetter(t, map[string]any{"changelist_id": cl})
			if dl.ErrorClass != "SECURITY_FAILURE" || dl.Attempts != 1 || !strings.Contains(dl.Reason, "IDENTIFICATION HAS CHANGED") {
				t.Fatalf("dead letter %+v, want SECURITY_FAILURE after one attempt", dl)
			}
			logs := logSince(t, off, `"ErrorClass":"SECURITY_FAILURE","Stage":"fetch"`, env.lease)
			if !strings.Contains(logs, `"event":"p4_trust_mismatch","security_event":true`) {
				t.Error("no security event for the key mismatch")
			}
			if !strings.Contains(logs, `"ErrorClass":"SECURITY_FAILURE","Stage":"fetch"`) {
				t.Error("no DeadLettered metric for SECURITY_FAILURE: the alarm would not page")
			}
		})
	}
}

// A shelf made on an edge server and never promoted is not visible on the
// commit server the local stack points at (p4ServerRole commit): the job
// dead-letters at once as SHELF_NOT_PROMOTED with a reason an operator can
// act on, not as an unknown change.
func TestUnpromotedShelfDeadLettersWithItsOwnClass(t *testing.T) {
	cl := newChange(t, 12366)
	dl := deadLetter(t, map[string]any{"changelist_id": cl, "shelved": true})
	if dl.ErrorClass != "SHELF_NOT_PROMOTED" || dl.Attempts != 1 || !strings.Contains(dl.Reason, "p4 shelve -p") {
		t.Fatalf("dead letter %+v, want SHELF_NOT_PROMOTED after one attempt, naming how to promote", dl)
	}
}

// The service user's ticket expires twice while the fetch function stays
// warm: each time the next command is refused, the function logs in again
// (once) and the job succeeds.
func TestTicketExpiringTwiceIsRenewedTwice(t *testing.T) {
	off := fileSize(env.local.Emulator.LogFile)
	_, id := submit(t, 12349)
	waitJob(t, id, untilSettled(), "succeeded", succeeded)
	for i := 1; i <= 2; i++ {
		expireTickets(t)
		_, id := submit(t, 12349)
		waitJob(t, id, untilSettled(), "succeeded", succeeded)
		n := 0
		within(t, env.lease, "the re-login is logged", func() bool {
			b, _ := readFrom(env.local.Emulator.LogFile, off)
			n = strings.Count(string(b), `"event":"p4_relogin"`)
			return n >= i
		})
		if n != i {
			t.Errorf("after expiry %d: %d re-logins logged, want %d", i, n, i)
		}
	}
}

// expireTickets makes every ticket the stand-in issued expired.
func expireTickets(t *testing.T) {
	t.Helper()
	dir := filepath.Join(env.depot, ".state", "tickets")
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) == 0 {
		t.Fatalf("no tickets issued (%v)", err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		_, host, _ := strings.Cut(string(b), " ")
		if err := os.WriteFile(filepath.Join(dir, e.Name()), []byte(fmt.Sprintf("1 %s", host)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A p4 binary other than the one chosen (here the staged client with bytes
// appended: still an ELF executable of the right architecture) is refused
// by the layer build (`make p4-layer` runs cmd/p4layer) for not having the
// expected SHA-256, and by synth of the staging environment when it
// replaces the staged binary after the build, or when the layer was built
// from another binary than the environment pins in cdk.json.
func TestForgedP4LayerIsRefusedAtBuildAndSynth(t *testing.T) {
	genuine := env.local.P4Bin
	sum, err := p4layer.FileSHA256(genuine)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(genuine)
	if err != nil {
		t.Fatal(err)
	}
	forged := filepath.Join(t.TempDir(), "p4")
	if err := os.WriteFile(forged, append(b, "exfiltrate"...), 0o755); err != nil {
		t.Fatal(err)
	}
	arch := "x86_64"
	if goruntime.GOARCH == "arm64" {
		arch = "arm64"
	}
	out := t.TempDir()
	build := exec.Command("go", "run", "./cmd/p4layer", "-p4", forged, "-sha256", sum, "-arch", arch, "-out", out)
	build.Dir = repoRoot(t)
	var stderr bytes.Buffer
	build.Stderr = &stderr
	if err := build.Run(); err == nil || !strings.Contains(stderr.String(), "not the expected "+sum) {
		t.Errorf("layer build of a forged binary: %v, %q; want a refusal", err, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(out, "bin", "p4")); err == nil {
		t.Error("the layer build staged the forged binary")
	}

	// The genuine layer, its binary swapped after the build.
	swapped := t.TempDir()
	if err := os.CopyFS(swapped, os.DirFS(filepath.Dir(filepath.Dir(genuine)))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(swapped, "bin", "p4"), append(b, "exfiltrate"...), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name      string
		overrides map[string]any
		want      string
	}{
		{"binary swapped after the build", map[string]any{"p4LayerPath": swapped, "p4LayerSha256": sum}, "replaced after the build"},
		{"a layer of another binary than cdk.json pins", map[string]any{"p4LayerPath": filepath.Dir(filepath.Dir(genuine))}, "not the configured"},
	} {
		var synthOut bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		_, err := devstack.Synth(ctx, devstack.SynthOptions{Env: "staging", Overrides: tt.overrides, AssetRoot: t.TempDir(), Output: &synthOut})
		cancel()
		if err == nil || !strings.Contains(synthOut.String()+err.Error(), tt.want) {
			t.Errorf("%s: synth %v\n%s\nwant a refusal naming %q", tt.name, err, synthOut.String(), tt.want)
		}
	}
}

// repoRoot is the module root (the integration package's parent).
func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(wd)
}
