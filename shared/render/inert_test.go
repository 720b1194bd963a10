package render

import (
	"strings"
	"testing"

	"github.com/criticizer/criticizer/internal/rendercheck"
	"github.com/criticizer/criticizer/shared/domain"
)

const inertPageURL = "https://criticizer.example/jobs/j-1?t=abc"

// inertBodies are the bodies the service posts that carry f's text: its
// comment, anchored and not, and the summary listing it past the inline cap.
func inertBodies(f domain.Finding) []string {
	summary := SwarmSummary(1, 1, map[string]int{"high": 1}, domain.ReviewMeta{}, inertPageURL, "") + NotInline([]domain.Finding{f}, 1)
	return []string{Markdown(f), MarkdownUnanchored(f, 2), summary}
}

// Every hostile fragment in every model-written field of a finding (title,
// message, suggestion, category, rule id, file) posts bodies that render
// with nothing live through Parsedown behind Swarm's Linkify pass and
// through goldmark, and that hold no mention Swarm would take: the only
// link is the job page's.
func TestCommentBodiesRenderInert(t *testing.T) {
	var bodies, where []string
	for _, h := range rendercheck.Hostile {
		base := domain.Finding{Severity: "high", Category: "security", Title: "Unbounded strcpy", File: "//depot/a.c", Line: 3,
			Message: "strcpy copies without a bound.", Suggestion: "strlcpy(d, s, n);", RuleID: "c.strcpy"}
		for field, f := range map[string]domain.Finding{
			"title": with(base, func(f *domain.Finding) { f.Title = h }), "message": with(base, func(f *domain.Finding) { f.Message = h }),
			"suggestion": with(base, func(f *domain.Finding) { f.Suggestion = h }), "category": with(base, func(f *domain.Finding) { f.Category = h }),
			"rule id": with(base, func(f *domain.Finding) { f.RuleID = h }), "file": with(base, func(f *domain.Finding) { f.File = h }),
		} {
			for _, b := range inertBodies(f) {
				bodies, where = append(bodies, b), append(where, field+" "+h)
			}
		}
	}
	probs, err := rendercheck.SwarmComments(bodies, inertPageURL)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range probs {
		if len(p) > 0 {
			t.Errorf("%q in the %s:\n%s\n%s", where[i], strings.SplitN(where[i], " ", 2)[0], bodies[i], strings.Join(p, "\n"))
		}
	}
	if !strings.Contains(bodies[2], "[The review's job page]("+inertPageURL+")") {
		t.Errorf("the summary lost the service's own link: %s", bodies[2])
	}
}

func with(f domain.Finding, edit func(*domain.Finding)) domain.Finding {
	edit(&f)
	return f
}

// FuzzCommentBodies: whatever the model writes in any field, the comment
// bodies render with nothing live through goldmark and hold no mention
// Swarm would take (Parsedown runs in TestCommentBodiesRenderInert: a
// process per input is too slow for a fuzz loop).
func FuzzCommentBodies(f *testing.F) {
	for _, h := range rendercheck.Hostile {
		f.Add(h, h, h)
	}
	f.Fuzz(func(t *testing.T, title, message, suggestion string) {
		fd := domain.Finding{Severity: "high", Category: title, Title: title, File: "//depot/" + title, Line: 3, Message: message, Suggestion: suggestion}
		for _, b := range inertBodies(fd) {
			if p := rendercheck.Markdown(b, inertPageURL); len(p) > 0 {
				t.Fatalf("body:\n%s\n%s", b, strings.Join(p, "\n"))
			}
		}
	})
}
