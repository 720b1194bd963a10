package notify

import (
	"fmt"
	"html"
	"net/url"
	"sort"
	"strings"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/finding"
	"github.com/criticizer/criticizer/shared/modeltext"
)

// The bodies are rendered by hand, not with html/template: reflection-based
// templates disable the linker's dead-method elimination and swell the notify
// binary (issue 9's size budget). Every value from the review, the changeset
// or the description goes through html.EscapeString in the HTML part.

// view is the data both bodies render.
type view struct {
	Key         delivery.Key
	Author      string
	Description string
	JobID       string
	ReviewURL   string
	JobPageURL  string
	Summary     string
	Total       int
	Counts      string
	Files       []fileGroup
	Meta        domain.ReviewMeta
	Schema      string
	Prompt      string
	Token       string
	Rerun       *rerunView // nil for a first version
}

// fileGroup is one file's findings, most severe first.
type fileGroup struct {
	File     string
	Findings []shown
}

// shown is a finding as the e-mail shows it: numbered, with its code.
type shown struct {
	numbered
	Code []codeLine
}

// codeLine is one line of the new revision; Hit marks the lines the finding
// names.
type codeLine struct {
	N    int
	Text string
	Hit  bool
}

// groupByFile groups findings by file. Files come in order of their most
// severe finding (then path); within a file, by severity, line and id. The
// model's output order never changes the e-mail.
func groupByFile(fs []domain.Finding, cs *domain.Changeset, n int) []fileGroup {
	by := map[string][]domain.Finding{}
	for _, f := range fs {
		by[f.File] = append(by[f.File], f)
	}
	files := make([]string, 0, len(by))
	worst := map[string]int{}
	for file, list := range by {
		files = append(files, file)
		w := len(domain.Severities)
		for _, f := range list {
			w = min(w, domain.SeverityRank(f.Severity))
		}
		worst[file] = w
		sort.SliceStable(list, func(i, j int) bool {
			a, b := list[i], list[j]
			ra, rb := domain.SeverityRank(a.Severity), domain.SeverityRank(b.Severity)
			if ra != rb {
				return ra < rb
			}
			if a.Line != b.Line {
				return a.Line < b.Line
			}
			return a.ID < b.ID
		})
	}
	sort.Slice(files, func(i, j int) bool {
		if worst[files[i]] != worst[files[j]] {
			return worst[files[i]] < worst[files[j]]
		}
		return files[i] < files[j]
	})
	code := finding.CodeOf(cs)
	var out []fileGroup
	for _, file := range files {
		g := fileGroup{File: file}
		lines := code(file)
		for _, f := range by[file] {
			n++
			g.Findings = append(g.Findings, shown{numbered: numbered{N: n, Finding: f}, Code: snippet(lines, f.Line, f.EndLine)})
		}
		out = append(out, g)
	}
	return out
}

// Snippet bounds: lines of context around the finding, and at most maxCode
// lines in all, so a finding over a long range stays readable.
const (
	codeContext = 2
	maxCode     = 8
	maxCodeLine = 160 // runes per line
)

func snippet(lines map[int]string, line, end int) []codeLine {
	if len(lines) == 0 || line <= 0 {
		return nil
	}
	if end < line {
		end = line
	}
	from, to := line-codeContext, min(end+codeContext, line+maxCode-1-codeContext)
	var out []codeLine
	for n := max(from, 1); n <= to; n++ {
		text, ok := lines[n]
		if !ok {
			continue
		}
		text = strings.TrimRight(strings.ReplaceAll(text, "\t", "    "), " \r")
		if r := []rune(text); len(r) > maxCodeLine {
			text = string(r[:maxCodeLine-1]) + "…"
		}
		// The change's own code, but a changelist can carry an injection too:
		// a URL in it is written inert like the model's text, so no mail
		// client links it (the code itself is in the review and the diff).
		out = append(out, codeLine{N: n, Text: modeltext.Plain(stripControl(text)), Hit: n >= line && n <= end})
	}
	for _, c := range out {
		if c.Hit {
			return out
		}
	}
	return nil // the diff does not show the line itself: show nothing rather than unrelated code
}

