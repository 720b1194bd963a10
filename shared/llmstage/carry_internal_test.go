package llmstage

import (
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/udiff"
)

// An earlier finding crosses the interdiff when its own lines are
// unchanged, moved by what was inserted or removed above it; lines changed
// or inserted within it leave it to the model.
func TestAcross(t *testing.T) {
	lines := func(edit func([]string) []string) string {
		l := make([]string, 20)
		for i := range l {
			l[i] = "line " + string(rune('a'+i))
		}
		if edit != nil {
			l = edit(l)
		}
		return strings.Join(l, "\n") + "\n"
	}
	v1 := lines(nil)
	diff := func(edit func([]string) []string) udiff.Shift {
		return udiff.NewShift(udiff.Unified(v1, lines(edit), 3))
	}
	for _, tt := range []struct {
		name       string
		shift      udiff.Shift
		line, end  int
		want, wEnd int
		ok         bool
	}{
		{"unchanged file", diff(nil), 8, 0, 8, 0, true},
		{"two lines inserted above", diff(func(l []string) []string { return append(l[:2], append([]string{"x", "y"}, l[2:]...)...) }), 8, 9, 10, 11, true},
		{"its line changed", diff(func(l []string) []string { l[7] = "fixed"; return l }), 8, 0, 0, 0, false},
		{"a line of its range changed", diff(func(l []string) []string { l[9] = "fixed"; return l }), 8, 10, 0, 0, false},
		{"a line inserted inside its range", diff(func(l []string) []string { return append(l[:8], append([]string{"x"}, l[8:]...)...) }), 8, 9, 0, 0, false},
		{"the line before it changed: carried, fingerprinted anew", diff(func(l []string) []string { l[6] = "guard"; return l }), 8, 0, 8, 0, true},
		{"one line removed above", diff(func(l []string) []string { return append(l[:1], l[2:]...) }), 8, 0, 7, 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := across(domain.Finding{Line: tt.line, EndLine: tt.end}, tt.shift)
			if ok != tt.ok || ok && (got.Line != tt.want || got.EndLine != tt.wEnd) {
				t.Errorf("across = lines %d-%d, %v; want %d-%d, %v", got.Line, got.EndLine, ok, tt.want, tt.wEnd, tt.ok)
			}
		})
	}
}
