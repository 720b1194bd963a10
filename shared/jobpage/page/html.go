package page

import (
	"fmt"
	"html"
	"strconv"
	"strings"

	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/render"
)

// The page is written by hand, not with html/template: executing a
// template reaches reflect's MethodByName, which keeps every exported
// method of every type in the jobpage function's binary (the AWS SDK
// clients' hundreds of operations) and made its bootstrap 80% larger.
// Every value goes through html.EscapeString (as the e-mail's, shared/notify),
// safe in text and in the page's double-quoted attributes; only the page's
// own markup and its constant stylesheet are written raw.

// writer is the page being written.
type writer struct{ strings.Builder }

// f writes format with every argument escaped (numbers print as numbers).
func (h *writer) f(format string, args ...any) {
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = html.EscapeString(s)
		}
	}
	fmt.Fprintf(&h.Builder, format, args...)
}

func pick(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func (h *writer) page(v view) {
	h.f(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><meta name="robots" content="noindex,nofollow">
<title>Criticizer: changelist %d v%d</title>
`, v.Changelist, v.Version)
	h.WriteString("<style>" + string(v.CSS) + "</style></head>\n") // the constant stylesheet, allowed by its hash
	h.f("<body>\n<h1>Changelist %d, review version %d</h1>\n", v.Changelist, v.Version)
	h.f(`<p><span class="state state-%s">%s</span> <span class="muted">job <code>%s</code>`, v.State, v.State, v.JobID)
	if v.State != string(job.Succeeded) {
		h.f(" &middot; current stage %s", v.Stage)
	}
	h.f(" &middot; updated %s</span></p>\n\n<h2>Coverage</h2>", v.Updated)
	if v.Reviewed {
		h.coverage(v.Coverage)
		h.findings(v)
	} else {
		h.WriteString("\n<p class=\"muted\">The review has not finished yet.</p>")
	}
	h.deliveries(v.Deliveries)
	if v.OutcomesRead {
		h.outcomes(v)
	}
	h.WriteString("\n\n<h2>Stages</h2>\n<table><tr><th>stage</th><th>status</th><th>attempts</th><th>last error</th></tr>")
	for _, s := range v.Stages {
		h.f("\n<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>", s.Name, s.Status, s.Attempts, s.ErrorClass)
	}
	h.f("\n</table>\n\n<footer>Criticizer &middot; created %s", v.Created)
	if v.Expires != "" {
		h.f(" &middot; this page and its data expire %s", v.Expires)
	}
	h.WriteString(".\nRead-only view of findings as stored after redaction; whoever holds this link can read it.</footer>\n</body></html>\n")
}

func (h *writer) coverage(c coverageView) {
	h.f("\n<p>%d %s reviewed", c.FilesReviewed, pick(c.FilesReviewed, "file", "files"))
	if len(c.Skipped) > 0 {
		h.f(", %d not reviewed", len(c.Skipped))
	}
	if len(c.Truncated) > 0 {
		h.f(", %d reviewed in part", len(c.Truncated))
	}
	h.WriteString(".")
	if c.Prompt != "" {
		h.f(` <span class="muted">Prompt %s, %d model %s.</span>`, c.Prompt, c.ModelCalls, pick(c.ModelCalls, "call", "calls"))
	}
	h.WriteString("</p>")
	if len(c.Skipped) > 0 {
		h.WriteString("\n<h3>Not reviewed</h3>\n<ul>")
		for _, s := range c.Skipped {
			h.f(`<li><code>%s</code> <span class="muted">(%s)</span></li>`, s.File, s.Reason)
		}
		h.WriteString("</ul>")
	}
	if len(c.Truncated) > 0 {
		h.WriteString("\n<h3>Reviewed in part</h3>\n<ul>")
		for _, t := range c.Truncated {
			h.f(`<li><code>%s</code> <span class="muted">(first %d of %d bytes)</span></li>`, t.File, t.Reviewed, t.Original)
		}
		h.WriteString("</ul>")
	}
	if c.Dropped != 0 {
		h.f("\n<p class=\"muted\">%d findings dropped: the model's answer did not pass validation.</p>", c.Dropped)
	}
}

func (h *writer) findings(v view) {
	h.WriteString("\n<h2>Findings</h2>")
	if v.Summary != "" {
		h.f("\n<p class=\"text\">%s</p>", v.Summary)
	}
	if v.Total == 0 {
		h.WriteString("\n<p>No findings.</p>")
		return
	}
	h.f("\n<p>%d %s:", v.Total, pick(v.Total, "finding", "findings"))
	for i, c := range v.Counts {
		if i > 0 {
			h.WriteString(",")
		}
		h.f(` <span class="sev sev-%s">%d %s</span>`, c.Severity, c.N, c.Severity)
	}
	h.WriteString("</p>")
	h.WriteString("\n")
	render.HTML(&h.Builder, v.Files, false)
}

func (h *writer) deliveries(ds []deliveryView) {
	h.WriteString("\n\n<h2>Deliveries</h2>")
	if len(ds) == 0 {
		h.WriteString("\n<p class=\"muted\">Nothing delivered yet.</p>")
		return
	}
	h.WriteString("\n<table><tr><th>channel</th><th>to</th><th>status</th><th>at</th><th>id</th></tr>")
	for _, d := range ds {
		h.f("\n<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>", d.Channel, d.To, d.Status, d.At, d.Ref)
	}
	h.WriteString("\n</table>")
}

func (h *writer) outcomes(v view) {
	h.WriteString("\n<h2>What reviewers did with the findings</h2>")
	if len(v.Acceptance) == 0 {
		h.WriteString("\n<p class=\"muted\">No finding of this review is recorded yet.</p>")
		return
	}
	h.f("\n<p>%d %s recorded for this ", v.Recorded, pick(v.Recorded, "finding", "findings"))
	if v.Reacted != 0 {
		h.f("review, %d accepted or dismissed", v.Reacted)
	} else {
		h.WriteString("review, none accepted or dismissed yet")
	}
	h.WriteString(`. <span class="muted">Accepted: addressed, verified, resolved by a later version or liked. Dismissed: disliked, dismissed in a reply or archived. Unknown: no comment to read (e-mail only, or gone), never counted as accepted.</span></p>`)
	for _, a := range v.Acceptance {
		h.f("\n<h3>By %s</h3>\n<table><tr><th>%s</th><th>findings</th><th>accepted</th><th>dismissed</th><th>open</th><th>unknown</th><th>acceptance</th></tr>", a.Dimension, a.Dimension)
		for _, r := range a.Rows {
			h.f("\n<tr><td><code>%s</code></td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>", r.Key,
				strconv.Itoa(r.Findings), strconv.Itoa(r.Accepted), strconv.Itoa(r.Dismissed), strconv.Itoa(r.Open), strconv.Itoa(r.None), r.Share)
		}
		h.WriteString("\n</table>")
	}
}
