package render

import (
	"fmt"
	"html"
	"strings"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/modeltext"
	"github.com/criticizer/criticizer/shared/udiff"
)

// Text writes files' findings as plain text (the e-mail's text part).
func Text(b *strings.Builder, files []File) {
	for _, g := range files {
		head := fmt.Sprintf("%s (%d)", domain.OneLine(g.File), len(g.Findings))
		b.WriteString("\n" + head + "\n" + strings.Repeat("=", min(len(head), 78)) + "\n")
		for _, f := range g.Findings {
			fmt.Fprintf(b, "\n%d. [%s] %s  %s\n", f.N, strings.ToUpper(f.Sev()), f.Location(), domain.OneLine(f.Title))
			if t := f.Tags(); t != "" {
				b.WriteString("   [" + t + "]\n")
			}
			b.WriteString(Indent(strings.TrimSpace(f.Message), "   ") + "\n")
			for _, c := range f.Code {
				mark := " "
				if c.Hit {
					mark = ">"
				}
				fmt.Fprintf(b, "   %s %5d | %s\n", mark, c.N, c.Text)
			}
			if s := strings.TrimSpace(f.Suggestion); s != "" {
				b.WriteString(Indent("Suggestion: "+s, "   ") + "\n")
			}
		}
	}
}

// sevColor inlines the job page's severity colours (page.css) for mail
// clients, which drop stylesheets.
var sevColor = map[string]string{"critical": "#8b0000", "high": "#c0392b", "medium": "#d35400", "low": "#2c3e50", "info": "#7f8c8d", domain.SeverityOther: "#000"}

// HTML writes files' findings as HTML, every value escaped. Mail inlines
// each style (mail clients drop stylesheets); otherwise elements carry the
// job page's classes, which its stylesheet styles (its Content-Security-
// Policy forbids inline styles).
func HTML(b *strings.Builder, files []File, mail bool) {
	e := html.EscapeString
	at := func(class, style string) string {
		switch {
		case mail && style != "":
			return ` style="` + style + `"`
		case !mail && class != "":
			return ` class="` + class + `"`
		}
		return ""
	}
	for _, g := range files {
		fmt.Fprintf(b, "<h3><code>%s</code> (%d)</h3>\n<ol%s>\n", e(g.File), len(g.Findings), at("findings", ""))
		for _, f := range g.Findings {
			sev := f.Sev()
			fmt.Fprintf(b, "<li value=\"%d\"><b%s>%s</b> <code>%s</code> <b>%s</b>", f.N, at("sev sev-"+sev, "color:"+sevColor[sev]),
				strings.ToUpper(sev), e(f.Location()), e(domain.OneLine(f.Title)))
			if t := f.Tags(); t != "" {
				fmt.Fprintf(b, " <small%s>[%s]</small>", at("muted", ""), e(t))
			}
			fmt.Fprintf(b, "\n<div%s>%s</div>\n", at("text", "white-space:pre-wrap"), e(strings.TrimSpace(f.Message)))
			if len(f.Code) > 0 {
				fmt.Fprintf(b, "<pre%s>", at("code", "background:#f6f8fa;padding:4px"))
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
				fmt.Fprintf(b, "<div%s><i>Suggestion:</i> %s</div>\n", at("suggestion", "white-space:pre-wrap"), e(s))
			}
			b.WriteString("</li>\n")
		}
		b.WriteString("</ol>\n")
	}
}

// Markdown is a finding's Swarm comment: severity, category and title,
// then the message and the suggestion, each written by the model and so
// made inert for Swarm's Markdown where it lands (modeltext): the title on
// the heading line (Line), the message as prose with its code re-fenced
// (Markdown), the suggestion in a fence of the service's own (Code). The
// comment's marker is appended by the Swarm client.
func Markdown(f domain.Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s** · %s · %s\n\n%s", strings.ToUpper(domain.SeverityWord(f.Severity)), modeltext.Line(domain.CategoryWord(f.Category)),
		modeltext.Line(f.Title), modeltext.Markdown(strings.TrimSpace(f.Message)))
	if s := strings.TrimSpace(f.Suggestion); s != "" {
		fmt.Fprintf(&b, "\n\n**Suggestion:**\n\n%s", modeltext.Code(s))
	}
	return b.String()
}

// MarkdownUnanchored is a finding's comment when Swarm will not anchor it
// on its file (the file is not in the version's change): Markdown's body,
// with the file and line it is about after the title line (which stays
// first: a rerun's resolved note quotes it). Empty for a finding on no file.
func MarkdownUnanchored(f domain.Finding, version int) string {
	if f.File == "" {
		return ""
	}
	at := modeltext.Line(f.File)
	if f.Line > 0 {
		at = fmt.Sprintf("%s line %d", at, f.Line)
	}
	head, rest, _ := strings.Cut(Markdown(f), "\n\n")
	return fmt.Sprintf("%s\n\nOn %s (not in version %d's change, so not anchored on it).\n\n%s", head, at, version, rest)
}

// contextLines and contextLineBytes bound an inline comment's
// context[content]: the few lines of the redacted diff Swarm shows with it.
const (
	contextLines     = 5
	contextLineBytes = 300
)

// CommentContext is the redacted diff's lines a Swarm comment on line shows
// with it: its diff's, or its interdiff's where the diff does not show the
// line (a rerun's finding on a line changed back to the base's text).
func CommentContext(fc domain.FileChange, line int) []string {
	if c := udiff.Around(fc.Diff, line, contextLines, contextLineBytes); c != nil {
		return c
	}
	return udiff.Around(fc.Interdiff, line, contextLines, contextLineBytes)
}

// Indent prefixes every line of s, trailing space trimmed.
func Indent(s, prefix string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + strings.TrimRight(l, " \t")
	}
	return strings.Join(lines, "\n")
}
