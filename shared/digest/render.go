package digest

import (
	"fmt"
	"html"
	"slices"
	"strings"
	"time"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/modeltext"
	"github.com/criticizer/criticizer/shared/notify"
	"github.com/criticizer/criticizer/shared/outcome"
)

// The bodies are written by hand, as shared/render explains; every value
// of the HTML body is escaped by html.EscapeString. Every string from a
// person or a model (depot paths, rule ids) is plain text made inert
// (modeltext.Plain) first. A severity is the label table's word
// (shared/domain); a suppression's category is kept as stored (inert),
// since the lift command must name it exactly.

func share(r outcome.Row) string {
	if r.Share < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f%%", 100*r.Share)
}

// Render returns d's text and HTML bodies.
func Render(d Digest) (text, html string, err error) {
	d.Paths = slices.Clone(d.Paths)
	for i, p := range d.Paths {
		d.Paths[i] = modeltext.Plain(p)
	}
	cost := "not estimated (no prices configured)"
	if d.CostUSD > 0 {
		cost = fmt.Sprintf("est. $%.2f at list prices", d.CostUSD)
	}
	return renderText(d, cost), renderHTML(d, cost), nil
}

// lastDay is the Sunday that ends the week.
func (d Digest) lastDay() time.Time { return d.Week.End().AddDate(0, 0, -1) }

// suppressions are the kinds withheld now: scope, category and kind, inert.
func (d Digest) suppressions() [][3]string {
	var out [][3]string
	for _, s := range d.Suppressions {
		out = append(out, [3]string{modeltext.Plain(s.Scope), modeltext.Plain(s.Category), modeltext.Plain(s.Kind)})
	}
	return out
}

func renderText(v Digest, cost string) string {
	var b strings.Builder
	t := v.Total
	fmt.Fprintf(&b, "Criticizer weekly digest for %s (%s – %s)\nPaths: %s\n\n", v.Week, v.Week.Start().Format("2 Jan"), v.lastDay().Format("2 Jan 2006"), strings.Join(v.Paths, ", "))
	fmt.Fprintf(&b, "Reviews touching these paths: %d\nFindings: %d; acceptance %s (%d accepted, %d dismissed, %d open, %d unknown)\n",
		v.Reviews, t.Findings, share(t), t.Accepted, t.Dismissed, t.Open, t.Unknown)
	for _, r := range v.Severity {
		fmt.Fprintf(&b, "  %-9s %d %s: %d accepted, %d dismissed, %d open, %d unknown; acceptance %s\n",
			domain.SeverityWord(r.Key), r.Findings, domain.Plural(r.Findings, "finding"), r.Accepted, r.Dismissed, r.Open, r.Unknown, share(r))
	}
	if v.Unlisted != 0 {
		fmt.Fprintf(&b, "  and %d %s of very large reviews, not itemised here\n", v.Unlisted, domain.Plural(v.Unlisted, "finding"))
	}
	b.WriteString("\nAcceptance is accepted / (accepted + dismissed), as reviewers have reacted so far; a finding told by e-mail only is unknown, never accepted.\n\n")
	fmt.Fprintf(&b, "Withheld as repeatedly dismissed: %d %s\n", v.Withheld, domain.Plural(v.Withheld, "finding"))
	if len(v.Suppressions) > 0 {
		b.WriteString("Withheld here now (lift with criticizer outcomes allow):\n")
		for _, s := range v.suppressions() {
			fmt.Fprintf(&b, "  %s  %s  %s\n", s[0], s[1], s[2])
		}
	} else {
		b.WriteString("Nothing is withheld under these paths.\n")
	}
	fmt.Fprintf(&b, "\nTokens: %d in, %d out; cost %s\n\nYou receive this because you own these paths and opted in to the weekly digest.\n", v.InputTokens, v.OutputTokens, cost)
	return b.String()
}

func renderHTML(v Digest, cost string) string {
	var b strings.Builder
	e, t := html.EscapeString, v.Total
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html><body>\n<h2>Criticizer weekly digest for %s</h2>\n<p>%s – %s · paths: ", e(v.Week.String()), e(v.Week.Start().Format("2 Jan")), e(v.lastDay().Format("2 Jan 2006")))
	for i, p := range v.Paths {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "<code>%s</code>", e(p))
	}
	fmt.Fprintf(&b, "</p>\n<p>Reviews touching these paths: <b>%d</b><br>\nFindings: <b>%d</b>; acceptance <b>%s</b> (%d accepted, %d dismissed, %d open, %d unknown)</p>\n",
		v.Reviews, t.Findings, e(share(t)), t.Accepted, t.Dismissed, t.Open, t.Unknown)
	if len(v.Severity) > 0 {
		b.WriteString("<table border=\"1\" cellpadding=\"4\" cellspacing=\"0\">\n<tr><th>severity</th><th>findings</th><th>accepted</th><th>dismissed</th><th>open</th><th>unknown</th><th>acceptance</th></tr>\n")
		for _, r := range v.Severity {
			fmt.Fprintf(&b, "<tr><td>%s</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td><td>%s</td></tr>\n", e(domain.SeverityWord(r.Key)), r.Findings, r.Accepted, r.Dismissed, r.Open, r.Unknown, e(share(r)))
		}
		b.WriteString("</table>\n")
	}
	if v.Unlisted != 0 {
		fmt.Fprintf(&b, "<p>and %d findings of very large reviews, not itemised here</p>\n", v.Unlisted)
	}
	fmt.Fprintf(&b, "<p><small>Acceptance is accepted / (accepted + dismissed), as reviewers have reacted so far; a finding told by e-mail only is unknown, never accepted.</small></p>\n<p>Withheld as repeatedly dismissed: <b>%d</b></p>\n", v.Withheld)
	if len(v.Suppressions) > 0 {
		b.WriteString("<p>Withheld here now (lift with <code>criticizer outcomes allow</code>):</p>\n<ul>\n")
		for _, s := range v.suppressions() {
			fmt.Fprintf(&b, "<li><code>%s</code> %s <code>%s</code></li>\n", e(s[0]), e(s[1]), e(s[2]))
		}
		b.WriteString("</ul>\n")
	} else {
		b.WriteString("<p>Nothing is withheld under these paths.</p>\n")
	}
	fmt.Fprintf(&b, "<p>Tokens: %d in, %d out; cost %s</p>\n<p><small>You receive this because you own these paths and opted in to the weekly digest.</small></p>\n</body></html>\n", v.InputTokens, v.OutputTokens, e(cost))
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