func stripControl(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

// safeURL keeps only an absolute http(s) URL for the review link.
func safeURL(s string) string {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return ""
	}
	return u.String()
}

// maxNamed bounds how many skipped or truncated files the e-mail lists by
// name; the result's meta and the job name them all.
const maxNamed = 50

var skipReasons = map[string]string{
	"no_textual_diff":   "no textual diff: binary, deleted or empty",
	"over_file_bytes":   "larger than the per-file limit (p4MaxFileBytes, 2 MiB by default): not fetched",
	"binary":            "binary",
	"deleted":           "deleted",
	"over_file_limit":   "over the per-changelist file limit",
	"over_byte_limit":   "over the per-changelist size limit",
	"too_large":         "too large to review",
	"ignored_by_rule":   "ignored by the review rules",
	"over_budget":       "over the review's token budget",
	"over_daily_budget": "the environment's daily model budget is spent",
	"model_refused":     "the model refused to review it",
}

// status is what the e-mail says about the review as a whole, before the
// findings: its coverage, and every reason it is less than a full review.
// Both bodies render these lines, so they cannot disagree.
func (v view) status() []string {
	m := v.Meta
	var out []string
	if c := m.Coverage(); c != "" {
		out = append(out, "Coverage: "+c+".")
	}
	if m.WithoutModel != "" {
		out = append(out, "The model was not called: "+oneLine(m.WithoutModel)+". Only what the pipeline knows for certain (committed secrets, coverage) is reported.")
	}
	for _, r := range m.RulesRejected {
		out = append(out, "Review rules rejected: "+oneLine(r)+".")
	}
	if len(m.Rules) > 0 {
		out = append(out, "Review rules: "+oneLine(strings.Join(m.Rules, ", "))+".")
	}
	return out
}

// verdict is the line about the findings' count: "No findings." only for
// a review that saw every file.
func (v view) verdict() string {
	if v.Total > 0 {
		return fmt.Sprintf("%d %s: %s.", v.Total, plural(v.Total, "finding"), v.Counts)
	}
	if v.Meta.Coverage() == "" || v.Meta.Complete() {
		return "No findings."
	}
	return "No findings in the part that was reviewed. This is not a full review: see the coverage above and the files listed below."
}

// hidden says what the review rules, and reviewers' repeated dismissals,
// kept out of the e-mail.
func (v view) hidden() []string {
	m := v.Meta
	var out []string
	if m.HiddenByCap > 0 {
		out = append(out, fmt.Sprintf("%d more %s not shown: the review rules cap the findings of one e-mail (the most severe are shown).", m.HiddenByCap, plural(m.HiddenByCap, "finding")))
	}
	if m.FilteredByRules > 0 {
		out = append(out, fmt.Sprintf("%d %s below the rules' severity threshold or in a disabled category not shown.", m.FilteredByRules, plural(m.FilteredByRules, "finding")))
	}
	if w := m.DismissedWithheld(); w != "" {
		// As the Swarm summary says it: withheld, never silently.
		out = append(out, w+" (criticizer outcomes suppressions lists them; criticizer outcomes allow reports them again).")
	}
	return out
}

func skipReason(r string) string {
	if s, ok := skipReasons[r]; ok {
		return s
	}
	return oneLine(r)
}

func droppedWhy(m domain.ReviewMeta) string {
	s := "the model's answer did not pass validation"
	if m.OutOfView > 0 {
		s += fmt.Sprintf("; %d named a line the model was not shown", m.OutOfView)
	}
	return s
}

