package udiff

import "unicode/utf8"

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
			out = append(out, cut(h, maxLine))
		}
		return false
	})
	return out
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
