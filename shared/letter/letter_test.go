package letter

import (
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/domain"
)

// A letter is the same for every recipient until Ended: each one's
// reference closes the text part's signature and the HTML document, the
// token escaped there; the bodies before it are the letter's, unchanged.
func TestEnded(t *testing.T) {
	l := Write(42, 2, Content{Author: "alice", Description: "Fix\nmore", JobID: "job-1",
		Review: domain.ReviewResult{Findings: []domain.Finding{{ID: "F1", Severity: "high", Category: "bug", Title: "t", File: "//d/a.c", Line: 1, Message: "m"}}}})
	if !strings.HasPrefix(l.Subject, "[Criticizer] CL 42 v2: 1 finding (1 high) - Fix") || l.JobID != "job-1" {
		t.Fatalf("letter subject %q, job %q", l.Subject, l.JobID)
	}
	for _, tt := range []struct{ token, text, html string }{
		{"abc123", "\n-- \nCriticizer\nReference: abc123\n", " &middot; Reference: abc123</small></p>\n</body></html>\n"},
		{"a<b>&c", "\nReference: a<b>&c\n", " &middot; Reference: a&lt;b&gt;&amp;c</small></p>\n</body></html>\n"},
	} {
		text, html := l.Ended(tt.token)
		if !strings.HasPrefix(text, l.Text) || !strings.HasSuffix(text, tt.text) {
			t.Errorf("token %q: text ends %q, want %q", tt.token, text[max(0, len(text)-60):], tt.text)
		}
		if !strings.HasPrefix(html, l.HTML) || !strings.HasSuffix(html, tt.html) || strings.Count(html, "</html>") != 1 {
			t.Errorf("token %q: HTML ends %q, want %q", tt.token, html[max(0, len(html)-80):], tt.html)
		}
	}
}
