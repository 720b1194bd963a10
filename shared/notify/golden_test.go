package notify

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/finding"
	"github.com/criticizer/criticizer/shared/ledger"
	"github.com/criticizer/criticizer/shared/rerun"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// goldenContent is a review as the pipeline hands it over: findings from
// several files, the redacted changeset they point into, what was skipped or
// cut, token usage, and a Swarm review link.
func goldenContent() content {
	c := testContent()
	c.ReviewURL = "https://swarm.example.com/reviews/4711"
	c.Changeset = &domain.Changeset{Changelist: 12345, Files: []domain.FileChange{
		{DepotPath: "//depot/app/a.go", Diff: "@@ -40,6 +40,8 @@ func login() {\n" +
			" \tuser := r.FormValue(\"user\")\n" +
			" \t// look the user up\n" +
			"+\tq := \"SELECT * FROM users WHERE name = '\" + user + \"'\"\n" +
			"+\trows, err := db.Query(q)\n" +
			" \tif err != nil {\n" +
			" \t\treturn err\n" +
			"-\t}\n" +
			"+\t} // <b>not bold</b> & \"quoted\"\n" +
			" \tdefer rows.Close()\n"},
		{DepotPath: "//depot/app/b.go", Diff: "@@ -1,2 +1,3 @@\n package app\n+var x_y_z = 1\n+var token = \"[REDACTED:generic-api-key]\"\n"},
	}}
	c.Review.Meta = domain.ReviewMeta{
		PromptVersion: "1.2.0", Chunks: 2, ModelCalls: 3, FilesTotal: 5, FilesReviewed: 2, DroppedFindings: 2, OutOfView: 1,
		HiddenByCap: 3, WithheldAsDismissed: 2, Rules: []string{"//depot/app/.criticizer.yaml@12344"},
		RulesRejected: []string{"//depot/gen/.criticizer.yaml@12344: /max_findings: must be >= 1 but found 0 (defaults applied)"},
		InputTokens:   12345, OutputTokens: 678, CachedInputTokens: 8000, EstimatedCostUSD: 0.02172,
		SkippedFiles:   []domain.SkippedFile{{File: "//depot/app/logo.png", Reason: "no_textual_diff"}, {File: "//depot/gen/huge.pb.go", Reason: "over_byte_limit", Bytes: 9000000}},
		TruncatedFiles: []domain.TruncatedFile{{File: "//depot/app/big.go", ReviewedBytes: 65536, OriginalBytes: 200000}},
	}.Map()
	return c
}

