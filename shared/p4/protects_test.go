package p4

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/failure"
)

// realShapes is where the recorded real-shape fixtures live, shared with
// the p4 stand-in's contract tests (sources in its README.md).
const realShapes = "../../internal/standin/p4/testdata/realshapes/"

// protectsLine builds a record of "p4 -ztag protects" in the shape real
// servers send: {perm, host, user, line, depotFile}, "isgroup" and
// "unmap" with empty values (github.com/brettbates/p4access
// prots/prots_test.go).
func protectsLine(n, perm, host, name, path string, group, unmap bool) Record {
	r := Record{"perm": perm, "host": host, "user": name, "line": n, "depotFile": path}
	if group {
		r["isgroup"] = ""
	}
	if unmap {
		r["unmap"] = ""
	}
	return r
}

// TestJudgeProtections reads the table as Perforce applies it: later lines
// (by "line" number) override earlier ones, group lines apply like the
// user's own, only host "*" grants count (a Lambda has no fixed address)
// while a host-restricted exclusion still excludes, a "=read" right is not
// the read level, and a wildcard that could reach into an allow-listed
// path counts as reaching.
func TestJudgeProtections(t *testing.T) {
	entries := []string{"//depot/projectA/...", "//depot/tools/build.sh"}
	u := func(n, perm, host, path string) Record {
		return protectsLine(n, perm, host, "criticizer", path, false, false)
	}
	g := func(n, perm, host, path string) Record {
		return protectsLine(n, perm, host, "reviewers", path, true, false)
	}
	ex := func(n, perm, host, path string) Record {
		return protectsLine(n, perm, host, "criticizer", path, false, true)
	}
	for _, tt := range []struct {
		name   string
		table  []Record
		reason string
	}{
		{"read on //...", []Record{u("1", "read", "*", "//...")}, ""},
		{"read through a group", []Record{g("1", "read", "*", "//...")}, ""},
		{"read on each entry, list elsewhere", []Record{u("1", "list", "*", "//..."), u("4", "read", "*", "//depot/projectA/..."), g("7", "read", "*", "//depot/tools/...")}, ""},
		{"an exclusion elsewhere", []Record{u("1", "read", "*", "//..."), ex("2", "list", "*", "//depot/secret/...")}, ""},
		{"an exclusion re-granted by a later line", []Record{u("1", "read", "*", "//..."), ex("2", "list", "*", "//depot/projectA/x/..."), u("3", "read", "*", "//depot/projectA/...")}, ""},
		{"the same lines printed out of order", []Record{u("3", "read", "*", "//depot/projectA/..."), u("1", "read", "*", "//..."), ex("2", "list", "*", "//depot/projectA/x/...")}, ""},
		{"an exclusion inside an entry", []Record{u("1", "read", "*", "//..."), ex("2", "list", "*", "//depot/projectA/x/...")}, "exclusion_under_allowlist"},
		{"a group's exclusion inside an entry", []Record{u("1", "read", "*", "//..."), protectsLine("2", "list", "*", "contractors", "//depot/projectA/x/...", true, true)}, "exclusion_under_allowlist"},
		{"an exclusion marked with a dash (unverified shape)", []Record{u("1", "read", "*", "//..."), u("2", "list", "*", "-//depot/projectA/x/...")}, "exclusion_under_allowlist"},
		{"a rights exclusion inside an entry", []Record{u("1", "read", "*", "//..."), ex("2", "=read", "*", "//depot/projectA/assets/...")}, "exclusion_under_allowlist"},
		{"a wildcard exclusion that may reach in", []Record{u("1", "read", "*", "//..."), ex("2", "list", "*", "//depot/.../secret.txt")}, "exclusion_under_allowlist"},
		{"an exclusion from one host only", []Record{u("1", "read", "*", "//..."), ex("2", "list", "10.0.0.1", "//depot/projectA/x/...")}, "exclusion_under_allowlist"},
		{"an exclusion from a host pattern", []Record{u("1", "read", "*", "//..."), ex("2", "list", "192.168.1.*", "//depot/projectA/x/...")}, "exclusion_under_allowlist"},
		{"the exclusion of a file entry", []Record{u("1", "read", "*", "//..."), ex("2", "list", "*", "//depot/tools/build.sh")}, "exclusion_under_allowlist"},
		{"read from one host only", []Record{u("1", "read", "10.0.0.1", "//...")}, "no_read"},
		{"read from a host range only", []Record{u("1", "list", "*", "//..."), g("2", "read", "10.0.0.0/8", "//depot/...")}, "no_read"},
		{"a read right, not the read level", []Record{u("1", "list", "*", "//..."), u("2", "=read", "*", "//depot/...")}, "no_read"},
		{"list only", []Record{u("1", "list", "*", "//...")}, "no_read"},
		{"read under a mid-path wildcard", []Record{u("1", "read", "*", "//depot/*/...")}, "no_read"},
		{"an empty table", nil, "no_read"},
		{"write somewhere", []Record{u("1", "read", "*", "//..."), u("2", "write", "*", "//depot/sandbox/...")}, "excessive_access"},
		{"write through a group from one host", []Record{u("1", "read", "*", "//..."), g("2", "write", "10.0.0.1", "//depot/sandbox/...")}, "excessive_access"},
		{"a write right", []Record{u("1", "read", "*", "//..."), u("2", "=write", "*", "//depot/sandbox/...")}, "excessive_access"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lines, err := readProtections(tt.table)
			if err != nil {
				t.Fatal(err)
			}
			r := judgeProtections(lines, entries)
			switch {
			case tt.reason == "" && r != nil:
				t.Errorf("refused: %+v", r)
			case tt.reason != "" && (r == nil || r.reason != tt.reason):
				t.Errorf("got %+v, want %s", r, tt.reason)
			}
		})
	}
}

