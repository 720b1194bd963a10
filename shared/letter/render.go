package letter

import (
	"fmt"
	"html"
	"net/url"
	"strings"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/render"
)

// The bodies are rendered by hand, not with html/template: reflection-based
// templates disable the linker's dead-method elimination and swell the notify
// binary (issue 9's size budget). Every value from the review, the changeset
// or the description goes through html.EscapeString in the HTML part.

// view is the data both bodies render.
type view struct {
	Changelist  int64
	Version     int
	Author      string
	Description string
	JobID       string
	ReviewURL   string
	JobPageURL  string
	Summary     string
	Total       int
	Counts      string
	Files       []render.File
	Meta        domain.ReviewMeta
	Schema      string
	Prompt      string
	Rerun       *rerunView // nil for a first version
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
		out = append(out, "The model was not called: "+domain.OneLine(m.WithoutModel)+". Only what the pipeline knows for certain (committed secrets, coverage) is reported.")
	}
	for _, r := range m.RulesRejected {
		out = append(out, "Review rules rejected: "+domain.OneLine(r)+".")
	}
	if len(m.Rules) > 0 {
		out = append(out, "Review rules: "+domain.OneLine(strings.Join(m.Rules, ", "))+".")
	}
	return out
}

// verdict is the line about the findings' count: "No findings." only for
// a review that saw every file.
func (v view) verdict() string {
	if v.Total > 0 {
		return fmt.Sprintf("%d %s: %s.", v.Total, domain.Plural(v.Total, "finding"), v.Counts)
	}
	if v.Meta.Coverage() == "" || v.Meta.Complete() {
		return "No findings."
	}
	return "No findings in the part that was reviewed. This is not a full review: see the coverage above and the files listed below."
}

// section is a list of files the e-mail names: (file, why) each, and the
// line for those past maxNamed.
type section struct {
	title string
	items [][2]string
	more  string
}

// coverage is what both parts say of files not reviewed or reviewed in part.
func (v view) coverage() []section {
	m := v.Meta
	var out []section
	if n := len(m.SkippedFiles); n > 0 {
		sec := section{title: fmt.Sprintf("Not reviewed: %d %s", n, domain.Plural(n, "file"))}
		for _, s := range m.SkippedFiles[:min(n, maxNamed)] {
			sec.items = append(sec.items, [2]string{s.File, domain.SkipReason(s.Reason)})
		}
		if n > maxNamed {
			sec.more = fmt.Sprintf("and %d more (listed in the job's review result)", n-maxNamed)
		}
		out = append(out, sec)
	}
	if n := len(m.TruncatedFiles); n > 0 {
		sec := section{title: fmt.Sprintf("Reviewed in part: %d %s", n, domain.Plural(n, "file"))}
		for _, t := range m.TruncatedFiles[:min(n, maxNamed)] {
			sec.items = append(sec.items, [2]string{t.File, fmt.Sprintf("first %d of %d bytes", t.ReviewedBytes, t.OriginalBytes)})
		}
		if n > maxNamed {
			sec.more = fmt.Sprintf("and %d more", n-maxNamed)
		}
		out = append(out, sec)
	}
	return out
}

// hidden says what the review rules, reviewers' repeated dismissals and
// validation kept out of the e-mail.
func (v view) hidden() []string {
	m := v.Meta
	var out []string
	if m.HiddenByCap > 0 {
		out = append(out, fmt.Sprintf("%d more %s not shown: the review rules cap the findings of one e-mail (the most severe are shown).", m.HiddenByCap, domain.Plural(m.HiddenByCap, "finding")))
	}
	if m.FilteredByRules > 0 {
		out = append(out, fmt.Sprintf("%d %s below the rules' severity threshold or in a disabled category not shown.", m.FilteredByRules, domain.Plural(m.FilteredByRules, "finding")))
	}
	if w := m.DismissedWithheld(); w != "" {
		// As the Swarm summary says it: withheld, never silently.
		out = append(out, w+" (criticizer outcomes suppressions lists them; criticizer outcomes allow reports them again).")
	}
	if m.DroppedFindings > 0 {
		why := "the model's answer did not pass validation"
		if m.OutOfView > 0 {
			why += fmt.Sprintf("; %d named a line the model was not shown", m.OutOfView)
		}
		out = append(out, fmt.Sprintf("Dropped findings: %d (%s).", m.DroppedFindings, why))
	}
	return out
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
	fmt.Fprintf(&b, "Criticizer reviewed changelist %d (review version %d).\n\n", v.Changelist, v.Version)
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
		b.WriteString("Summary:\n" + render.Indent(v.Summary, "  ") + "\n\n")
	}
	for _, l := range v.status() {
		b.WriteString(l + "\n")
	}
	b.WriteString(v.verdict() + "\n")
	if r := v.Rerun; r != nil {
		writeRerun(&b, r, false)
	} else {
		render.Text(&b, v.Files)
	}
	for _, sec := range v.coverage() {
		fmt.Fprintf(&b, "\n%s\n", sec.title)
		for _, it := range sec.items {
			fmt.Fprintf(&b, "  %s (%s)\n", domain.OneLine(it[0]), it[1])
		}
		if sec.more != "" {
			b.WriteString("  ... " + sec.more + "\n")
		}
	}
	for _, l := range v.hidden() {
		b.WriteString("\n" + l + "\n")
	}
	// "-- " with the trailing space is the RFC 3676 signature separator.
	b.WriteString("\n-- \nCriticizer" + v.footer())
	return b.String() // Letter.Ended ends it
}

