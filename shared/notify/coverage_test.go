package notify

import (
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/domain"
)

// TestCoverageIsNeverACleanBill: every e-mail states coverage; "No findings."
// appears only for a review that saw every file in full, and a partial
// review says so in the subject too. A review made without the model says
// why.
func TestCoverageIsNeverACleanBill(t *testing.T) {
	for _, tc := range []struct {
		name        string
		meta        domain.ReviewMeta
		clean       bool
		wantText    []string
		wantSubject string
	}{
		{name: "full", meta: domain.ReviewMeta{FilesTotal: 3, FilesReviewed: 3}, clean: true,
			wantText: []string{"Coverage: reviewed 3 of 3 files.", "No findings."}, wantSubject: "no findings - Fix login bug"},
		{name: "skipped", meta: domain.ReviewMeta{FilesTotal: 40, FilesReviewed: 38,
			SkippedFiles: []domain.SkippedFile{{File: "//d/a.png", Reason: "binary"}, {File: "//d/gen.cs", Reason: "ignored_by_rule"}}},
			wantText:    []string{"Coverage: reviewed 38 of 40 files; skipped 2: 1 binary, 1 ignored by rule.", "not a full review"},
			wantSubject: "no findings [partial: 38 of 40 files reviewed] - Fix login bug"},
		{name: "over budget", meta: domain.ReviewMeta{FilesTotal: 2, FilesReviewed: 1,
			SkippedFiles: []domain.SkippedFile{{File: "//d/b.cpp", Reason: "over_budget"}}},
			wantText: []string{"skipped 1: 1 over the token budget", "//d/b.cpp (over the review's token budget)"}},
		{name: "over the fetch's per-file limit", meta: domain.ReviewMeta{FilesTotal: 2, FilesReviewed: 1,
			SkippedFiles: []domain.SkippedFile{{File: "//d/huge.sql", Reason: domain.OverFileBytes}}},
			wantText: []string{"skipped 1: 1 larger than the per-file limit (p4MaxFileBytes)",
				"//d/huge.sql (larger than the per-file limit (p4MaxFileBytes, 2 MiB by default): not fetched)"}},
		{name: "without model", meta: domain.ReviewMeta{FilesTotal: 1, WithoutModel: "the environment's daily budget of 5 model tokens is spent",
			SkippedFiles: []domain.SkippedFile{{File: "//d/c.cpp", Reason: "over_daily_budget"}}},
			wantText: []string{"The model was not called: the environment's daily budget of 5 model tokens is spent.", "the model was not called"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testContent()
			c.Review.Findings = nil
			c.Review.Meta = tc.meta.Map()
			m, err := compose(testKey, c)
			if err != nil {
				t.Fatal(err)
			}
			for _, body := range []string{m.Text, m.HTML} {
				if strings.Contains(body, "No findings.") != tc.clean {
					t.Errorf("clean bill = %v, want %v:\n%s", !tc.clean, tc.clean, body)
				}
			}
			for _, w := range tc.wantText {
				if !strings.Contains(m.Text, w) {
					t.Errorf("text lacks %q:\n%s", w, m.Text)
				}
			}
			if tc.wantSubject != "" && !strings.HasSuffix(m.Subject, tc.wantSubject) {
				t.Errorf("subject = %q, want suffix %q", m.Subject, tc.wantSubject)
			}
			if !tc.clean && !strings.Contains(m.Subject, "[partial:") {
				t.Errorf("subject of a partial review = %q", m.Subject)
			}
		})
	}
}

// TestEmailGroupsByFingerprint: two entries of one finding (same file, rule
// and code) are one entry in the e-mail, even on different lines.
func TestEmailGroupsByFingerprint(t *testing.T) {
	c := testContent()
	c.Changeset = &domain.Changeset{Files: []domain.FileChange{{DepotPath: "//d/a.c", Diff: "@@ -1,0 +1,6 @@\n+a\n+strcpy(x, y);\n+b\n+c\n+a\n+strcpy(x, y);\n+b\n"}}}
	f := domain.Finding{Severity: "high", Category: "security", Title: "strcpy", File: "//d/a.c", Line: 2, Message: "m", RuleID: "r"}
	g := f
	g.Line = 6
	c.Review.Findings = []domain.Finding{f, g}
	m, err := compose(testKey, c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(m.Text, "1 finding: 1 high.") {
		t.Errorf("text:\n%s", m.Text)
	}
}