// footer is the signature line's details.
func (v view) footer() string {
	var parts []string
	if v.Schema != "" || v.Prompt != "" {
		parts = append(parts, fmt.Sprintf("schema %s, prompt %s", v.Schema, v.Prompt))
	}
	if u := v.Meta.Usage(); u != "" {
		parts = append(parts, u)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

func renderText(v view) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Criticizer reviewed changelist %d (review version %d).\n\n", v.Key.Changelist, v.Key.ReviewVersion)
	field := func(name, val string) {
		if val != "" {
			fmt.Fprintf(&b, "%-13s%s\n", name+":", val)
		}
	}
	field("Author", v.Author)
	field("Description", v.Description)
	field("Job", v.JobID)
	field("Review", v.ReviewURL)
	if v.JobPageURL != "" {
		b.WriteString("\nView this review: " + v.JobPageURL + "\n")
	}
	b.WriteString("\n")
	if v.Summary != "" {
		b.WriteString("Summary:\n" + indent(v.Summary, "  ") + "\n\n")
	}
	for _, l := range v.status() {
		b.WriteString(l + "\n")
	}
	b.WriteString(v.verdict() + "\n")
	if r := v.Rerun; r != nil {
		textRerun(&b, r)
	} else {
		textFiles(&b, v.Files)
	}
	textCoverage(&b, v)
	// "-- " with the trailing space is the RFC 3676 signature separator.
	b.WriteString("\n-- \nCriticizer" + v.footer())
	b.WriteString("\nReference: " + v.Token + "\n")
	return b.String()
}

// textRerun is a rerun's findings in the text part: new, still open,
// resolved, and what was not re-checked.
func textRerun(b *strings.Builder, r *rerunView) {
	b.WriteString(r.line() + "\n")
	section := func(title string, n int) {
		head := fmt.Sprintf("%s (%d)", title, n)
		b.WriteString("\n" + head + "\n" + strings.Repeat("#", len(head)) + "\n")
	}
	if r.NNew > 0 {
		section("NEW", r.NNew)
		textFiles(b, r.New)
	}
	if r.NOpen > 0 {
		section("STILL OPEN", r.NOpen)
		textFiles(b, r.Open)
	}
	if len(r.Resolved) > 0 {
		section("RESOLVED", len(r.Resolved))
		b.WriteString(resolvedNote + "\n\n")
		for _, f := range r.Resolved {
			where, sev, title := resolvedText(f)
			fmt.Fprintf(b, "  [%s] %s", sev, where)
			if title != "" {
				b.WriteString("  " + title)
			}
			b.WriteString("\n")
		}
	}
	if s := r.notRechecked(); s != "" {
		b.WriteString("\n" + s + "\n")
	}
}

// textCoverage is what the text part says of the review's coverage: files
// not reviewed, reviewed in part, findings hidden or dropped.
func textCoverage(b *strings.Builder, v view) {
	m := v.Meta
	if len(m.SkippedFiles) > 0 {
		fmt.Fprintf(b, "\nNot reviewed: %d %s\n", len(m.SkippedFiles), plural(len(m.SkippedFiles), "file"))
		for i, s := range m.SkippedFiles {
			if i == maxNamed {
				fmt.Fprintf(b, "  ... and %d more (listed in the job's review result)\n", len(m.SkippedFiles)-maxNamed)
				break
			}
			fmt.Fprintf(b, "  %s (%s)\n", oneLine(s.File), skipReason(s.Reason))
		}
	}
	if len(m.TruncatedFiles) > 0 {
		fmt.Fprintf(b, "\nReviewed in part: %d %s\n", len(m.TruncatedFiles), plural(len(m.TruncatedFiles), "file"))
		for i, t := range m.TruncatedFiles {
			if i == maxNamed {
				fmt.Fprintf(b, "  ... and %d more\n", len(m.TruncatedFiles)-maxNamed)
				break
			}
			fmt.Fprintf(b, "  %s (first %d of %d bytes)\n", oneLine(t.File), t.ReviewedBytes, t.OriginalBytes)
		}
	}
	for _, l := range v.hidden() {
		b.WriteString("\n" + l + "\n")
	}
	if m.DroppedFindings > 0 {
		fmt.Fprintf(b, "\nDropped findings: %d (%s).\n", m.DroppedFindings, droppedWhy(m))
	}
}

// textFiles writes findings grouped by file, as the text part shows them.
func textFiles(b *strings.Builder, files []fileGroup) {
	for _, g := range files {
		head := fmt.Sprintf("%s (%d)", oneLine(g.File), len(g.Findings))
		b.WriteString("\n" + head + "\n" + strings.Repeat("=", min(len(head), 78)) + "\n")
		for _, f := range g.Findings {
			fmt.Fprintf(b, "\n%d. [%s] %s  %s\n", f.N, strings.ToUpper(oneLine(f.Severity)), f.Location(), oneLine(f.Title))
			if t := f.Tags(); t != "" {
				b.WriteString("   [" + t + "]\n")
			}
			b.WriteString(indent(strings.TrimSpace(f.Message), "   ") + "\n")
			for _, c := range f.Code {
				mark := " "
				if c.Hit {
					mark = ">"
				}
				fmt.Fprintf(b, "   %s %5d | %s\n", mark, c.N, c.Text)
			}
			if s := strings.TrimSpace(f.Suggestion); s != "" {
				b.WriteString(indent("Suggestion: "+s, "   ") + "\n")
			}
		}
	}
}

var sevColor = map[string]string{"critical": "#8b0000", "high": "#c0392b", "medium": "#d35400", "low": "#2c3e50", "info": "#7f8c8d"}

func renderHTML(v view) string {
	e := html.EscapeString
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Criticizer review</title></head>\n")
	b.WriteString("<body style=\"font-family:sans-serif;max-width:60em\">\n")
	fmt.Fprintf(&b, "<p>Criticizer reviewed changelist <b>%d</b> (review version %d).</p>\n", v.Key.Changelist, v.Key.ReviewVersion)
	b.WriteString("<table>\n")
	row := func(name, val string) {
		if val != "" {
			fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td></tr>\n", name, val)
		}
	}
	row("Author", e(v.Author))
	row("Description", e(v.Description))
	row("Job", e(v.JobID))
	if v.ReviewURL != "" {
		row("Review", fmt.Sprintf("<a href=\"%s\">%s</a>", e(v.ReviewURL), e(v.ReviewURL)))
	}
	b.WriteString("</table>\n")
	if v.JobPageURL != "" {
		fmt.Fprintf(&b, "<p><a href=\"%s\">View this review</a></p>\n", e(v.JobPageURL))
	}
	if v.Summary != "" {
		fmt.Fprintf(&b, "<p style=\"white-space:pre-wrap\">%s</p>\n", e(v.Summary))
	}
	for _, l := range v.status() {
		fmt.Fprintf(&b, "<p>%s</p>\n", e(l))
	}
	fmt.Fprintf(&b, "<p>%s</p>\n", e(v.verdict()))
	if r := v.Rerun; r != nil {
		htmlRerun(&b, r)
	} else {
		htmlFiles(&b, v.Files)
	}
	htmlCoverage(&b, v)
	fmt.Fprintf(&b, "<hr><p><small>Criticizer%s &middot; Reference: %s</small></p>\n</body></html>\n", e(v.footer()), e(v.Token))
	return b.String()
}

// htmlRerun is a rerun's findings in the HTML part: new, still open,
// resolved, and what was not re-checked.
func htmlRerun(b *strings.Builder, r *rerunView) {
	e := html.EscapeString
	fmt.Fprintf(b, "<p>%s</p>\n", e(r.line()))
	if r.NNew > 0 {
		fmt.Fprintf(b, "<h2>New (%d)</h2>\n", r.NNew)
		htmlFiles(b, r.New)
	}
	if r.NOpen > 0 {
		fmt.Fprintf(b, "<h2>Still open (%d)</h2>\n", r.NOpen)
		htmlFiles(b, r.Open)
	}
	if len(r.Resolved) > 0 {
		fmt.Fprintf(b, "<h2>Resolved (%d)</h2>\n<p>%s</p>\n<ul>\n", len(r.Resolved), e(resolvedNote))
		for _, f := range r.Resolved {
			where, sev, title := resolvedText(f)
			fmt.Fprintf(b, "<li><b style=\"color:#2e7d32\">&#10003;</b> <small>%s</small> <code>%s</code>", e(sev), e(where))
			if title != "" {
				fmt.Fprintf(b, " %s", e(title))
			}
			b.WriteString("</li>\n")
		}
		b.WriteString("</ul>\n")
	}
	if s := r.notRechecked(); s != "" {
		fmt.Fprintf(b, "<p>%s</p>\n", e(s))
	}
}

// htmlCoverage is what the HTML part says of the review's coverage: files
// not reviewed, reviewed in part, findings hidden or dropped.
func htmlCoverage(b *strings.Builder, v view) {
	e := html.EscapeString
	m := v.Meta
	if len(m.SkippedFiles) > 0 {
		fmt.Fprintf(b, "<h3>Not reviewed: %d %s</h3>\n<ul>\n", len(m.SkippedFiles), plural(len(m.SkippedFiles), "file"))
		for i, s := range m.SkippedFiles {
			if i == maxNamed {
				fmt.Fprintf(b, "<li>&hellip; and %d more (listed in the job's review result)</li>\n", len(m.SkippedFiles)-maxNamed)
				break
			}
			fmt.Fprintf(b, "<li><code>%s</code> (%s)</li>\n", e(s.File), e(skipReason(s.Reason)))
		}
		b.WriteString("</ul>\n")
	}
	if len(m.TruncatedFiles) > 0 {
		fmt.Fprintf(b, "<h3>Reviewed in part: %d %s</h3>\n<ul>\n", len(m.TruncatedFiles), plural(len(m.TruncatedFiles), "file"))
		for i, t := range m.TruncatedFiles {
			if i == maxNamed {
				fmt.Fprintf(b, "<li>&hellip; and %d more</li>\n", len(m.TruncatedFiles)-maxNamed)
				break
			}
			fmt.Fprintf(b, "<li><code>%s</code> (first %d of %d bytes)</li>\n", e(t.File), t.ReviewedBytes, t.OriginalBytes)
		}
		b.WriteString("</ul>\n")
	}
	for _, l := range v.hidden() {
		fmt.Fprintf(b, "<p>%s</p>\n", e(l))
	}
	if m.DroppedFindings > 0 {
		fmt.Fprintf(b, "<p>Dropped findings: %d (%s).</p>\n", m.DroppedFindings, e(droppedWhy(m)))
	}
}

// htmlFiles writes findings grouped by file, as the HTML part shows them.
func htmlFiles(b *strings.Builder, files []fileGroup) {
	e := html.EscapeString
	for _, g := range files {
		fmt.Fprintf(b, "<h3><code>%s</code> (%d)</h3>\n<ol>\n", e(g.File), len(g.Findings))
		for _, f := range g.Findings {
			sev := strings.ToLower(oneLine(f.Severity))
			color := sevColorOf(sev)
			fmt.Fprintf(b, "<li value=\"%d\"><b style=\"color:%s\">%s</b> <code>%s</code> <b>%s</b>",
				f.N, color, e(strings.ToUpper(sev)), e(f.Location()), e(oneLine(f.Title)))
			if t := f.Tags(); t != "" {
				fmt.Fprintf(b, " <small>[%s]</small>", e(t))
			}
			fmt.Fprintf(b, "\n<div style=\"white-space:pre-wrap\">%s</div>\n", e(strings.TrimSpace(f.Message)))
			if len(f.Code) > 0 {
				b.WriteString("<pre style=\"background:#f6f8fa;padding:4px\">")
				for _, c := range f.Code {
					line := fmt.Sprintf("%5d | %s", c.N, e(c.Text))
					if c.Hit {
						line = "<b>" + line + "</b>"
					}
					b.WriteString(line + "\n")
				}
				b.WriteString("</pre>\n")
			}
			if s := strings.TrimSpace(f.Suggestion); s != "" {
				fmt.Fprintf(b, "<div style=\"white-space:pre-wrap\"><i>Suggestion:</i> %s</div>\n", e(s))
			}
			b.WriteString("</li>\n")
		}
		b.WriteString("</ol>\n")
	}
}

// sevColorOf is a severity's colour, black for an unknown one.
func sevColorOf(sev string) string {
	if c := sevColor[strings.ToLower(sev)]; c != "" {
		return c
	}
	return "#000"
}
