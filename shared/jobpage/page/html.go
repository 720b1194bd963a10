package page

import (
	"fmt"
	"html"
	"strings"
	"time"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/outcome"
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

func (h *writer) page(p Page) {
	j, state := p.Job, string(p.Job.State)
	h.f(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><meta name="robots" content="noindex,nofollow">
<title>Criticizer: changelist %d v%d</title>
`, j.Changelist, j.ReviewVersion)
	h.WriteString("<style>" + pageCSS + "</style></head>\n") // the constant stylesheet, allowed by its hash
	h.f("<body>\n<h1>Changelist %d, review version %d</h1>\n", j.Changelist, j.ReviewVersion)
	h.f(`<p><span class="state state-%s">%s</span> <span class="muted">job <code>%s</code>`, state, state, j.ID)
	if j.State != job.Succeeded {
		h.f(" &middot; current stage %s", string(j.Stage))
	}
	h.f(" &middot; updated %s</span></p>\n\n<h2>Coverage</h2>", j.UpdatedAt)
	if r := p.Result; r != nil {
		h.coverage(domain.ReadReviewMeta(r.Meta), r.PromptVersion)
		h.findings(r)
	} else {
		h.WriteString("\n<p class=\"muted\">The review has not finished yet.</p>")
	}
	h.deliveries(deliveries(p))
	if p.OutcomesRead {
		h.outcomes(p.Outcomes, p.Dismissals)
	}
	h.WriteString("\n\n<h2>Stages</h2>\n<table><tr><th>stage</th><th>status</th><th>attempts</th><th>last error</th></tr>")
	for _, s := range domain.Stages {
		r := j.StageRecord(s)
		h.f("\n<tr><td>%s</td><td>%s</td><td>%d</td><td>%s</td></tr>", string(s), string(r.Status), r.Attempts, string(r.LastErrorClass))
	}
	h.f("\n</table>\n\n<footer>Criticizer &middot; created %s", j.CreatedAt)
	if j.ExpiresAt > 0 {
		h.f(" &middot; this page and its data expire %s", job.FormatTime(time.Unix(j.ExpiresAt, 0)))
	}
	h.WriteString(".\nRead-only view of findings as stored after redaction; whoever holds this link can read it.</footer>\n</body></html>\n")
}

func (h *writer) coverage(m domain.ReviewMeta, prompt string) {
	h.f("\n<p>%d %s reviewed", m.FilesReviewed, pick(m.FilesReviewed, "file", "files"))
	if len(m.SkippedFiles) > 0 {
		h.f(", %d not reviewed", len(m.SkippedFiles))
	}
	if len(m.TruncatedFiles) > 0 {
		h.f(", %d reviewed in part", len(m.TruncatedFiles))
	}
	h.WriteString(".")
	if prompt != "" {
		h.f(` <span class="muted">Prompt %s, %d model %s.</span>`, prompt, m.ModelCalls, pick(m.ModelCalls, "call", "calls"))
	}
	h.WriteString("</p>")
	if len(m.SkippedFiles) > 0 {
		h.WriteString("\n<h3>Not reviewed</h3>\n<ul>")
		for _, s := range m.SkippedFiles {
			h.f(`<li><code>%s</code> <span class="muted">(%s)</span></li>`, s.File, domain.SkipReason(s.Reason))
		}
		h.WriteString("</ul>")
	}
	if len(m.TruncatedFiles) > 0 {
		h.WriteString("\n<h3>Reviewed in part</h3>\n<ul>")
		for _, t := range m.TruncatedFiles {
			h.f(`<li><code>%s</code> <span class="muted">(first %d of %d bytes)</span></li>`, t.File, t.ReviewedBytes, t.OriginalBytes)
		}
		h.WriteString("</ul>")
	}
	if m.DroppedFindings != 0 {
		h.f("\n<p class=\"muted\">%d findings dropped: the model's answer did not pass validation.</p>", m.DroppedFindings)
	}
}

func (h *writer) findings(r *domain.ReviewResult) {
	h.WriteString("\n<h2>Findings</h2>")
	if s := strings.TrimSpace(r.Summary); s != "" {
		h.f("\n<p class=\"text\">%s</p>", s)
	}
	n := len(r.Findings)
	if n == 0 {
		h.WriteString("\n<p>No findings.</p>")
		return
	}
	h.f("\n<p>%d %s:", n, pick(n, "finding", "findings"))
	for i, c := range render.Counts(r.Findings) {
		if i > 0 {
			h.WriteString(",")
		}
		h.f(` <span class="sev sev-%s">%d %s</span>`, c.Severity, c.N, c.Severity)
	}
	h.WriteString("</p>\n")
	render.HTML(&h.Builder, render.ByFile(r.Findings, nil, 0), false)
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

// outcomes groups a review's outcome records by every dimension of the
// report (outcome.Acceptance, as `criticizer outcomes report`), depot paths
// by the scope a kind is withheld under, and counts those reacted to.
func (h *writer) outcomes(recs []outcome.Record, pol outcome.Policy) {
	h.WriteString("\n<h2>What reviewers did with the findings</h2>")
	if len(recs) == 0 {
		h.WriteString("\n<p class=\"muted\">No finding of this review is recorded yet.</p>")
		return
	}
	reacted := 0
	for _, r := range recs {
		if r.Fate.Accepted() || r.Fate.Dismissive() {
			reacted++
		}
	}
	h.f("\n<p>%d %s recorded for this ", len(recs), pick(len(recs), "finding", "findings"))
	if reacted != 0 {
		h.f("review, %d accepted or dismissed", reacted)
	} else {
		h.WriteString("review, none accepted or dismissed yet")
	}
	h.WriteString(`. <span class="muted">Accepted: addressed, verified, resolved by a later version or liked. Dismissed: disliked, dismissed in a reply or archived. Unknown: no comment to read (e-mail only, or gone), never counted as accepted.</span></p>`)
	for _, d := range outcome.Dimensions {
		dim := strings.ReplaceAll(string(d), "_", " ")
		h.f("\n<h3>By %s</h3>\n<table><tr><th>%s</th><th>findings</th><th>accepted</th><th>dismissed</th><th>open</th><th>unknown</th><th>acceptance</th></tr>", dim, dim)
		for _, r := range outcome.Acceptance(recs, d, pol.PathDepth()) {
			share := "–"
			if r.Share >= 0 {
				share = fmt.Sprintf("%.0f%% (%d of %d)", 100*r.Share, r.Accepted, r.Accepted+r.Dismissed)
			}
			h.f("\n<tr><td><code>%s</code></td><td>%d</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td><td>%s</td></tr>", r.Key,
				r.Findings, r.Accepted, r.Dismissed, r.Open, r.Unknown, share)
		}
		h.WriteString("\n</table>")
	}
}