// TestComposeGolden pins both parts of the e-mail byte for byte. Run with
// -update after an intended change and review the diff.
func TestComposeGolden(t *testing.T) {
	m, err := compose(testKey, goldenContent())
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []struct{ name, got string }{{"email.txt", m.Text}, {"email.html", m.HTML}} {
		path := filepath.Join("testdata", part.name+".golden")
		if *update {
			if err := os.MkdirAll("testdata", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(part.got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./shared/notify -run TestComposeGolden -update)", err)
		}
		if part.got != string(want) {
			t.Errorf("%s differs from %s:\n%s", part.name, path, part.got)
		}
	}
	// What the goldens must show, so an -update cannot pin a regression.
	for _, want := range []string{
		"Review:      https://swarm.example.com/reviews/4711",
		"   >    42 | \tq := \"SELECT * FROM users WHERE name = '\" + user + \"'\"",
		"Not reviewed: 2 files", "//depot/app/logo.png (no textual diff: binary, deleted or empty)",
		"Reviewed in part: 1 file", "Dropped findings: 2", "tokens 12345 in, 678 out, 3 model calls, 8000 input from the prompt cache, est. $0.0217 at list prices",
		"[REDACTED:generic-api-key]",
		"Coverage: reviewed 2 of 5 files; partly reviewed 1 (cut to fit); skipped 2: 1 no textual diff, 1 over the size limit.",
		"Review rules rejected: //depot/gen/.criticizer.yaml@12344: /max_findings: must be >= 1",
		"3 more findings not shown: the review rules cap", "1 named a line the model was not shown",
		"2 findings withheld as repeatedly dismissed here (criticizer outcomes suppressions lists them",
	} {
		want = strings.ReplaceAll(want, "\t", "    ")
		if !strings.Contains(m.Text, want) {
			t.Errorf("text part lacks %q", want)
		}
	}
	for _, want := range []string{
		`<a href="https://swarm.example.com/reviews/4711">`, "&lt;b&gt;not bold&lt;/b&gt; &amp; &#34;quoted&#34;",
		"<b>   42 | ", "Dropped findings: 2", "<p>2 findings withheld as repeatedly dismissed here (",
	} {
		if !strings.Contains(m.HTML, want) {
			t.Errorf("html part lacks %q", want)
		}
	}
	if strings.Contains(m.HTML, "<b>not bold</b>") {
		t.Error("html part does not escape code")
	}
}

// rerunContent is goldenContent as review version 2: its SQL finding was
// found in version 1 too (still open), the others are new; of version 1's
// other findings, one is gone from a file reviewed in full (resolved, named
// by version 1's result), one from a file whose result has expired
// (resolved, by file, line and severity), and one was in a file skipped
// this time (not re-checked).
func rerunContent(t *testing.T) (delivery.Key, content) {
	t.Helper()
	c := goldenContent()
	meta := domain.ReadReviewMeta(c.Review.Meta)
	meta.HiddenByCap = 0 // with findings hidden by the cap, nothing could be called resolved
	c.Review.Meta = meta.Map()
	cur := rerun.Distinct(c.Review.Findings, c.Changeset)
	var sql string
	for _, f := range cur {
		if f.ID == "F1" {
			sql = f.Fingerprint
		}
	}
	prev := &ledger.Version{Version: 1, JobID: "job-0000", Findings: []ledger.Finding{
		{Fingerprint: sql, File: "//depot/app/a.go", Line: 40, Severity: "high"},
		{Fingerprint: "11aa", File: "//depot/app/a.go", Line: 12, Severity: "medium"},
		{Fingerprint: "22bb", File: "//depot/app/b.go", Line: 2, Severity: "critical"},
		{Fingerprint: "33cc", File: "//depot/app/logo.png", Line: 1, Severity: "low"},
	}}
	g := rerun.Compare(prev, cur, rerun.FullyReviewed(c.Changeset, meta), meta.Withheld)
	g.Name(domain.ReviewResult{Findings: []domain.Finding{{ID: finding.ID("11aa"), Title: "Unchecked <error>"}}})
	c.Rerun = g
	k := testKey
	k.ReviewVersion = 2
	return k, c
}

// TestComposeRerunGolden pins the e-mail of a rerun: grouped new / still
// open / resolved, with the count of findings not re-checked and the
// version compared with.
func TestComposeRerunGolden(t *testing.T) {
	k, c := rerunContent(t)
	m, err := compose(k, c)
	if err != nil {
		t.Fatal(err)
	}
	goldenCheck(t, m, "email.rerun")
	if want := "[Criticizer] CL 12345 v2: 3 findings (1 high) [partial: 2 of 5 files reviewed]; since v1: 2 new, 2 resolved - Fix login bug"; m.Subject != want {
		t.Errorf("Subject = %q, want %q", m.Subject, want)
	}
	// What a reader must see, so an -update cannot pin a regression.
	text := m.Text
	for _, want := range []string{
		"Since review version 1 (job job-0000): 2 new, 1 still open, 2 resolved, 1 not re-checked.",
		"NEW (2)", "STILL OPEN (1)", "RESOLVED (2)",
		"[MEDIUM] //depot/app/a.go:12  Unchecked <error>", "  [CRITICAL] //depot/app/b.go:2\n",
		"1 earlier finding not re-checked",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text part lacks %q", want)
		}
	}
	newAt, openAt, resolvedAt := strings.Index(text, "NEW (2)"), strings.Index(text, "STILL OPEN (1)"), strings.Index(text, "RESOLVED (2)")
	if sqlAt := strings.Index(text, "SQL built from input"); !(newAt < openAt && openAt < sqlAt && sqlAt < resolvedAt) {
		t.Errorf("sections out of order, or the still open finding not under STILL OPEN: new %d, still open %d, SQL %d, resolved %d", newAt, openAt, sqlAt, resolvedAt)
	}
	if n := strings.Index(text, "Naming"); n < newAt || n > openAt {
		t.Error("the new finding is not under NEW")
	}
	for _, want := range []string{"<h2>New (2)</h2>", "<h2>Still open (1)</h2>", "<h2>Resolved (2)</h2>", "Unchecked &lt;error&gt;"} {
		if !strings.Contains(m.HTML, want) {
			t.Errorf("html part lacks %q", want)
		}
	}
}

// goldenCheck compares m's parts with testdata/<name>.{txt,html}.golden,
// or rewrites them under -update.
func goldenCheck(t *testing.T, m *Message, name string) {
	t.Helper()
	for _, part := range []struct{ name, got string }{{name + ".txt", m.Text}, {name + ".html", m.HTML}} {
		path := filepath.Join("testdata", part.name+".golden")
		if *update {
			if err := os.WriteFile(path, []byte(part.got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./shared/notify -run %s -update)", err, t.Name())
		}
		if part.got != string(want) {
			t.Errorf("%s differs from %s:\n%s", part.name, path, part.got)
		}
	}
}
