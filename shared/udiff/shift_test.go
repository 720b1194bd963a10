package udiff

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func numbered(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "line " + strconv.Itoa(i+1)
	}
	return out
}

func text(lines []string) string { return strings.Join(lines, "\n") + "\n" }

func TestShiftMap(t *testing.T) {
	old := numbered(30)
	edit := func(f func([]string) []string) string {
		return Unified(text(old), text(f(append([]string(nil), old...))), 3)
	}
	tests := []struct {
		name     string
		diff     string
		from, to int
		want     int
		ok       bool
	}{
		{"identical: the same line", "", 7, 9, 7, true},
		{"before the only hunk", edit(func(l []string) []string { l[19] = "changed"; return l }), 3, 5, 3, true},
		{"in the hunk's context", edit(func(l []string) []string { l[19] = "changed"; return l }), 17, 19, 17, true},
		{"the changed line", edit(func(l []string) []string { l[19] = "changed"; return l }), 19, 21, 0, false},
		{"after the change, same count", edit(func(l []string) []string { l[19] = "changed"; return l }), 25, 27, 25, true},
		{"after three inserted lines", edit(func(l []string) []string {
			return append(l[:5], append([]string{"a", "b", "c"}, l[5:]...)...)
		}), 20, 22, 23, true},
		{"lines inserted inside the range", edit(func(l []string) []string {
			return append(l[:10], append([]string{"new"}, l[10:]...)...)
		}), 10, 12, 0, false},
		{"insertion right before the range", edit(func(l []string) []string {
			return append(l[:10], append([]string{"new"}, l[10:]...)...)
		}), 11, 13, 12, true},
		{"after two removed lines", edit(func(l []string) []string { return append(l[:3], l[5:]...) }), 10, 10, 8, true},
		{"a removed line", edit(func(l []string) []string { return append(l[:3], l[5:]...) }), 4, 4, 0, false},
		{"between two hunks", edit(func(l []string) []string {
			l[2] = "x"
			return append(l[:25], l[26:]...)
		}), 14, 16, 14, true},
		{"after two hunks", edit(func(l []string) []string {
			l = append(l[:2], append([]string{"p", "q"}, l[2:]...)...)
			return append(l[:25], l[27:]...)
		}), 29, 30, 29, true},
		{"appended at the end", edit(func(l []string) []string { return append(l, "tail") }), 30, 30, 30, true},
		{"no range", "", 0, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := NewShift(tt.diff).Map(tt.from, tt.to)
			if got != tt.want || ok != tt.ok {
				t.Errorf("Map(%d, %d) = %d, %v; want %d, %v\ndiff:\n%s", tt.from, tt.to, got, ok, tt.want, tt.ok, tt.diff)
			}
		})
	}
}

// TestShiftAgreesWithTheTexts checks, over random edits, that every line
// Map says is untouched has the same text in the new revision, and that
// every line whose text is not found there is reported touched.
func TestShiftAgreesWithTheTexts(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for round := range 300 {
		old := numbered(1 + r.IntN(60))
		cur := append([]string(nil), old...)
		for range 1 + r.IntN(4) {
			at := r.IntN(len(cur) + 1)
			switch r.IntN(3) {
			case 0:
				cur = append(cur[:at], append([]string{"ins " + strconv.Itoa(r.Int())}, cur[at:]...)...)
			case 1:
				if at < len(cur) {
					cur = append(cur[:at], cur[at+1:]...)
				}
			default:
				if at < len(cur) {
					cur[at] = "chg " + strconv.Itoa(r.Int())
				}
			}
		}
		s := NewShift(Unified(text(old), text(cur), 3))
		present := map[string]bool{}
		for _, l := range cur {
			present[l] = true
		}
		for n := 1; n <= len(old); n++ {
			m, ok := s.Map(n, n)
			if !present[old[n-1]] && ok {
				t.Fatalf("round %d: line %d (%q) is gone but mapped to %d", round, n, old[n-1], m)
			}
			if ok && (m < 1 || m > len(cur) || cur[m-1] != old[n-1]) {
				t.Fatalf("round %d: line %d (%q) mapped to %d, which is not that text", round, n, old[n-1], m)
			}
		}
	}
}
