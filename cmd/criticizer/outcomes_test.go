package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/decide"
	"github.com/criticizer/criticizer/shared/digest"
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

// TestWriteSuppressions: the listing judges "withheld" by the one policy,
// says it, names who dismissed each kind with standing and how to lift it,
// and lists one awaiting confirmation as such.
func TestWriteSuppressions(t *testing.T) {
	by := func(pairs ...string) []outcome.Dismissal {
		var out []outcome.Dismissal
		for i := 0; i+1 < len(pairs); i += 2 {
			out = append(out, outcome.Dismissal{Review: int64(len(out) + 1), Fingerprint: "fp", By: []string{pairs[i]}, At: pairs[i+1]})
		}
		return out
	}
	three := by("alice", "2026-11-01T00:00:00Z", "bob", "2026-11-02T00:00:00Z", "alice", "2026-11-03T00:00:00Z")
	ts := []outcome.Suppression{
		{Scope: "//depot/a/...", Category: "bug", Kind: "r1", Dismissed: 1},
		{Scope: "//depot/a/...", Category: "maintainability", Kind: "standin.todo", Dismissed: 3, Dismissals: three},
		{Scope: "//depot/b/...", Category: "maintainability", Kind: "standin.todo", Dismissed: 5, Allowed: true, Dismissals: three},
		{Scope: "//depot/c/...", Category: "style", Kind: "r9", Dismissed: 5}, // five by people with no say
	}
	pol := outcome.DefaultPolicy()
	var b strings.Builder
	if err := writeSuppressions(&b, false, slices.Clone(ts), pol); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	var yes []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 5 && f[5] == "yes" {
			yes = append(yes, f[0])
		}
	}
	if !slices.Equal(yes, []string{"//depot/a/..."}) {
		t.Errorf("withheld %v, want only //depot/a/...:\n%s", yes, out)
	}
	for _, want := range []string{pol.Describe(), "dismissal_suppression.after", "allowed by an operator", "alice on review 1 at 2026-11-01", "criticizer outcomes allow //depot/a/... maintainability standin.todo"} {
		if !strings.Contains(out, want) {
			t.Errorf("listing lacks %q:\n%s", want, out)
		}
	}
	pol.Confirm = true
	b.Reset()
	if err := writeSuppressions(&b, true, slices.Clone(ts), pol); err != nil || !strings.Contains(b.String(), `"state":"awaiting confirmation`) {
		t.Errorf("JSON %s (%v) does not list the suppression awaiting confirmation", b.String(), err)
	}
}

// TestOnePolicyEveryReader: each setting of the noise filter, changed in
// an environment, reads the same in the notify stage, the digest and
// `criticizer outcomes` (cdk.json), through the one loader; the sweeper,
// the webhook and the job page call that loader too.
func TestOnePolicyEveryReader(t *testing.T) {
	for _, tc := range []struct{ key, value, variable string }{
		{"dismissThreshold", "7", "DISMISS_THRESHOLD"},
		{"dismissScopeDepth", "3", "DISMISS_SCOPE_DEPTH"},
		{"dismissMinPeople", "4", "DISMISS_MIN_PEOPLE"},
		{"dismissMinReviews", "5", "DISMISS_MIN_REVIEWS"},
		{"dismissConfirm", "true", "DISMISS_CONFIRM"},
		{"dismissDeciders", "lead,qa", "DISMISS_DECIDERS"},
		{"dismissBotLogins", "lintbot", "DISMISS_BOT_LOGINS"},
		{"swarmGateSeverity", "medium", "SWARM_GATE_SEVERITY"},
	} {
		t.Run(tc.key, func(t *testing.T) {
			val := fmt.Sprintf("%q", tc.value)
			switch tc.key {
			case "dismissConfirm":
				val = tc.value
			case "dismissThreshold", "dismissScopeDepth", "dismissMinPeople", "dismissMinReviews":
				val = tc.value
			case "dismissDeciders", "dismissBotLogins":
				b, _ := json.Marshal(strings.Split(tc.value, ","))
				val = string(b)
			}
			dir := t.TempDir()
			cdk := filepath.Join(dir, "cdk.json")
			if err := os.WriteFile(cdk, []byte(`{"context":{"environments":{"dev":{"`+tc.key+`":`+val+`}}}}`), 0o644); err != nil {
				t.Fatal(err)
			}
			cli, err := policyOf([]string{"--env", "dev", "--cdk", cdk})
			if err != nil {
				t.Fatal(err)
			}
			env := map[string]string{tc.variable: tc.value, "EVIDENCE_PROVIDER": "smtp"}
			notify := decide.SettingsFromEnv(config.NewReaderFrom(env)).Dismissals // decided by the llm stage
			dig := digest.SettingsFromEnv(config.NewReaderFrom(env)).Dismissals
			if fmt.Sprint(cli) != fmt.Sprint(notify) || fmt.Sprint(dig) != fmt.Sprint(notify) {
				t.Fatalf("readers disagree: cli %+v, notify %+v, digest %+v", cli, notify, dig)
			}
			if fmt.Sprint(notify) == fmt.Sprint(outcome.DefaultPolicy()) {
				t.Fatalf("%s=%s changed nothing: %+v", tc.variable, tc.value, notify)
			}
		})
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
	if err := json.Unmarshal([]byte(lines[0]), &back); err != nil || !reflect.DeepEqual(back, recs[0]) {
		t.Errorf("export reads back as %+v (%v), want %+v", back, err, recs[0])
	}
}
