package page

import (
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/criticizer/criticizer/internal/rendercheck"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/outcome"
)

// pageMarkup is every element and attribute the page itself writes: a
// browser that parses the page finds no other, whatever the model wrote.
var (
	pageElements = map[string]bool{"html": true, "head": true, "meta": true, "title": true, "style": true, "body": true,
		"h1": true, "h2": true, "h3": true, "p": true, "span": true, "code": true, "b": true, "i": true, "small": true,
		"ol": true, "ul": true, "li": true, "div": true, "table": true, "tbody": true, "tr": true, "th": true, "td": true, "footer": true}
	pageAttributes = map[string]bool{"lang": true, "charset": true, "name": true, "content": true, "class": true, "value": true}
)

// hostilePage is a finished job whose every model-written field (and the
// pipeline's free-text ones a changelist can steer: paths, reasons) is h.
func hostilePage(h string) Page {
	f := domain.Finding{ID: "F-1", Severity: h, Category: h, Title: h, File: h, Line: 3, Message: h, Suggestion: h, Confidence: h, RuleID: h}
	known := f
	known.ID, known.Severity = "F-2", "high"
	r := domain.ReviewResult{SchemaVersion: "1.0", PromptVersion: h, Summary: h, Findings: []domain.Finding{f, known},
		Meta: domain.ReviewMeta{FilesReviewed: 1, ModelCalls: 1,
			SkippedFiles:   []domain.SkippedFile{{File: h, Reason: h}},
			TruncatedFiles: []domain.TruncatedFile{{File: h, ReviewedBytes: 1, OriginalBytes: 2}}}.Map()}
	return Page{Job: finishedJob(jobA), Result: &r, OutcomesRead: true,
		Outcomes: []outcome.Record{{Fate: outcome.Open, PromptVersion: h, Model: h, Category: h, Severity: h, File: h}}}
}

// The job page with hostile model text in every field, parsed by a real
// HTML parser as a browser would: no element or attribute comes from the
// model (no script, image, frame, link, event handler or style), every
// class is the page's own, and the text is shown, not swallowed.
func TestHostileTextIsInertOnThePage(t *testing.T) {
	hostile := append([]string{
		`" onmouseover="alert(1)`, `' onfocus='alert(1)' autofocus x='`, `"><script>alert(1)</script>`,
		`</code></li></ol><a href="javascript:alert(1)">x</a>`, `</style><script>alert(1)</script>`,
		`</title><script>alert(1)</script>`, `<svg onload=alert(1)>`, `<base href="https://evil.example/">`,
		`<meta http-equiv="refresh" content="0;url=https://evil.example">`, "sev-high\" class=\"x",
	}, rendercheck.Hostile...)
	for _, h := range hostile {
		var b strings.Builder
		if err := Render(&b, hostilePage(h)); err != nil {
			t.Fatal(err)
		}
		doc, err := html.Parse(strings.NewReader(b.String()))
		if err != nil {
			t.Fatalf("%q: %v", h, err)
		}
		var text strings.Builder
		var walk func(*html.Node)
		walk = func(n *html.Node) {
			switch n.Type {
			case html.ElementNode:
				if !pageElements[n.Data] {
					t.Errorf("%q: the page has a <%s> element", h, n.Data)
				}
				for _, a := range n.Attr {
					if !pageAttributes[a.Key] || a.Namespace != "" {
						t.Errorf("%q: <%s> has an attribute %s=%q", h, n.Data, a.Key, a.Val)
					}
					if a.Key == "class" && !ownClass(a.Val) {
						t.Errorf("%q: <%s> has a class %q the page does not write", h, n.Data, a.Val)
					}
				}
			case html.TextNode:
				if n.Parent == nil || n.Parent.Data != "style" {
					text.WriteString(n.Data)
				}
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c)
			}
		}
		walk(doc)
		if want := domain.OneLine(h); !strings.Contains(text.String(), want) {
			t.Errorf("%q: the page's text lacks the title %q: it was dropped or became markup", h, want)
		}
	}
}

// ownClass reports whether class is one the page writes, severities and
// states being known words only.
func ownClass(class string) bool {
	for _, c := range strings.Fields(class) {
		switch {
		case c == "muted" || c == "findings" || c == "text" || c == "suggestion" || c == "sev" || c == "state":
		case strings.HasPrefix(c, "sev-") && domain.SeverityWord(strings.TrimPrefix(c, "sev-")) == strings.TrimPrefix(c, "sev-"):
		case c == "state-succeeded" || c == "state-failed" || c == "state-running" || c == "state-queued":
		default:
			return false
		}
	}
	return true
}