// writeRerun is a rerun's findings in the text or HTML part: new, still
// open, resolved, and what was not re-checked.
func writeRerun(b *strings.Builder, r *rerunView, asHTML bool) {
	e := html.EscapeString
	para := func(s string) {
		if asHTML {
			fmt.Fprintf(b, "<p>%s</p>\n", e(s))
		} else {
			b.WriteString(s + "\n")
		}
	}
	heading := func(title string, n int) {
		if asHTML {
			fmt.Fprintf(b, "<h2>%s (%d)</h2>\n", title, n)
			return
		}
		head := fmt.Sprintf("%s (%d)", strings.ToUpper(title), n)
		b.WriteString("\n" + head + "\n" + strings.Repeat("#", len(head)) + "\n")
	}
	para(r.line())
	for _, g := range []struct {
		title string
		n     int
		files []render.File
	}{{"New", r.NNew, r.New}, {"Still open", r.NOpen, r.Open}} {
		switch {
		case g.n == 0:
		case asHTML:
			heading(g.title, g.n)
			render.HTML(b, g.files, true)
		default:
			heading(g.title, g.n)
			render.Text(b, g.files)
		}
	}
	if len(r.Resolved) > 0 {
		heading("Resolved", len(r.Resolved))
		if asHTML {
			fmt.Fprintf(b, "<p>%s</p>\n<ul>\n", e(resolvedNote))
		} else {
			b.WriteString(resolvedNote + "\n\n")
		}
		for _, f := range r.Resolved {
			where, sev, title := resolvedText(f)
			switch {
			case asHTML && title != "":
				fmt.Fprintf(b, "<li><b style=\"color:#2e7d32\">&#10003;</b> <small>%s</small> <code>%s</code> %s</li>\n", e(sev), e(where), e(title))
			case asHTML:
				fmt.Fprintf(b, "<li><b style=\"color:#2e7d32\">&#10003;</b> <small>%s</small> <code>%s</code></li>\n", e(sev), e(where))
			case title != "":
				fmt.Fprintf(b, "  [%s] %s  %s\n", sev, where, title)
			default:
				fmt.Fprintf(b, "  [%s] %s\n", sev, where)
			}
		}
		if asHTML {
			b.WriteString("</ul>\n")
		}
	}
	if s := r.notRechecked(); s != "" {
		if !asHTML {
			b.WriteString("\n")
		}
		para(s)
	}
}

func renderHTML(v view) string {
	e := html.EscapeString
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Criticizer review</title></head>\n")
	b.WriteString("<body style=\"font-family:sans-serif;max-width:60em\">\n")
	fmt.Fprintf(&b, "<p>Criticizer reviewed changelist <b>%d</b> (review version %d).</p>\n", v.Changelist, v.Version)
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
		writeRerun(&b, r, true)
	} else {
		render.HTML(&b, v.Files, true)
	}
	for _, sec := range v.coverage() {
		fmt.Fprintf(&b, "<h3>%s</h3>\n<ul>\n", sec.title)
		for _, it := range sec.items {
			fmt.Fprintf(&b, "<li><code>%s</code> (%s)</li>\n", e(it[0]), e(it[1]))
		}
		if sec.more != "" {
			fmt.Fprintf(&b, "<li>&hellip; %s</li>\n", sec.more)
		}
		b.WriteString("</ul>\n")
	}
	for _, l := range v.hidden() {
		fmt.Fprintf(&b, "<p>%s</p>\n", e(l))
	}
	fmt.Fprintf(&b, "<hr><p><small>Criticizer%s", e(v.footer()))
	return b.String() // Letter.Ended ends it
}
