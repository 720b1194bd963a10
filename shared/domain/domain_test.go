package domain

import "testing"

// TestSeverityRank: the one severity order ranks the worst first, ignores
// case and space, and puts a word outside the schema last.
func TestSeverityRank(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"critical", 0}, {"high", 1}, {" Medium ", 2}, {"LOW", 3}, {"info", 4},
		{"blocker", len(Severities)}, {"", len(Severities)},
	} {
		if got := SeverityRank(tc.in); got != tc.want {
			t.Errorf("SeverityRank(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// TestClip: the one cutter keeps at most n bytes and never splits a
// character; bytes that are not UTF-8 are cut like any other.
func TestClip(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"", 0, ""},
		{"abc", 0, ""},
		{"abc", 3, "abc"},
		{"abc", 5, "abc"},
		{"abcdef", 4, "abcd"},
		{"héllo", 2, "h"},  // é is 2 bytes
		{"héllo", 3, "hé"}, // just fits
		{"a€b", 3, "a"},    // € is 3 bytes
		{"a😀b", 4, "a"},    // 😀 is 4 bytes
		{"a😀b", 5, "a😀"},
		{"\xe9t\xe9", 2, "\xe9t"}, // Latin-1: each byte starts a "character"
	} {
		if got := Clip(tc.in, tc.n); got != tc.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
