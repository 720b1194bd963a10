package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/outcome"
)

func TestWriteAcceptance(t *testing.T) {
	recs := []outcome.Record{
		{PromptVersion: "1.1", Category: "bug", Fate: outcome.Addressed},
		{PromptVersion: "1.1", Category: "bug", Fate: outcome.Disliked},
		{PromptVersion: "1.2", Category: "style", Fate: outcome.Unknown},
	}
	var b strings.Builder
	if err := writeAcceptance(&b, false, recs, []outcome.Dimension{outcome.ByPromptVersion, outcome.ByCategory}, 2); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"By prompt_version", "By category", "50% (1 of 2)"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "1.2 ") && !strings.HasSuffix(strings.TrimSpace(line), "-") {
			t.Errorf("an unknown-only group shows an acceptance: %q", line)
		}
	}
}

func TestWriteSuppressions(t *testing.T) {
	ts := []outcome.Suppression{
		{Scope: "//depot/a/...", Category: "bug", Kind: "r1", Dismissed: 1},
		{Scope: "//depot/a/...", Category: "maintainability", Kind: "standin.todo", Dismissed: outcome.DismissThreshold},
		{Scope: "//depot/b/...", Category: "maintainability", Kind: "standin.todo", Dismissed: 5, Allowed: true},
	}
	var b strings.Builder
	if err := writeSuppressions(&b, false, ts); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 4 || !strings.Contains(lines[1], "standin.todo") || !strings.HasSuffix(lines[1], "yes") || !strings.Contains(b.String(), "allowed by an operator") {
		t.Fatalf("suppressions:\n%s", b.String())
	}
}

// The export is every record as a JSON line that reads back as it was:
// what `make eval -outcomes` replays.
func TestExportOutcomes(t *testing.T) {
	recs := []outcome.Record{
		{Review: 7, Fingerprint: "fpA", Fate: outcome.Dismissed, File: "//depot/a/x.c", Severity: "high", Category: "security", RuleID: "sqli", PromptVersion: "1.2.0", Model: "m", JobID: "j", Kind: "sqli"},
		{Review: 7, Fingerprint: "fpB", Fate: outcome.Unknown, Category: "bug", Kind: "title:0011"},
	}
	var b strings.Builder
	if err := exportOutcomes(&b, recs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"fp":"fpA"`) || !strings.Contains(lines[0], `"fate":"dismissed"`) || !strings.Contains(lines[0], `"kind":"sqli"`) {
		t.Fatalf("export:\n%s", b.String())
	}
	var back outcome.Record
	if err := json.Unmarshal([]byte(lines[0]), &back); err != nil || back != recs[0] {
		t.Errorf("export reads back as %+v (%v), want %+v", back, err, recs[0])
	}
}
