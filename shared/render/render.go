// Package render is how a review's findings look to a reader: one finding
// model (Finding, grouped by file in one order) written to each medium from
// the same structure — plain text (Text) and HTML (HTML) for the review
// e-mail and the job page, Swarm Markdown (Markdown) for review comments
// with the diff lines each shows (CommentContext).
// The words for severities, categories and skip reasons are the one label
// table in shared/domain.
//
// Written by hand, not with text/template or html/template: executing a
// template reaches reflect's MethodByName, which keeps every exported
// method of every type in a function's binary (the AWS SDK clients'
// hundreds of operations) and swells its bootstrap. HTML escapes every
// value with html.EscapeString; model text is made inert by the caller for
// e-mail (modeltext.Plain) and here for Markdown (modeltext.Line, Markdown,
// Code), as each reader's software reads it.
package render

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/finding"
	"github.com/criticizer/criticizer/shared/modeltext"
)

// Finding is a finding as a reader sees it: numbered, with the lines of
// code it names when the changeset is at hand.
type Finding struct {
	N int
	domain.Finding
	Code []CodeLine
}

// CodeLine is one line of the new revision; Hit marks the lines the finding
// names.
type CodeLine struct {
	N    int
	Text string
	Hit  bool
}

// File is one file's findings, most severe first.
type File struct {
	File     string
	Findings []Finding
}

// Sev is the finding's severity as a known word, or "other".
func (f Finding) Sev() string { return domain.SeverityWord(f.Severity) }

// Location is "file:line" or "file:line-end_line".
func (f Finding) Location() string {
	loc := f.File + ":" + strconv.Itoa(f.Line)
	if f.EndLine > f.Line {
		loc += "-" + strconv.Itoa(f.EndLine)
	}
	return loc
}

// Tags is the bracketed detail line: category, confidence, rule.
func (f Finding) Tags() string {
	var parts []string
	if f.Category != "" {
		parts = append(parts, f.Category)
	}
	if f.Confidence != "" {
		parts = append(parts, "confidence: "+f.Confidence)
	}
	if f.RuleID != "" {
		parts = append(parts, "rule: "+f.RuleID)
	}
	return strings.Join(parts, ", ")
}

// ByFile groups findings by file, numbered from n+1. Files come in order of
// their most severe finding (then path); within a file, by severity, line
// and id: the model's output order never changes what a reader sees, and
// the e-mail and the job page number findings alike. With cs, each finding
// carries the code it points at.
func ByFile(fs []domain.Finding, cs *domain.Changeset, n int) []File {
	by := map[string][]domain.Finding{}
	worst := map[string]int{}
	for _, f := range fs {
		if _, ok := by[f.File]; !ok {
			worst[f.File] = len(domain.Severities)
		}
		by[f.File] = append(by[f.File], f)
		worst[f.File] = min(worst[f.File], domain.SeverityRank(f.Severity))
	}
	files := make([]string, 0, len(by))
	for file, list := range by {
		files = append(files, file)
		slices.SortStableFunc(list, func(a, b domain.Finding) int {
			return cmp.Or(domain.SeverityRank(a.Severity)-domain.SeverityRank(b.Severity), a.Line-b.Line, strings.Compare(a.ID, b.ID))
		})
	}
	slices.SortFunc(files, func(a, b string) int { return cmp.Or(worst[a]-worst[b], strings.Compare(a, b)) })
	code := finding.CodeOf(cs)
	out := make([]File, 0, len(files))
	for _, file := range files {
		g := File{File: file}
		lines := code(file)
		for _, f := range by[file] {
			n++
			g.Findings = append(g.Findings, Finding{N: n, Finding: f, Code: snippet(lines, f.Line, f.EndLine)})
		}
		out = append(out, g)
	}
	return out
}

// Count is how many findings have one severity.
type Count struct {
	Severity string
	N        int
}

// Counts are fs's findings by severity, most severe first, an unknown
// severity counted as "other".
func Counts(fs []domain.Finding) []Count {
	by := map[string]int{}
	for _, f := range fs {
		by[domain.SeverityWord(f.Severity)]++
	}
	var out []Count
	for _, s := range append(append([]string{}, domain.Severities...), domain.SeverityOther) {
		if by[s] > 0 {
			out = append(out, Count{s, by[s]})
		}
	}
	return out
}

// CountLine is "1 high, 2 low".
func CountLine(cs []Count) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = strconv.Itoa(c.N) + " " + c.Severity
	}
	return strings.Join(parts, ", ")
}

// Snippet bounds: lines of context around the finding, and at most maxCode
// lines in all, so a finding over a long range stays readable.
const (
	codeContext = 2
	maxCode     = 8
	maxCodeLine = 160 // runes per line
)

func snippet(lines map[int]string, line, end int) []CodeLine {
	if len(lines) == 0 || line <= 0 {
		return nil
	}
	end = max(end, line)
	from, to := line-codeContext, min(end+codeContext, line+maxCode-1-codeContext)
	var out []CodeLine
	hit := false
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
		c := CodeLine{N: n, Text: modeltext.Plain(stripControl(text)), Hit: n >= line && n <= end}
		hit = hit || c.Hit
		out = append(out, c)
	}
	if !hit {
		return nil // the diff does not show the line itself: show nothing rather than unrelated code
	}
	return out
}

func stripControl(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}
