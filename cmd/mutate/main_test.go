package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The checked-in list is complete and follows the code: every original
// snippet is in its file exactly once (make mutate fails otherwise), and the
// guarantees the issue named as untested are on it.
func TestMutationListFollowsTheCode(t *testing.T) {
	muts, err := Load("mutations.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := Check("../..", muts); err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, m := range muts {
		ids[m.ID] = true
		for _, p := range m.Packages {
			if strings.Contains(p, "...") || strings.Contains(p, "integration") {
				t.Errorf("%s runs %s: a mutation names narrow unit-test packages", m.ID, p)
			}
		}
	}
	for _, id := range []string{"reconciling-row-sends", "redaction-policy-ignored", "local-time-clock", "retention-without-ttl-filter", "canary-20x",
		"owner-predicate-dropped", "dlq-reason-unsanitized", "retry-after-ignored-by-stage", "stage-spends-other-budget"} {
		if !ids[id] {
			t.Errorf("mutation %s is not on the list", id)
		}
	}
}

func TestLoadRejectsIncompleteEntries(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"no why":       `[{"id":"a","rule":"X-1","file":"f.go","original":"x","replacement":"y","packages":["./p"],"run":"T"}]`,
		"no change":    `[{"id":"a","rule":"X-1","file":"f.go","original":"x","replacement":"x","why":"w","packages":["./p"],"run":"T"}]`,
		"no packages":  `[{"id":"a","rule":"X-1","file":"f.go","original":"x","replacement":"y","why":"w","run":"T"}]`,
		"duplicate id": `[{"id":"a","rule":"X-1","file":"f.go","original":"x","replacement":"y","why":"w","packages":["./p"],"run":"T"},{"id":"a","rule":"X-1","file":"f.go","original":"x","replacement":"y","why":"w","packages":["./p"],"run":"T"}]`,
		"typo'd field": `[{"id":"a","rule":"X-1","file":"f.go","orignal":"x","replacement":"y","why":"w","packages":["./p"],"run":"T"}]`,
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".json")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(p); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
	if err := Check(".", []Mutation{{ID: "gone", File: "main.go", Original: "no such text in main.go\x00"}}); err == nil {
		t.Error("a snippet that is not in the file passed the check")
	}
}
