package udiff

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/criticizer/criticizer/shared/domain"
)

// Line is one line of the new revision as a diff shows it: context or added.
type Line struct {
	N     int    // line number in the new revision, 1-based
	Text  string // without the diff marker
	Added bool
}

// hunkRE reads a hunk header: old start, old length, new start, new
// length (submatches 1-4; a length is "" when the header leaves it out).
var hunkRE = regexp.MustCompile(`^@@ -([0-9]+)(?:,([0-9]+))? \+([0-9]+)(?:,([0-9]+))? @@`)

// hunkLines calls f with each line of diff's hunks, marker included, and
// its new-revision number (0 for a removed line), and with ("", 0) at the
// start of each hunk, until f returns false. A diff without hunk headers is
// the whole text of an added file: one hunk, every line "+".
func hunkLines(diff string, f func(l string, n int) bool) {
	if diff == "" {
		return
	}
	lines := strings.Split(strings.TrimSuffix(diff, "\n"), "\n")
	if !strings.HasPrefix(diff, "@@ ") && !strings.Contains(diff, "\n@@ ") {
		for i, l := range lines {
			if (i == 0 && !f("", 0)) || !f("+"+l, i+1) {
				return
			}
		}
		return
	}
	next, in := 0, false
	for _, l := range lines {
		if m := hunkRE.FindStringSubmatch(l); m != nil {
			next, _ = strconv.Atoi(m[3])
			if in = true; !f("", 0) {
				return
			}
			continue
		}
		if !in || l == "" {
			continue
		}
		switch l[0] {
		case '+', ' ':
			if !f(l, next) {
				return
			}
			next++
		case '-':
			if !f(l, 0) {
				return
			}
		case '\\': // "\ No newline at end of file": not a line of either side
		default:
			in = false // a file header ends the hunk
		}
	}
}

// NewLines returns the new-revision lines a unified diff shows (context and
// added lines of each hunk), numbered; removed lines have no new-revision
// number and are not returned.
func NewLines(diff string) []Line {
	var out []Line
	hunkLines(diff, func(l string, n int) bool {
		if n > 0 {
			out = append(out, Line{N: n, Text: l[1:], Added: l[0] == '+'})
		}
		return true
	})
	return out
}

// LineMap is NewLines by line number.
func LineMap(diff string) map[int]string {
	ls := NewLines(diff)
	if ls == nil {
		return nil
	}
	out := make(map[int]string, len(ls))
	for _, l := range ls {
		out[l.N] = l.Text
	}
	return out
}

// Around returns the diff lines a review comment on new-revision line
// shows with it (Swarm's context[content]): up to n lines of line's hunk,
// ending with line itself, each with its marker as the diff has it and cut
// to maxLine bytes. nil when the diff does not show line (the comment is
// then anchored by file and line alone).
func Around(diff string, line, n, maxLine int) []string {
	if line <= 0 || n <= 0 {
		return nil
	}
	var hunk, out []string // the current hunk's lines up to here
	hunkLines(diff, func(l string, at int) bool {
		if l == "" {
			hunk = hunk[:0]
			return true
		}
		hunk = append(hunk, l)
		if at != line {
			return true
		}
		for _, h := range hunk[max(0, len(hunk)-n):] {
			if maxLine > 0 {
				h = domain.Clip(h, maxLine)
			}
			out = append(out, h)
		}
		return false
	})
	return out
}
