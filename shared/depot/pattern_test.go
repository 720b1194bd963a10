package depot

import "testing"

func TestCoversAndMayOverlap(t *testing.T) {
	for _, tt := range []struct {
		pattern, entry  string
		covers, overlap bool
	}{
		{"//...", "//depot/projectA/...", true, true},
		{"//depot/...", "//depot/projectA/...", true, true},
		{"//depot/projectA/...", "//depot/projectA/...", true, true},
		{"//depot/projectA/src/...", "//depot/projectA/...", false, true}, // inside the entry
		{"//depot/projectB/...", "//depot/projectA/...", false, false},
		{"//depot/projectA/secret.txt", "//depot/projectA/...", false, true},
		{"//depot/projectA/*.key", "//depot/projectA/...", false, true},
		{"//depot/.../secret/...", "//depot/projectA/...", false, true}, // a wildcard mid-path may reach in
		{"//depot/*/secret/...", "//depot/libs/...", false, true},
		{"//depot/pro...", "//depot/projectA/...", true, true},
		{"//depot/%%1/x", "//depot/projectA/...", false, true},
		{"//other/...", "//depot/tools/build.sh", false, false},
		{"//depot/tools/...", "//depot/tools/build.sh", true, true},
		{"//depot/tools/build.sh", "//depot/tools/build.sh", true, true},
		{"//depot/tools/b*", "//depot/tools/build.sh", false, true},
		{"//depot/tools/x.sh", "//depot/tools/build.sh", false, false},
	} {
		if got := Covers(tt.pattern, tt.entry); got != tt.covers {
			t.Errorf("Covers(%q, %q) = %v", tt.pattern, tt.entry, got)
		}
		if got := MayOverlap(tt.pattern, tt.entry); got != tt.overlap {
			t.Errorf("MayOverlap(%q, %q) = %v", tt.pattern, tt.entry, got)
		}
	}
}
