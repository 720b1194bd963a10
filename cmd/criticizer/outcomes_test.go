package main

import (
	"encoding/json"
	"fmt"
	"slices"
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

// TestWriteSuppressions: the listing judges "withheld" by the threshold it
// is given (-after, else DISMISS_THRESHOLD's declared default), says which,
// and that a review rules file may set another for its paths.
func TestWriteSuppressions(t *testing.T) {
	ts := []outcome.Suppression{
		{Scope: "//depot/a/...", Category: "bug", Kind: "r1", Dismissed: 1},
		{Scope: "//depot/a/...", Category: "maintainability", Kind: "standin.todo", Dismissed: 3},
		{Scope: "//depot/b/...", Category: "maintainability", Kind: "standin.todo", Dismissed: 5, Allowed: true},
		{Scope: "//depot/c/...", Category: "style", Kind: "r9", Dismissed: 5},
	}
	def, err := suppressionsAfter(nil)
	if err != nil || def != 3 {
		t.Fatalf("default threshold %d (%v), want DISMISS_THRESHOLD's declared 3", def, err)
	}
	for _, tc := range []struct {
		args     []string
		withheld []string // scopes listed WITHHELD yes
	}{
		{nil, []string{"//depot/a/...", "//depot/c/..."}},
		{[]string{"-after", "5"}, []string{"//depot/c/..."}},
		{[]string{"-after", "1"}, []string{"//depot/a/...", "//depot/a/...", "//depot/c/..."}},
	} {
		after, err := suppressionsAfter(tc.args)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := writeSuppressions(&b, false, slices.Clone(ts), after); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		var yes []string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasSuffix(l, " yes") {
				yes = append(yes, strings.Fields(l)[0])
			}
		}
		if !slices.Equal(yes, tc.withheld) {
			t.Errorf("%v: withheld %v, want %v:\n%s", tc.args, yes, tc.withheld, out)
		}
		for _, want := range []string{fmt.Sprintf("Withheld after %d dismissals", after), "dismissal_suppression.after", "allowed by an operator"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: listing lacks %q:\n%s", tc.args, want, out)
			}
		}
		b.Reset()
		if err := writeSuppressions(&b, true, slices.Clone(ts), after); err != nil || !strings.Contains(b.String(), fmt.Sprintf(`"after":%d`, after)) {
			t.Errorf("%v: JSON %s (%v) does not name the threshold", tc.args, b.String(), err)
		}
	}
	for _, bad := range [][]string{{"-after", "0"}, {"-after", "x"}, {"extra"}} {
		if _, err := suppressionsAfter(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
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
