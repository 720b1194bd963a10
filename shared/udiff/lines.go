package udiff

import (
	"regexp"
	"strconv"
	"strings"
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

// NewLines returns the new-revision lines a unified diff shows (context and
// added lines of each hunk), numbered. A diff without hunk headers is taken
// as the whole text of an added file. Removed lines have no new-revision
// number and are not returned.
func NewLines(diff string) []Line {
	if diff == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(diff, "\n"), "\n")
	var out []Line
	if !strings.HasPrefix(diff, "@@ ") && !strings.Contains(diff, "\n@@ ") {
		for i, l := range lines {
			out = append(out, Line{N: i + 1, Text: l, Added: true})
		}
		return out
	}
	next, in := 0, false
	for _, l := range lines {
		if m := hunkRE.FindStringSubmatch(l); m != nil {
			next, _ = strconv.Atoi(m[3])
			in = true
			continue
		}
		if !in || l == "" {
			continue
		}
		switch l[0] {
		case '+', ' ':
			out = append(out, Line{N: next, Text: l[1:], Added: l[0] == '+'})
			next++
		case '-', '\\':
			// removed line, or "\ No newline at end of file"
		default:
			in = false // a file header ends the hunk
		}
	}
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
