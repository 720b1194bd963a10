package notify

import (
	"strings"
	"testing"

	"github.com/criticizer/criticizer/internal/rendercheck"
	"github.com/criticizer/criticizer/shared/domain"
)

// Every hostile fragment in every model-written field of a finding (title,
// message, suggestion, category, rule id, confidence) and in the summary
// leaves the e-mail's HTML part without a model-written href, src or
// element and its text part with nothing a GFM autolinker links: the only
// links are the review's and the job page's.
func TestEmailPartsRenderInert(t *testing.T) {
	const review, page = "https://swarm.example/reviews/885", "https://criticizer.example/jobs/job-0001?t=abc"
	for _, h := range rendercheck.Hostile {
		c := testContent()
		c.ReviewURL, c.JobPageURL = review, page
		c.Review.Summary = h
		c.Review.Findings = append(c.Review.Findings, domain.Finding{ID: "F9", Severity: "medium", Category: h, Title: h,
			File: "//depot/app/c.go", Line: 5, Message: h, Suggestion: h, Confidence: h, RuleID: h})
		m, err := compose(testKey, c)
		if err != nil {
			t.Fatal(err)
		}
		if p := rendercheck.MailText(m.Text, review, page); len(p) > 0 {
			t.Errorf("%q: the text part: %s\n%s", h, strings.Join(p, "; "), m.Text)
		}
		if p := rendercheck.MailHTML(m.HTML, review, page); len(p) > 0 {
			t.Errorf("%q: the HTML part: %s", h, strings.Join(p, "; "))
		}
	}
}
