package depot

import "strings"

// A Perforce path pattern (a protections line, a view line) may hold the
// wildcards "...", "*" and "%%n" anywhere. The two questions below are
// answered from the pattern's literal prefix, the part before its first
// wildcard, and always err on the side that keeps a security check closed:
// Covers says yes only for a pattern whose sole wildcard is a trailing
// "...", MayOverlap says no only when no file could match both.

// literal returns the pattern's text before its first wildcard and whether
// it has one.
func literal(pattern string) (string, bool) {
	i := strings.IndexAny(pattern, "*%")
	if j := strings.Index(pattern, "..."); j >= 0 && (i < 0 || j < i) {
		i = j
	}
	if i < 0 {
		return pattern, false
	}
	return pattern[:i], true
}

// Covers reports whether pattern matches every file the allow-list entry
// (a "//x/..." subtree or one file) names.
func Covers(pattern, entry string) bool {
	lit, wild := literal(pattern)
	if !wild {
		return pattern == entry
	}
	if lit+"..." != pattern {
		return false // a wildcard before the end: not provably everything
	}
	e, _ := literal(entry)
	return strings.HasPrefix(e, lit)
}

// MayOverlap reports whether some file could match both pattern and the
// allow-list entry.
func MayOverlap(pattern, entry string) bool {
	lit, wild := literal(pattern)
	e, subtree := literal(entry)
	switch {
	case wild && subtree:
		return strings.HasPrefix(e, lit) || strings.HasPrefix(lit, e)
	case wild:
		return strings.HasPrefix(entry, lit)
	case subtree:
		return strings.HasPrefix(pattern, e)
	}
	return pattern == entry
}
