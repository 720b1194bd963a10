package repocheck

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestCitationsExist keeps the docs and comments from rotting silently:
// every test name, repository path and link (to its heading) they cite must
// exist. A failure names
// each stale citation by file and line.
func TestCitationsExist(t *testing.T) {
	checked, stale, err := StaleCitations("../..")
	if err != nil {
		t.Fatal(err)
	}
	if checked < 500 {
		t.Fatalf("found %d citations; the check would prove nothing", checked)
	}
	for _, s := range stale {
		t.Error(s)
	}
}

// TestStaleCitations runs the check on a small repository: each kind of
// stale citation is reported at its line, and prose that only looks like a
// path or a test name is not.
func TestStaleCitations(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"README.md": "See [design](docs/design.md) and [gone](docs/gone.md#top), `shared/x/x.go` and `shared/y`.\n",
		"docs/design.md": "# Design\n" +
			"`x.TestReal` and `TestReal/sub` hold; `x.TestGone` does not; `y.TestReal` is elsewhere.\n" +
			"Bare `x.go` exists, `DESIGN.md` does not; a depot's `.criticizer.yaml` is not ours.\n" +
			"Prose: and/or, `text/plain`, `//depot/main/...`, `integration/EndToEnd`, `shared/x.Thing`, [web](https://example.com).\n" +
			"```\ngo test -run TestPlaceholder ./shared/nothing\n```\n" +
			"[up](../README.md), `shared/reference/…`, `shared/*/x.go`, `shared/*/none.go`.\n" +
			"## Set up, step `1` — again\n## Set up, step `1` — again\n" +
			"[a](#set-up-step-1--again-1) [b](design.md#design) [c](#set-up-step-2--again) [d](../README.md#top)\n",
		"shared/x/x.go": "// Package x is cited (docs/design.md, shared/x/x_test.go).\n" +
			"// It once lived in shared/old/x.go, DESIGN.md said so, TestReal proves it,\n" +
			"// TestRemoved did. Example output: \"BenchmarkName-2  100 ns/op\". TestKind is a type.\n" +
			"package x\n\ntype TestKind int\n",
		"shared/x/x_test.go": "package x_test\n\nimport \"testing\"\n\nfunc TestReal(t *testing.T) {}\n",
		"integration/doc.go": "package integration\n",
	}
	writeTree(t, root, files)
	_, stale, err := StaleCitations(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"README.md:1: link to docs/gone.md#top: no such file",
		"README.md:1: shared/y: no such file or directory",
		"docs/design.md:2: test x.TestGone does not exist",
		"docs/design.md:2: test y.TestReal: TestReal is declared in x",
		"docs/design.md:3: DESIGN.md: no file of that name in the repository",
		"docs/design.md:8: shared/reference/…: no such file or directory",
		"docs/design.md:8: shared/*/none.go: no such file or directory",
		"docs/design.md:11: link to #set-up-step-2--again: docs/design.md has no heading #set-up-step-2--again",
		"docs/design.md:11: link to ../README.md#top: README.md has no heading #top",
		"shared/x/x.go:2: shared/old/x.go: no such file or directory",
		"shared/x/x.go:2: DESIGN.md: no file of that name in the repository",
		"shared/x/x.go:3: test TestRemoved does not exist",
	}
	slices.Sort(stale)
	slices.Sort(want)
	if !slices.Equal(stale, want) {
		t.Errorf("stale citations:\n got %q\nwant %q", stale, want)
	}
}

// writeTree writes files (slash-separated path under root → content).
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
