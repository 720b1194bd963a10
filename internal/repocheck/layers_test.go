package repocheck

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestPackageMap keeps docs/design.md's package map true: every package of
// the module is in it, every row names a package, and no package imports
// outside what its layer may import.
func TestPackageMap(t *testing.T) {
	doc, err := os.ReadFile("../../docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []Package
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkgs = append(pkgs, Package{Path: strings.TrimPrefix(f[0], modulePath), Imports: f[1:]})
	}
	if len(pkgs) < 60 {
		t.Fatalf("go list printed %d packages; the check would prove nothing", len(pkgs))
	}
	for _, v := range MapViolations(string(doc), pkgs) {
		t.Error(v)
	}
}

// TestMapViolations checks a small map: a package missing from the map, a
// row naming nothing, an import against the layers (up, sideways between
// stages, into a tool) and an outside import a layer may not make are each
// reported; imports the map allows are not.
func TestMapViolations(t *testing.T) {
	doc := "# Design\n\n## Package map\n\n" +
		"| layer | may import | outside the module |\n|---|---|---|\n" +
		"| base | base | any |\n| stages | base | any |\n| functions | base, stages | the standard library, `github.com/aws/` |\n| tools | base, stages, tools | any |\n\n" +
		"| package | layer | owns |\n|---|---|---|\n" +
		"| `shared/a` | base | a |\n| `shared/b` | base | b |\n| `shared/s1` | stages | s1 |\n| `shared/s2` | stages | s2 |\n" +
		"| `shared/gone` | base | nothing now |\n| `functions/*` | functions | mains |\n| `internal/...` | tools | tools |\n\n## Next\n| `shared/z` | base | outside the section |\n"
	m := modulePath
	pkgs := []Package{
		{"shared/a", []string{"fmt", m + "shared/b", "github.com/x/y"}},
		{"shared/b", []string{m + "shared/s1"}},
		{"shared/s1", []string{m + "shared/a", m + "shared/s2"}},
		{"shared/s2", []string{m + "internal/standin/x"}},
		{"shared/new", nil},
		{"functions/f", []string{"context", m + "shared/s1", "github.com/aws/aws-lambda-go/lambda", "github.com/other/lib"}},
		{"internal/standin/x", []string{m + "shared/s2", m + "internal/devstack"}},
		{"internal/devstack", nil},
	}
	got := MapViolations(doc, pkgs)
	want := []string{
		"shared/b (base) imports shared/s1 (stages): base may import only base",
		"shared/s1 (stages) imports shared/s2 (stages): stages may import only base",
		"shared/s2 (stages) imports internal/standin/x (tools): stages may import only base",
		"shared/new: not in the package map",
		"functions/f (functions) imports github.com/other/lib: outside the module functions may import only the standard library and github.com/aws/",
		"the package map's row shared/gone names no package",
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n got %q\nwant %q", got, want)
	}
}

// maxNotifyImports bounds the project packages the notify stage imports
// (issue 40): it delivers a review decided before it (shared/decide, which
// also records the digest entry and builds the outcome records), so it reads
// no environment (shared/notifysettings), no policy and no reactions.
const maxNotifyImports = 10

// TestNotifyOnlyDelivers fails when shared/notifystage imports more project
// packages than maxNotifyImports, or imports what decides a review.
func TestNotifyOnlyDelivers(t *testing.T) {
	cmd := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, "./shared/notifystage")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var ours []string
	for _, imp := range strings.Fields(string(out)) {
		if strings.HasPrefix(imp, modulePath) {
			ours = append(ours, imp)
		}
	}
	if len(ours) == 0 {
		t.Fatal("go list printed no project imports; the check would prove nothing")
	}
	if len(ours) > maxNotifyImports {
		t.Errorf("notifystage imports %d project packages, at most %d: %v", len(ours), maxNotifyImports, ours)
	}
	if slices.Contains(ours, modulePath+"shared/ledger") {
		t.Error("notifystage imports shared/ledger: the rerun comparison is decided before notify (shared/decide)")
	}
}
