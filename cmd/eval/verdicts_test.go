package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/rerun"
)

func writeOutcomes(t *testing.T, recs ...outcome.Record) string {
	t.Helper()
	var b bytes.Buffer
	for _, r := range recs {
		line, _ := json.Marshal(r)
		b.Write(append(line, '\n'))
	}
	path := filepath.Join(t.TempDir(), "outcomes.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A candidate's findings are judged by the recorded fate of the same
// finding (fingerprint) first, else by the majority of its kind's judged
// fates; a tie, an unjudged or an unseen kind gives no verdict.
func TestVerdictsJudgeByFingerprintThenKind(t *testing.T) {
	cases, err := loadCorpus("../../eval/corpus")
	if err != nil {
		t.Fatal(err)
	}
	cs := cases[0].Changeset(1000)
	file := cs.Files[0].DepotPath
	same := domain.Finding{File: file, Line: 6, Category: "security", Severity: "high", Title: "Unbounded strcpy", RuleID: "r1", Message: "m"}
	fp := rerun.Distinct([]domain.Finding{same}, &cs)[0].Fingerprint
	byKind := domain.Finding{File: file, Line: 7, Category: "security", Severity: "high", Title: "x", RuleID: "r2", Message: "m"}
	tie := domain.Finding{File: file, Line: 5, Category: "style", Severity: "low", Title: "y", RuleID: "r3", Message: "m"}
	unseen := domain.Finding{File: file, Line: 4, Category: "bug", Severity: "low", Title: "Never seen", Message: "m"}
	path := writeOutcomes(t,
		// The same finding dismissed, though its kind is otherwise accepted.
		outcome.Record{Fingerprint: fp, Fate: outcome.Dismissed, Category: "security", Kind: "r1", PromptVersion: "1.0.0", Model: "m"},
		outcome.Record{Fingerprint: "o1", Fate: outcome.Addressed, Category: "security", Kind: "r1", PromptVersion: "1.0.0", Model: "m"},
		outcome.Record{Fingerprint: "o2", Fate: outcome.Addressed, Category: "security", Kind: "r1", PromptVersion: "1.0.0", Model: "m"},
		// r2: accepted twice, dismissed once.
		outcome.Record{Fingerprint: "o3", Fate: outcome.Resolved, Category: "security", Kind: "r2", PromptVersion: "1.2.0", Model: "m"},
		outcome.Record{Fingerprint: "o4", Fate: outcome.Liked, Category: "security", Kind: "r2", PromptVersion: "1.2.0", Model: "m"},
		outcome.Record{Fingerprint: "o5", Fate: outcome.Disliked, Category: "security", Kind: "r2", PromptVersion: "1.2.0", Model: "m"},
		// r3: one each; and an e-mail-only finding, unknown.
		outcome.Record{Fingerprint: "o6", Fate: outcome.Archived, Category: "style", Kind: "r3", PromptVersion: "1.2.0", Model: "m"},
		outcome.Record{Fingerprint: "o7", Fate: outcome.Verified, Category: "style", Kind: "r3", PromptVersion: "1.2.0", Model: "m"},
		outcome.Record{Fingerprint: "o8", Fate: outcome.Unknown, Category: "bug", Kind: outcome.Kind(unseen), PromptVersion: "1.2.0", Model: "m"},
	)
	rec, err := loadOutcomes(path)
	if err != nil {
		t.Fatal(err)
	}
	var p Verdicts
	p.add(rec, resultWith(same, byKind, tie, unseen), &cs)
	if want := (Verdicts{Findings: 4, ByFingerprint: 1, ByKind: 1, Accepted: 1, Dismissed: 1, NoVerdict: 2}); p != want {
		t.Errorf("verdicts = %+v, want %+v", p, want)
	}
	var out bytes.Buffer
	printVerdicts(&out, path, rec, []Score{{Provider: "p", Model: "m", PromptVersion: "1.2.0", Verdicts: p}})
	for _, want := range []string{
		"| prompt version 1.0.0 | 3 | 2 | 1 | 0 | 0 | 0.67 (2 of 3) |",
		"| prompt version 1.2.0 | 6 | 3 | 2 | 0 | 1 | 0.60 (3 of 5) |",
		"| p | m | 1.2.0 | 4 | 1 | 1 | 1 | 1 | 2 | 0.50 (1 of 2) |",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("verdict tables lack %q:\n%s", want, out.String())
		}
	}
	// A file that is not an export is refused, naming the line.
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	_ = os.WriteFile(bad, []byte(`{"fp":"a","fate":"liked"}`+"\nnot json\n"), 0o644)
	if _, err := loadOutcomes(bad); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a malformed export: %v", err)
	}
}

// `make eval -outcomes`: the stand-in's strcpy and sprintf findings, kinds
// reviewers dismissed, would be dismissed; its TODO findings, a kind they
// accepted, accepted.
func TestEvalJudgesByRecordedOutcomes(t *testing.T) {
	var recs []outcome.Record
	for i, r := range []struct {
		cat, kind string
		fate      outcome.Fate
	}{
		{"security", "standin.strcpy", outcome.Dismissed}, {"security", "standin.strcpy", outcome.Disliked},
		{"security", "standin.sprintf", outcome.Archived}, {"maintainability", "standin.todo", outcome.Addressed},
	} {
		recs = append(recs, outcome.Record{Fingerprint: "rec" + string(rune('a'+i)), Fate: r.fate, Category: r.cat, Kind: r.kind, PromptVersion: "1.0.0", Model: "real-model"})
	}
	var out bytes.Buffer
	o := options{corpus: "../../eval/corpus", provider: "standin", prompts: "1.0.0", timeout: 10 * time.Second, outcomes: writeOutcomes(t, recs...), verbose: true}
	if err := run(context.Background(), o, &out); err != nil {
		t.Fatal(err)
	}
	var row []string
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "| standin | standin-reviewer-1 | 1.0.0 |") && strings.Count(line, "|") == 11 {
			row = strings.Split(strings.Trim(line, "| "), " | ")
		}
	}
	if len(row) != 10 {
		t.Fatalf("no verdicts row:\n%s", out.String())
	}
	// findings, by fingerprint, by kind, accepted, dismissed, no verdict, acceptance
	todo := strings.Count(out.String(), "TODO left in code")
	unbounded := strings.Count(out.String(), "Unbounded strcpy") + strings.Count(out.String(), "Unbounded sprintf")
	if row[4] != "0" || todo == 0 || unbounded <= todo || row[6] != strconv.Itoa(todo) || row[7] != strconv.Itoa(unbounded) || !strings.Contains(out.String(), "| model real-model | 4 | 1 | 3 |") {
		t.Errorf("verdicts row %v: want the %d TODO findings accepted and the %d strcpy and sprintf ones dismissed, judged by kind\n%s", row, todo, unbounded, out.String())
	}
}
