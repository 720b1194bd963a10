package p4

import (
	"context"
	"strings"
	"testing"
)

// A ktext file whose keyword lines expand differently at each revision:
// printed with keyword expansion suppressed, its diff is the one real change,
// one hunk, as p4 describe would show it. Printing without -k makes the
// $Id$, $Change$ and $DateTime$ lines look changed too.
func TestKeywordFileDiffsOnlyItsRealChange(t *testing.T) {
	r, _ := newTestRunner(t, fixtureDepot(t), nil)
	f, _ := NewFetcher(r, testAllowList(t, nil), nil)
	cs, err := f.CheckProtections().Fetch(context.Background(), 12365, false)
	if err != nil {
		t.Fatal(err)
	}
	d := cs.Files[0].Diff
	if n := strings.Count(d, "\n@@ "); n != 1 || strings.Count(d, "\n-") != 1 || strings.Count(d, "\n+") != 2 {
		t.Fatalf("diff of a ktext file with one real change:\n%s\nwant one hunk, one line out, one in", d)
	}
	if !strings.Contains(d, "\n-\treturn 64;\n+\treturn 256;\n") || strings.Contains(d, "$Change:") || strings.Contains(d, "$Id:") {
		t.Errorf("diff:\n%s\nwant the real change, keywords unexpanded", d)
	}
}
