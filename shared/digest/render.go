package digest

import (
	"fmt"
	"html"
	"strings"
	"time"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/modeltext"
	"github.com/criticizer/criticizer/shared/notify"
	"github.com/criticizer/criticizer/shared/outcome"
)

// view is what both bodies show. Every string from a person or a
// model (depot paths, rule ids) is plain text made inert
// (modeltext.Plain); the HTML body escapes it again for HTML.
type view struct {
	Digest
	From, To     string
	Acceptance   string
	Cost         string
	Severity     []row
	Suppressions []suppression
}

type row struct {
	Label                                        string
	Findings, Accepted, Dismissed, Open, Unknown int
	Share                                        string
}

type suppression struct{ Scope, Category, Kind string }

func share(r outcome.Row) string {
	if r.Share < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f%%", 100*r.Share)
}

func viewOf(d Digest) view {
	v := view{Digest: d, Acceptance: share(d.Total), Cost: "not estimated (no prices configured)"}
	if d.CostUSD > 0 {
		v.Cost = fmt.Sprintf("est. $%.2f at list prices", d.CostUSD)
	}
	v.Paths = make([]string, len(d.Paths))
	for i, p := range d.Paths {
		v.Paths[i] = modeltext.Plain(p)
	}
	for _, r := range d.Severity {
		v.Severity = append(v.Severity, row{Label: domain.SeverityWord(r.Key), Findings: r.Findings, Accepted: r.Accepted, Dismissed: r.Dismissed, Open: r.Open, Unknown: r.Unknown, Share: share(r)})
	}
	for _, s := range d.Suppressions {
		v.Suppressions = append(v.Suppressions, suppression{Scope: modeltext.Plain(s.Scope), Category: modeltext.Plain(s.Category), Kind: modeltext.Plain(s.Kind)})
	}
	return v
}

// LastDay is the Sunday that ends the week.
func (v view) LastDay() time.Time { return v.Week.End().AddDate(0, 0, -1) }

// The bodies are written by hand, as shared/render explains; every value
// of the HTML body is escaped by html.EscapeString. A severity is the
// label table's word (shared/domain); a suppression's category is kept as
// stored (inert), since the lift command must name it exactly.

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// Render returns d's text and HTML bodies.
func Render(d Digest) (text, html string, err error) {
	v := viewOf(d)
	return renderText(v), renderHTML(v), nil
}

func renderText(v view) string {
	var b strings.Builder
	t := v.Total
	fmt.Fprintf(&b, "Criticizer weekly digest for %s (%s – %s)\nPaths: %s\n\n", v.Week, v.Week.Start().Format("2 Jan"), v.LastDay().Format("2 Jan 2006"), strings.Join(v.Paths, ", "))
	fmt.Fprintf(&b, "Reviews touching these paths: %d\nFindings: %d; acceptance %s (%d accepted, %d dismissed, %d open, %d unknown)\n",
		v.Reviews, t.Findings, v.Acceptance, t.Accepted, t.Dismissed, t.Open, t.Unknown)
	for _, r := range v.Severity {
		fmt.Fprintf(&b, "  %-9s %d %s: %d accepted, %d dismissed, %d open, %d unknown; acceptance %s\n",
			r.Label, r.Findings, plural(r.Findings, "finding"), r.Accepted, r.Dismissed, r.Open, r.Unknown, r.Share)
	}
	if v.Unlisted != 0 {
		fmt.Fprintf(&b, "  and %d %s of very large reviews, not itemised here\n", v.Unlisted, plural(v.Unlisted, "finding"))
	}
	b.WriteString("\nAcceptance is accepted / (accepted + dismissed), as reviewers have reacted so far; a finding told by e-mail only is unknown, never accepted.\n\n")
	fmt.Fprintf(&b, "Withheld as repeatedly dismissed: %d %s\n", v.Withheld, plural(v.Withheld, "finding"))
	if len(v.Suppressions) > 0 {
		b.WriteString("Withheld here now (lift with criticizer outcomes allow):\n")
		for _, s := range v.Suppressions {
			fmt.Fprintf(&b, "  %s  %s  %s\n", s.Scope, s.Category, s.Kind)
		}
	} else {
		b.WriteString("Nothing is withheld under these paths.\n")
	}
	fmt.Fprintf(&b, "\nTokens: %d in, %d out; cost %s\n\nYou receive this because you own these paths and opted in to the weekly digest.\n", v.InputTokens, v.OutputTokens, v.Cost)
	return b.String()
}

