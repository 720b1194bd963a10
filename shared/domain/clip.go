package domain

import "unicode/utf8"

// Clip is the one UTF-8-safe cutter: s cut to at most n bytes (n >= 0) at a
// character boundary, so valid UTF-8 stays valid. A caller that marks the cut
// appends its own marker.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
