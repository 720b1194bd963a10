package p4

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/failure"
)

// The pre-flight's protections proof is the fetch's own: sound protections
// are proved and named line by line, an exclusion under the allow-list is
// refused naming its line, and nothing is described either way.
func TestProveProtections(t *testing.T) {
	for _, tt := range []struct {
		name, server string
		refused      string // "": proved
	}{
		{"sound", `{}`, ""},
		{"exclusion under the allow-list", `{"protect":["//depot/projectA/tools/..."]}`, "//depot/projectA/tools/..."},
		{"exclusions hidden", `{"protect":["//depot/projectA/..."],"hide_exclusions":true}`, "hidden_exclusions"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			depotDir := fixtureDepot(t)
			if err := os.WriteFile(filepath.Join(depotDir, "server.json"), []byte(tt.server), 0o644); err != nil {
				t.Fatal(err)
			}
			r, _ := newTestRunner(t, depotDir, nil)
			rec := &recordingRunner{next: r}
			f, err := NewFetcher(rec, testAllowList(t, nil), nil)
			if err != nil {
				t.Fatal(err)
			}
			lines, err := f.ProveProtections(context.Background())
			if tt.refused == "" {
				if err != nil || len(lines) == 0 || !strings.Contains(strings.Join(lines, "; "), "//...") {
					t.Fatalf("lines %q, err %v: want the table's lines", lines, err)
				}
			} else if failure.Classify(err) != failure.SecurityFailure || !strings.Contains(err.Error(), tt.refused) || lines != nil {
				t.Fatalf("lines %q, err %v: want SECURITY_FAILURE naming %s", lines, err, tt.refused)
			}
			for _, c := range rec.calls {
				if !strings.HasPrefix(c, "protects") {
					t.Errorf("the proof ran %q", c)
				}
			}
		})
	}
}
