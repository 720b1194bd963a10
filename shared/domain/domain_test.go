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
