package udiff

import (
	"slices"
	"testing"
)

func TestAround(t *testing.T) {
	diff := "@@ -1,4 +1,5 @@\n a\n-b\n+B\n+new\n c\n d\n@@ -20,2 +21,3 @@\n x\n+y\n z\n\\ No newline at end of file\n"
	for _, tt := range []struct {
		name    string
		diff    string
		line, n int
		max     int
		want    []string
	}{
		{"added line, the lines before it in the hunk", diff, 3, 5, 0, []string{" a", "-b", "+B", "+new"}},
		{"n bounds the lines", diff, 4, 2, 0, []string{"+new", " c"}},
		{"first line of a hunk", diff, 1, 5, 0, []string{" a"}},
		{"second hunk does not reach into the first", diff, 22, 5, 0, []string{" x", "+y"}},
		{"line the diff does not show", diff, 10, 5, 0, nil},
		{"added file without hunk headers", "one\ntwo\nthree\n", 3, 2, 0, []string{"+two", "+three"}},
		{"past the added file", "one\n", 2, 5, 0, nil},
		{"long lines are cut on a character", "@@ -0,0 +1 @@\n+héllo\n", 1, 5, 3, []string{"+h"}},
		{"no line", diff, 0, 5, 0, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Around(tt.diff, tt.line, tt.n, tt.max); !slices.Equal(got, tt.want) {
				t.Errorf("Around(%d, %d) = %q, want %q", tt.line, tt.n, got, tt.want)
			}
		})
	}
}
