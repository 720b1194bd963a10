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
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/p4"
	"github.com/criticizer/criticizer/shared/redact"
	"github.com/criticizer/criticizer/shared/result"
)

// TestRulesAreReadAsBeforeTheChange runs the fetch stage against the p4
// stand-in's fixture depot, whose //depot/libs/.criticizer.yaml changes
// over changes 12360-12364: each change is reviewed under the rules file as
// the submitted depot held it before the change, never under its own edit
// of it (submitted: @N-1; shelved: the submitted head, not the shelved
// copy), and an invalid file is recorded with why it was rejected.
func TestRulesAreReadAsBeforeTheChange(t *testing.T) {
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
	allow, _ := depot.NewAllowList([]string{"//depot/projectA/...", "//depot/libs/..."}, nil)
	fetcher, _ := p4.NewFetcher(runner, allow, nil)
	red, err := redact.New(redact.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	mem := artifacts.NewMemoryBucket()
	stage := &Fetch{P4: fetcher, Rules: fetcher, Redactor: red, Raw: artifacts.New(mem, "raw"), Redacted: artifacts.New(mem, "red"), Log: slog.New(slog.DiscardHandler)}

	const frame, gen = "//depot/libs/engine/frame.cpp", "//depot/libs/engine/frame.generated.h"
	for _, tc := range []struct {
		cl       int64
		shelved  bool
		source   string
		rejected string // a reason the file was rejected, "" for accepted
		ignored  map[string]bool
	}{
		// Its own edit would ignore *.cpp; the rules of @12360 apply.
		{cl: 12361, source: "//depot/libs/.criticizer.yaml@12360", ignored: map[string]bool{frame: false, gen: true}},
		// Its own edit breaks the file; @12361 (ignore *.cpp) applies.
		{cl: 12362, source: "//depot/libs/.criticizer.yaml@12361", ignored: map[string]bool{frame: true}},
		// The file is invalid as of @12362: reported, defaults apply.
		{cl: 12363, source: "//depot/libs/.criticizer.yaml@12362", rejected: "/max_findings", ignored: map[string]bool{frame: false}},
		// Shelved: the submitted head (invalid), never the shelved copy (ignore everything).
		{cl: 12364, shelved: true, source: "//depot/libs/.criticizer.yaml#head", rejected: "/severity_threshold", ignored: map[string]bool{frame: false}},
	} {
		id := "rules-" + strings.TrimSpace(time.Duration(tc.cl).String())
		if _, err := stage.Process(context.Background(), &job.Job{ID: id, Changelist: tc.cl, Shelved: tc.shelved}); err != nil {
			t.Fatalf("change %d: %v", tc.cl, err)
		}
		var files []domain.RulesFile
		if err := stage.Redacted.GetJSON(context.Background(), artifacts.Key(id, domain.RulesArtifact), &files); err != nil {
			t.Fatalf("change %d: rules artifact: %v", tc.cl, err)
		}
		rs := result.ResolveRules(files) // as the llm stage does
		if len(rs.Roots) != 1 || rs.Roots[0].Source != tc.source || rs.Roots[0].Root != "//depot/libs/" {
			t.Fatalf("change %d: roots = %+v", tc.cl, rs.Roots)
		}
		_, rejected := rs.Describe()
		switch {
		case tc.rejected == "" && len(rejected) > 0:
			t.Errorf("change %d: rejected %v", tc.cl, rejected)
		case tc.rejected != "" && (len(rejected) == 0 || !strings.Contains(strings.Join(rejected, "\n"), tc.rejected)):
			t.Errorf("change %d: rejected %v, want a reason naming %s", tc.cl, rejected, tc.rejected)
		}
		for file, want := range tc.ignored {
			if got := rs.Ignored(file); got != want {
				t.Errorf("change %d: %s ignored = %v, want %v", tc.cl, file, got, want)
			}
		}
	}
	// A change under no root with a rules file stores none.
	if _, err := stage.Process(context.Background(), &job.Job{ID: "no-rules", Changelist: 12349}); err != nil {
		t.Fatal(err)
	}
	if keys := mem.Keys("no-rules/" + domain.RulesArtifact); len(keys) != 0 {
		t.Errorf("rules stored for a change without rules: %v", keys)
	}
}

type fakeRules []domain.RulesFile

func (f fakeRules) RulesFiles(context.Context, int64, bool, []string, string) ([]domain.RulesFile, error) {
	return append([]domain.RulesFile(nil), f...), nil
}

type fakeChange struct{ cs domain.Changeset }

func (f fakeChange) FetchSince(_ context.Context, _ int64, _ bool, _ p4.Since, sink func(int, domain.FileChange) error) (domain.Changeset, error) {
	for i, fc := range f.cs.Files {
		if err := sink(i, fc); err != nil {
			return domain.Changeset{}, err
		}
	}
	return f.cs, nil
}

// TestRulesFilesAreStoredRedacted: a rules file's text enters the prompt
// and may be quoted by a rejection, so it is stored redacted like the diffs.
func TestRulesFilesAreStoredRedacted(t *testing.T) {
	red, err := redact.New(redact.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	mem := artifacts.NewMemoryBucket()
	cs := domain.Changeset{Changelist: 7, User: "alice", UserEmail: "alice@example.com",
		Files: []domain.FileChange{{DepotPath: "//depot/game/a.cpp", Action: "edit", Type: "text", Diff: "@@ -1 +1 @@\n-a\n+b\n"}}}
	stage := &Fetch{P4: fakeChange{cs}, Redactor: red, Raw: artifacts.New(mem, "raw"), Redacted: artifacts.New(mem, "red"), Log: slog.New(slog.DiscardHandler),
		Rules: fakeRules{{Root: "//depot/game/", Source: "//depot/game/.criticizer.yaml@6",
			Content: "instructions:\n  - paths: ['**']\n    text: 'use key AKIAQX7N3PLV2KD5RTWE for the test bucket'\n"}}}
	if _, err := stage.Process(context.Background(), &job.Job{ID: "red-rules", Changelist: 7}); err != nil {
		t.Fatal(err)
	}
	var files []domain.RulesFile
	if err := stage.Redacted.GetJSON(context.Background(), artifacts.Key("red-rules", domain.RulesArtifact), &files); err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || strings.Contains(files[0].Content, "AKIAQX7N3PLV2KD5RTWE") || !strings.Contains(files[0].Content, "[REDACTED:aws-access-token]") {
		t.Errorf("stored rules = %+v", files)
	}
}
