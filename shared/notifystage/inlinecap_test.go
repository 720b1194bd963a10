package notifystage

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/outbox"
)

// Past the cap the least severe findings go first (the review's order among
// equals); the ones posted keep the review's order, and the summary lists
// the rest, most severe first, and says how many.
func TestCapInline(t *testing.T) {
	fd := func(id, sev, file string, line int) commentDelivery {
		f := domain.Finding{ID: id, Severity: sev, Title: "title " + id, File: file, Line: line}
		return commentDelivery{item: outbox.Item{ID: "finding/" + id}, finding: &f}
	}
	summary := commentDelivery{item: outbox.Item{ID: "summary/v1"}}
	summary.comment.Body = "**Criticizer review of version 1:** 6 findings."
	note := commentDelivery{item: outbox.Item{ID: "resolved/x"}}
	all := []commentDelivery{fd("a", "low", "//d/a.go", 3), fd("b", "critical", "//d/b.go", 9), fd("c", "medium", "//d/c.go", 1),
		fd("d", "high", "", 0), fd("e", "info", "//d/e.go", 0), fd("f", "medium", "//d/f.go", 2), note, summary}
	for _, tt := range []struct {
		name     string
		max      int
		kept     []string
		overText []string // in the summary, in this order
	}{
		{"under the cap: all, summary unchanged", 6, []string{"finding/a", "finding/b", "finding/c", "finding/d", "finding/e", "finding/f", "resolved/x", "summary/v1"}, nil},
		{"no cap", 0, []string{"finding/a", "finding/b", "finding/c", "finding/d", "finding/e", "finding/f", "resolved/x", "summary/v1"}, nil},
		{"cap 3: critical, high and the first medium", 3, []string{"finding/b", "finding/c", "finding/d", "resolved/x", "summary/v1"},
			[]string{"**3 findings were not posted inline** (at most 3 inline comments per version", "- MEDIUM · title f (//d/f.go:2)", "- LOW · title a (//d/a.go:3)", "- INFO · title e (//d/e.go)"}},
		{"cap 1", 1, []string{"finding/b", "resolved/x", "summary/v1"},
			[]string{"**5 findings were not posted inline**", "- HIGH · title d (the change as a whole)", "- MEDIUM · title c", "- MEDIUM · title f", "- LOW · title a", "- INFO · title e"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := capInline(slices.Clone(all), tt.max)
			var ids []string
			for _, d := range got {
				ids = append(ids, d.item.ID)
			}
			if !slices.Equal(ids, tt.kept) {
				t.Fatalf("kept %v, want %v", ids, tt.kept)
			}
			body := got[len(got)-1].comment.Body
			if !strings.HasPrefix(body, summary.comment.Body) {
				t.Errorf("summary %q lost its counts", body)
			}
			if tt.overText == nil && body != summary.comment.Body {
				t.Errorf("summary %q changed under the cap", body)
			}
			at := 0
			for _, w := range tt.overText {
				i := strings.Index(body[at:], w)
				if i < 0 {
					t.Fatalf("summary %q: want %q after offset %d", body, w, at)
				}
				at += i + len(w)
			}
			if all[len(all)-1].comment.Body != summary.comment.Body {
				t.Error("capInline changed its input's summary")
			}
		})
	}
}

// Through the stage and the Swarm stand-in: with a cap of 1 the high finding
// is posted inline, with the lines of the redacted diff around it as
// context[content], taken from the redacted changeset the stage reads; the
// medium one only in the summary.
func TestInlineCapAndContextThroughTheStage(t *testing.T) {
	r := newCommentRig(t)
	r.n.Comments.MaxInline = 1
	var diff strings.Builder
	diff.WriteString("@@ -20,8 +20,10 @@\n")
	for i := 20; i <= 29; i++ {
		switch i {
		case 27:
			diff.WriteString("-\told := 1\n")
			fmt.Fprintf(&diff, "+\tkey := \"[REDACTED]\" // line %d\n", i)
		case 28:
			fmt.Fprintf(&diff, "+\tq := \"SELECT \" + in // line %d\n", i)
		default:
			fmt.Fprintf(&diff, " \tctx%d()\n", i)
		}
	}
	cs := domain.Changeset{Changelist: 42, User: "bob", Status: "pending", Description: "d\n",
		Files: []domain.FileChange{{DepotPath: "//depot/app/db.go", Action: "edit", Type: "text", Rev: 3, Diff: diff.String()}}}
	if err := r.arts.PutJSON(context.Background(), "jobs/j/changeset.json", cs); err != nil {
		t.Fatal(err)
	}
	if _, err := r.process(t); err != nil {
		t.Fatal(err)
	}
	got := r.ours(t)
	if len(got) != 2 {
		t.Fatalf("%d comments, want the high finding inline and the summary: %+v", len(got), got)
	}
	var inline, summary = got[0], got[1]
	if inline.Context == nil {
		inline, summary = summary, inline
	}
	wantContent := []string{" \tctx24()", " \tctx25()", " \tctx26()", "-\told := 1", "+\tkey := \"[REDACTED]\" // line 27", "+\tq := \"SELECT \" + in // line 28"}[1:]
	if inline.Context == nil || inline.Context.File != "//depot/app/db.go" || inline.Context.RightLine != 28 || !slices.Equal(inline.Context.Content, wantContent) {
		t.Errorf("inline comment context %+v, want db.go:28 with content %q", inline.Context, wantContent)
	}
	if !strings.Contains(summary.Body, "2 findings (1 high, 1 medium)") || !strings.Contains(summary.Body, "**1 finding was not posted inline**") ||
		!strings.Contains(summary.Body, "- MEDIUM · Error ignored (//depot/app/io.go:7)") {
		t.Errorf("summary %q: want the medium finding listed as not posted inline", summary.Body)
	}
	// A retry posts nothing more: the same finding is left out again.
	if _, err := r.process(t); err != nil {
		t.Fatal(err)
	}
	if n := len(r.ours(t)); n != 2 {
		t.Errorf("%d comments after a retry, want 2", n)
	}
}
