package fetchstage

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/criticizer/criticizer/internal/standin/p4depot"
	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/depot"
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