// TestReadProtectionsRefusesOtherShapes: a record the reader cannot take
// for a protections line fails the proof closed, naming the fields (never
// the values); the old belief that "line" holds the path is one of them.
func TestReadProtectionsRefusesOtherShapes(t *testing.T) {
	for _, tt := range []struct {
		name string
		rec  Record
	}{
		{"line holding a path, no depotFile", Record{"perm": "read", "host": "*", "user": "criticizer", "line": "//..."}},
		{"line holding a path", Record{"perm": "read", "host": "*", "user": "criticizer", "line": "//...", "depotFile": "//..."}},
		{"no perm", Record{"host": "*", "user": "criticizer", "line": "1", "depotFile": "//..."}},
		{"an empty depotFile", Record{"perm": "read", "host": "*", "user": "criticizer", "line": "1", "depotFile": ""}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readProtections([]Record{tt.rec})
			if failure.Classify(err) != failure.SchemaInvalid {
				t.Fatalf("err = %v, want SCHEMA_INVALID", err)
			}
		})
	}
}

// TestProtectionsFromRealShapes judges every recorded real-shape protects
// table (testdata/realshapes/protects.json, the same records the stand-in
// must print) through the real reader.
func TestProtectionsFromRealShapes(t *testing.T) {
	var fx struct {
		Scenarios []struct {
			Name    string
			Records []Record
		}
	}
	b, err := os.ReadFile(realShapes + "protects.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	entries := []string{"//depot/projectA/...", "//depot/tools/..."}
	want := map[string]string{
		"a user line":          "excessive_access",
		"a group line":         "excessive_access",
		"an exclusionary line": "excessive_access",
		"service user through groups, an exclusion elsewhere": "",
		"a group's exclusion under an allow-listed path":      "exclusion_under_allowlist",
		"read only from one host range":                       "no_read",
		"an exclusion from one host only":                     "exclusion_under_allowlist",
		"a read right, not the read level":                    "no_read",
		"the stand-in's default table":                        "",
	}
	if len(fx.Scenarios) != len(want) {
		t.Fatalf("%d scenarios in the fixture, %d judged here", len(fx.Scenarios), len(want))
	}
	for _, sc := range fx.Scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			reason, ok := want[sc.Name]
			if !ok {
				t.Fatalf("no verdict for scenario %q", sc.Name)
			}
			lines, err := readProtections(sc.Records)
			if err != nil {
				t.Fatal(err)
			}
			if len(lines) != len(sc.Records) {
				t.Fatalf("%d lines read of %d records", len(lines), len(sc.Records))
			}
			for i, l := range lines {
				if l.path == "" || strings.HasPrefix(l.path, "-") || l.number < 1 {
					t.Errorf("line %d read as %+v", i, l)
				}
			}
			got := ""
			if r := judgeProtections(lines, entries); r != nil {
				got = r.reason
			}
			if got != reason {
				t.Errorf("verdict %q, want %q", got, reason)
			}
		})
	}
}
