package fetchstage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/criticizer/criticizer/internal/standin/p4depot"
	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/depot"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/p4"
	"github.com/criticizer/criticizer/shared/redact"
)

// TestProcessCarriesTheServersMessage: what the p4 server said reaches the
// stage's error (and so the dead letter's reason) with the reference's class.
func TestProcessCarriesTheServersMessage(t *testing.T) {
	bin, err := p4depot.BuildStandin(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "depot")
	if err := os.CopyFS(dir, os.DirFS("../../internal/standin/p4/depot")); err != nil {
		t.Fatal(err)
	}
	runner, err := p4.NewRunner(p4.Config{Path: bin, Port: dir, User: "ci", Home: t.TempDir(), Timeout: 10 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	allow, _ := depot.NewAllowList([]string{"//depot/projectA/..."}, nil)
	fetcher, _ := p4.NewFetcher(runner, allow, nil)
	red, err := redact.New(redact.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	mem := artifacts.NewMemoryBucket()
	stage := &Fetch{P4: fetcher, Redactor: red, Raw: artifacts.New(mem, "raw"), Redacted: artifacts.New(mem, "red"), Log: slog.New(slog.DiscardHandler)}
	for _, tt := range []struct {
		cl     int64
		class  failure.Class
		reason string
	}{
		{99999, failure.NotFound, "Change 99999 unknown."},
		{9003, failure.AuthDenied, "Perforce password (P4PASSWD) invalid or unset."},
		{12346, failure.PolicyRejected, ""},
	} {
		_, err := stage.Process(context.Background(), &job.Job{ID: "j", Changelist: tt.cl})
		if failure.Classify(err) != tt.class || !strings.Contains(err.Error(), tt.reason) {
			t.Errorf("change %d: %v, want %s with %q", tt.cl, err, tt.class, tt.reason)
		}
	}
	if len(mem.Keys("")) != 0 {
		t.Errorf("artifacts stored for failed fetches: %d", len(mem.Keys("")))
	}
	// A good one stores the raw and redacted changesets.
	if _, err := stage.Process(context.Background(), &job.Job{ID: "ok", Changelist: 12349}); err != nil {
		t.Fatal(err)
	}
	if len(mem.Keys("")) != 2 {
		t.Errorf("%d artifacts, want 2", len(mem.Keys("")))
	}
}

// failingRedactor fails on its nth call, like a rule set that cannot run.
type failingRedactor struct {
	*redact.Redactor
	calls, n atomic.Int64
}

func (f *failingRedactor) Redact(text string) (string, []redact.Match, error) {
	if f.calls.Add(1) == f.n.Load() {
		return "", nil, errors.New("rule engine failed")
	}
	return f.Redactor.Redact(text)
}

// The fetch stage streams each file through the spool as it arrives; what
// it stores must be exactly what fetching the whole changeset and redacting
// it at once would store, byte for byte, its proof must verify, and the
// spool must leave nothing on disk, also when redaction fails half-way.
func TestProcessStreamsTheSameArtifacts(t *testing.T) {
	bin, err := p4depot.BuildStandin(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := p4depot.Generate(dir, p4depot.Spec{Change: 4242, Files: 300}); err != nil {
		t.Fatal(err)
	}
	runner, err := p4.NewRunner(p4.Config{Path: bin, Port: dir, User: "ci", Home: t.TempDir(), Timeout: 30 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	allow, _ := depot.NewAllowList([]string{"//depot/projectA/..."}, nil)
	fetcher, _ := p4.NewFetcher(runner, allow, nil)
	fetcher.WithOptions(p4.Options{BatchFiles: 16}) // many batches, finishing out of order
	red, err := redact.New(redact.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	spoolDir := t.TempDir()
	mem := artifacts.NewMemoryBucket()
	stage := &Fetch{P4: fetcher, Redactor: red, Raw: artifacts.New(mem, "raw"), Redacted: artifacts.New(mem, "red"),
		Log: slog.New(slog.DiscardHandler), SpoolDir: spoolDir}
	res, err := stage.Process(context.Background(), &job.Job{ID: "j", Changelist: 4242, RequestedRecipients: []string{"a@example.com"}})
	if err != nil {
		t.Fatal(err)
	}

	whole, err := fetcher.Fetch(context.Background(), 4242, false)
	if err != nil {
		t.Fatal(err)
	}
	wantRaw, _ := json.Marshal(whole)
	// The redacted artifact: every text redacted on its own, the author's
	// address dropped.
	redacted, total := whole, 0
	redacted.UserEmail = ""
	redacted.Files = slices.Clone(whole.Files)
	texts := []*string{&redacted.Description}
	for i := range redacted.Files {
		texts = append(texts, &redacted.Files[i].Diff, &redacted.Files[i].Interdiff)
	}
	for _, text := range texts {
		out, ms, err := red.Redact(*text)
		if err != nil {
			t.Fatal(err)
		}
		*text, total = out, total+len(ms)
	}
	wantRed, _ := json.Marshal(redacted)
	if total == 0 {
		t.Fatal("the generated change plants credentials; nothing was redacted")
	}
	gotRaw, _ := mem.Get(res.Artifacts.Raw)
	gotRed, _ := mem.Get(res.Artifacts.Redacted)
	if !bytes.Equal(gotRaw, wantRaw) {
		t.Errorf("raw artifact differs from the whole changeset's JSON (%d vs %d bytes)", len(gotRaw), len(wantRaw))
	}
	if !bytes.Equal(gotRed, wantRed) {
		t.Errorf("redacted artifact differs from the redacted changeset's JSON (%d vs %d bytes)", len(gotRed), len(wantRed))
	}
	var back domain.Changeset
	if err := json.Unmarshal(gotRed, &back); err != nil {
		t.Fatal(err)
	}
	if err := red.Verify(res.Artifacts.RedactedProof, back); err != nil {
		t.Errorf("the proof does not verify the stored artifact: %v", err)
	}
	if want := fmt.Sprintf("redactions %d", total); !strings.Contains(res.Detail, want) {
		t.Errorf("detail %q, want %q", res.Detail, want)
	}
	assertEmpty(t, spoolDir)

	failing := &failingRedactor{Redactor: red}
	failing.n.Store(40)
	stage.Redactor, stage.Raw, stage.Redacted = failing, artifacts.New(mem, "raw2"), artifacts.New(mem, "red2")
	_, err = stage.Process(context.Background(), &job.Job{ID: "k", Changelist: 4242, RequestedRecipients: []string{"a@example.com"}})
	if failure.Classify(err) != failure.InternalBug || !strings.Contains(err.Error(), "redaction of //depot/") {
		t.Errorf("a failed redaction gave %v, want INTERNAL_BUG naming the file", err)
	}
	if keys := mem.Keys("jobs/k/"); len(keys) != 0 {
		t.Errorf("a failed fetch stored %v", keys)
	}
	assertEmpty(t, spoolDir)
}

func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	left, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		t.Errorf("left in the spool directory: %s", e.Name())
	}
}
