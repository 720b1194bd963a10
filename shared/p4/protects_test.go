package p4

import "testing"

// judgeProtections reads the table as Perforce applies it: later lines
// override earlier ones, only host "*" grants count (a Lambda has no fixed
// address), an exclusion is marked by "unmap" or a leading "-", and a
// wildcard that could reach into an allow-listed path counts as reaching.
func TestJudgeProtections(t *testing.T) {
	entries := []string{"//depot/projectA/...", "//depot/tools/build.sh"}
	line := func(perm, host, path string, unmap bool) Record {
		r := Record{"perm": perm, "host": host, "user": "criticizer", "line": path}
		if unmap {
			r["unmap"] = ""
		}
		return r
	}
	for _, tt := range []struct {
		name   string
		table  []Record
		reason string
	}{
		{"read on //...", []Record{line("read", "*", "//...", false)}, ""},
		{"read on each entry, list elsewhere", []Record{line("list", "*", "//...", false), line("read", "*", "//depot/projectA/...", false), line("read", "*", "//depot/tools/...", false)}, ""},
		{"an exclusion elsewhere", []Record{line("read", "*", "//...", false), line("list", "*", "//depot/secret/...", true)}, ""},
		{"an exclusion re-granted by a later line", []Record{line("read", "*", "//...", false), line("list", "*", "//depot/projectA/x/...", true), line("read", "*", "//depot/projectA/...", false)}, ""},
		{"an exclusion inside an entry (unmap)", []Record{line("read", "*", "//...", false), line("list", "*", "//depot/projectA/x/...", true)}, "exclusion_under_allowlist"},
		{"an exclusion inside an entry (dash)", []Record{line("read", "*", "//...", false), line("list", "*", "-//depot/projectA/x/...", false)}, "exclusion_under_allowlist"},
		{"a rights exclusion inside an entry", []Record{line("read", "*", "//...", false), line("=read", "*", "-//depot/projectA/assets/...", false)}, "exclusion_under_allowlist"},
		{"a wildcard exclusion that may reach in", []Record{line("read", "*", "//...", false), line("list", "*", "-//depot/.../secret.txt", false)}, "exclusion_under_allowlist"},
		{"an exclusion from one host only", []Record{line("read", "*", "//...", false), line("list", "10.0.0.1", "-//depot/projectA/x/...", false)}, "exclusion_under_allowlist"},
		{"the exclusion of a file entry", []Record{line("read", "*", "//...", false), line("list", "*", "-//depot/tools/build.sh", false)}, "exclusion_under_allowlist"},
		{"read from one host only", []Record{line("read", "10.0.0.1", "//...", false)}, "no_read"},
		{"list only", []Record{line("list", "*", "//...", false)}, "no_read"},
		{"read under a mid-path wildcard", []Record{line("read", "*", "//depot/*/...", false)}, "no_read"},
		{"an empty table", nil, "no_read"},
		{"write somewhere", []Record{line("read", "*", "//...", false), line("write", "*", "//depot/sandbox/...", false)}, "excessive_access"},
		{"a write right", []Record{line("read", "*", "//...", false), line("=write", "*", "//depot/sandbox/...", false)}, "excessive_access"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := judgeProtections(readProtections(tt.table), entries)
			switch {
			case tt.reason == "" && r != nil:
				t.Errorf("refused: %+v", r)
			case tt.reason != "" && (r == nil || r.reason != tt.reason):
				t.Errorf("got %+v, want %s", r, tt.reason)
			}
		})
	}
}
