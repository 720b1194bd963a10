package render

import (
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/domain"
)

// A comment's context[content] comes from the file's diff, or from its
// interdiff where a rerun's finding sits on a line the diff does not show.
func TestCommentContextFallsBackToTheInterdiff(t *testing.T) {
	fc := domain.FileChange{
		Diff:      "--- a#1\n+++ a@=12\n@@ -1,2 +1,2 @@\n x\n-y\n+z\n",
		Interdiff: "--- a@=11\n+++ a@=12\n@@ -7,2 +7,2 @@\n p\n-q\n+r\n",
	}
	for _, tt := range []struct {
		line int
		want string
	}{
		{2, " x|-y|+z"},
		{8, " p|-q|+r"},
		{30, ""},
	} {
		if got := strings.Join(CommentContext(fc, tt.line), "|"); got != tt.want {
			t.Errorf("line %d: %q, want %q", tt.line, got, tt.want)
		}
	}
}
