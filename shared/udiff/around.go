package udiff

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Around returns the diff lines a review comment on new-revision line
// shows with it (Swarm's context[content]): up to n lines of line's hunk,
// ending with line itself, each with its marker ("+", "-" or " ") as the
// diff has it, and each cut to maxLine bytes. nil when the diff does not
// show line (the comment is then anchored by file and line alone). A diff
// without hunk headers is an added file, every line "+".
func Around(diff string, line, n, maxLine int) []string {
	if diff == "" || line <= 0 || n <= 0 {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(diff, "\n"), "\n")
	if !strings.HasPrefix(diff, "@@ ") && !strings.Contains(diff, "\n@@ ") {
		if line > len(lines) {
			return nil
		}
		var out []string
		for _, l := range lines[max(0, line-n):line] {
			out = append(out, cut("+"+l, maxLine))
		}
		return out
	}
	var hunk []string // the current hunk's lines up to here
	next, in := 0, false
	for _, l := range lines {
		if m := hunkRE.FindStringSubmatch(l); m != nil {
			next, _ = strconv.Atoi(m[3])
			hunk, in = hunk[:0], true
			continue
		}
		if !in || l == "" {
			continue
		}
		switch l[0] {
		case '+', ' ':
			hunk = append(hunk, l)
			if next == line {
				out := make([]string, 0, n)
				for _, h := range hunk[max(0, len(hunk)-n):] {
					out = append(out, cut(h, maxLine))
				}
				return out
			}
			next++
		case '-':
			hunk = append(hunk, l)
		case '\\':
			// "\ No newline at end of file": not a line of either side
		default:
			in = false // a file header ends the hunk
		}
	}
	return nil
}

// cut shortens s to at most max bytes without splitting a character.
func cut(s string, max int) string {
	if max <= 0 || len(s) <= max {
		return s
	}
	s = s[:max]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
