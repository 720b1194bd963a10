package digest

import (
	"bytes"
	"fmt"
	htmltemplate "html/template"
	"strings"
	"text/template"
	"time"

	"github.com/criticizer/criticizer/shared/modeltext"
	"github.com/criticizer/criticizer/shared/notify"
	"github.com/criticizer/criticizer/shared/outcome"
)

// view is what both templates show. Every string from a person or a
// model (depot paths, rule ids) is plain text made inert
// (modeltext.Plain); the HTML template escapes it again for HTML.
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
		v.Severity = append(v.Severity, row{Label: modeltext.Plain(r.Key), Findings: r.Findings, Accepted: r.Accepted, Dismissed: r.Dismissed, Open: r.Open, Unknown: r.Unknown, Share: share(r)})
	}
	for _, s := range d.Suppressions {
		v.Suppressions = append(v.Suppressions, suppression{Scope: modeltext.Plain(s.Scope), Category: modeltext.Plain(s.Category), Kind: modeltext.Plain(s.Kind)})
	}
	return v
}

const textBody = `Criticizer weekly digest for {{.Week}} ({{.Week.Start.Format "2 Jan"}} – {{.LastDay.Format "2 Jan 2006"}})
Paths: {{join .Paths ", "}}

Reviews touching these paths: {{.Reviews}}
Findings: {{.Total.Findings}}; acceptance {{.Acceptance}} ({{.Total.Accepted}} accepted, {{.Total.Dismissed}} dismissed, {{.Total.Open}} open, {{.Total.Unknown}} unknown)
{{range .Severity}}  {{printf "%-9s" .Label}} {{.Findings}} {{plural .Findings "finding"}}: {{.Accepted}} accepted, {{.Dismissed}} dismissed, {{.Open}} open, {{.Unknown}} unknown; acceptance {{.Share}}
{{end}}{{if .Unlisted}}  and {{.Unlisted}} {{plural .Unlisted "finding"}} of very large reviews, not itemised here
{{end}}
Acceptance is accepted / (accepted + dismissed), as reviewers have reacted so far; a finding told by e-mail only is unknown, never accepted.

Withheld as repeatedly dismissed: {{.Withheld}} {{plural .Withheld "finding"}}
{{if .Suppressions}}Withheld here now (lift with criticizer outcomes allow):
{{range .Suppressions}}  {{.Scope}}  {{.Category}}  {{.Kind}}
{{end}}{{else}}Nothing is withheld under these paths.
{{end}}
Tokens: {{.InputTokens}} in, {{.OutputTokens}} out; cost {{.Cost}}

You receive this because you own these paths and opted in to the weekly digest.
`

const htmlBody = `<!DOCTYPE html>
<html><body>
<h2>Criticizer weekly digest for {{.Week}}</h2>
<p>{{.Week.Start.Format "2 Jan"}} – {{.LastDay.Format "2 Jan 2006"}} · paths: {{range $i, $p := .Paths}}{{if $i}}, {{end}}<code>{{$p}}</code>{{end}}</p>
<p>Reviews touching these paths: <b>{{.Reviews}}</b><br>
Findings: <b>{{.Total.Findings}}</b>; acceptance <b>{{.Acceptance}}</b> ({{.Total.Accepted}} accepted, {{.Total.Dismissed}} dismissed, {{.Total.Open}} open, {{.Total.Unknown}} unknown)</p>
{{if .Severity}}<table border="1" cellpadding="4" cellspacing="0">
<tr><th>severity</th><th>findings</th><th>accepted</th><th>dismissed</th><th>open</th><th>unknown</th><th>acceptance</th></tr>
{{range .Severity}}<tr><td>{{.Label}}</td><td>{{.Findings}}</td><td>{{.Accepted}}</td><td>{{.Dismissed}}</td><td>{{.Open}}</td><td>{{.Unknown}}</td><td>{{.Share}}</td></tr>
{{end}}</table>
{{end}}{{if .Unlisted}}<p>and {{.Unlisted}} findings of very large reviews, not itemised here</p>
{{end}}<p><small>Acceptance is accepted / (accepted + dismissed), as reviewers have reacted so far; a finding told by e-mail only is unknown, never accepted.</small></p>
<p>Withheld as repeatedly dismissed: <b>{{.Withheld}}</b></p>
{{if .Suppressions}}<p>Withheld here now (lift with <code>criticizer outcomes allow</code>):</p>
<ul>
{{range .Suppressions}}<li><code>{{.Scope}}</code> {{.Category}} <code>{{.Kind}}</code></li>
{{end}}</ul>
{{else}}<p>Nothing is withheld under these paths.</p>
{{end}}<p>Tokens: {{.InputTokens}} in, {{.OutputTokens}} out; cost {{.Cost}}</p>
<p><small>You receive this because you own these paths and opted in to the weekly digest.</small></p>
</body></html>
`

// LastDay is the Sunday that ends the week.
func (v view) LastDay() time.Time { return v.Week.End().AddDate(0, 0, -1) }

var (
	funcs   = template.FuncMap{"join": strings.Join, "plural": plural}
	textTpl = template.Must(template.New("text").Funcs(funcs).Parse(textBody))
	htmlTpl = htmltemplate.Must(htmltemplate.New("html").Parse(htmlBody))
)

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// Render returns d's text and HTML bodies.
func Render(d Digest) (text, html string, err error) {
	v := viewOf(d)
	var t, h bytes.Buffer
	if err := textTpl.Execute(&t, v); err != nil {
		return "", "", err
	}
	if err := htmlTpl.Execute(&h, v); err != nil {
		return "", "", err
	}
	return t.String(), h.String(), nil
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