func renderHTML(v view) string {
	var b strings.Builder
	e, t := html.EscapeString, v.Total
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html><body>\n<h2>Criticizer weekly digest for %s</h2>\n<p>%s – %s · paths: ", e(v.Week.String()), e(v.Week.Start().Format("2 Jan")), e(v.LastDay().Format("2 Jan 2006")))
	for i, p := range v.Paths {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "<code>%s</code>", e(p))
	}
	fmt.Fprintf(&b, "</p>\n<p>Reviews touching these paths: <b>%d</b><br>\nFindings: <b>%d</b>; acceptance <b>%s</b> (%d accepted, %d dismissed, %d open, %d unknown)</p>\n",
		v.Reviews, t.Findings, e(v.Acceptance), t.Accepted, t.Dismissed, t.Open, t.Unknown)
	if len(v.Severity) > 0 {
		b.WriteString("<table border=\"1\" cellpadding=\"4\" cellspacing=\"0\">\n<tr><th>severity</th><th>findings</th><th>accepted</th><th>dismissed</th><th>open</th><th>unknown</th><th>acceptance</th></tr>\n")
		for _, r := range v.Severity {
			fmt.Fprintf(&b, "<tr><td>%s</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td><td>%s</td></tr>\n", e(r.Label), r.Findings, r.Accepted, r.Dismissed, r.Open, r.Unknown, e(r.Share))
		}
		b.WriteString("</table>\n")
	}
	if v.Unlisted != 0 {
		fmt.Fprintf(&b, "<p>and %d findings of very large reviews, not itemised here</p>\n", v.Unlisted)
	}
	fmt.Fprintf(&b, "<p><small>Acceptance is accepted / (accepted + dismissed), as reviewers have reacted so far; a finding told by e-mail only is unknown, never accepted.</small></p>\n<p>Withheld as repeatedly dismissed: <b>%d</b></p>\n", v.Withheld)
	if len(v.Suppressions) > 0 {
		b.WriteString("<p>Withheld here now (lift with <code>criticizer outcomes allow</code>):</p>\n<ul>\n")
		for _, s := range v.Suppressions {
			fmt.Fprintf(&b, "<li><code>%s</code> %s <code>%s</code></li>\n", e(s.Scope), e(s.Category), e(s.Kind))
		}
		b.WriteString("</ul>\n")
	} else {
		b.WriteString("<p>Nothing is withheld under these paths.</p>\n")
	}
	fmt.Fprintf(&b, "<p>Tokens: %d in, %d out; cost %s</p>\n<p><small>You receive this because you own these paths and opted in to the weekly digest.</small></p>\n</body></html>\n", v.InputTokens, v.OutputTokens, e(v.Cost))
	return b.String()
}

// Compose builds d's e-mail from from, with the Message-ID and token of
// its (owner, week) identity (Identity). It is no review delivery: it has
// no delivery.Key, and is sent with the zero key (notify senders check
// that a message is sent under the key it was composed for).
func Compose(d Digest, id Identity, from string, date time.Time) (*notify.Message, error) {
	text, html, err := Render(d)
	if err != nil {
		return nil, err
	}
	return &notify.Message{From: from, To: d.Owner, Subject: "Criticizer weekly digest " + d.Week.String(),
		MessageID: id.MessageID(from), Token: id.Token, Date: date, Text: text, HTML: html}, nil
}
