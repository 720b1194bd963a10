package repocheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/internal/fnsettings"
)

// envName is how a setting is spelled: a main that passes one to a call is
// reading a setting itself instead of through its package's loader.
var envName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*[A-Z0-9]$`)

// TestMainsOnlyWire keeps configuration owned where it is used: each
// function's main calls exactly the settings loaders fnsettings lists for it
// (which infra's TestEverySettingCanBeSet checks against the stack) and
// reads no variable by name, nor the process environment.
func TestMainsOnlyWire(t *testing.T) {
	dirs, err := filepath.Glob("../../functions/*")
	if err != nil || len(dirs) < 6 {
		t.Fatalf("found %d function directories (%v); the check would prove nothing", len(dirs), err)
	}
	for _, dir := range dirs {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			want, ok := fnsettings.Functions[name]
			if !ok {
				t.Fatalf("functions/%s is not listed in internal/fnsettings", name)
			}
			var wantNames, got []string
			for _, l := range want {
				wantNames = append(wantNames, l.Name)
			}
			files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
			for _, path := range files {
				if strings.HasSuffix(path, "_test.go") {
					continue
				}
				f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
				if err != nil {
					t.Fatal(err)
				}
				ast.Inspect(f, func(n ast.Node) bool {
					call, ok := n.(*ast.CallExpr)
					if !ok {
						return true
					}
					callee := selector(call.Fun)
					if strings.HasSuffix(callee, "FromEnv") { // jobpage.LinkSettingsFromEnv, outcome.PolicyFromEnv too
						got = append(got, callee)
					}
					if callee == "os.Getenv" || callee == "os.LookupEnv" || callee == "os.Environ" {
						t.Errorf("%s calls %s: read settings through a package's loader", filepath.Base(path), callee)
					}
					for _, arg := range call.Args {
						if lit, ok := arg.(*ast.BasicLit); ok && lit.Kind == token.STRING {
							if s, _ := strconv.Unquote(lit.Value); envName.MatchString(s) {
								t.Errorf("%s reads %s itself: move it into the loader of the package that uses it", filepath.Base(path), s)
							}
						}
						if h := selector(arg); strings.HasPrefix(h, "settings.") {
							t.Errorf("%s reads %s itself: move it into the loader of the package that uses it", filepath.Base(path), h)
						}
					}
					return true
				})
			}
			slices.Sort(got)
			slices.Sort(wantNames)
			if !slices.Equal(got, wantNames) {
				t.Errorf("functions/%s calls loaders %v; internal/fnsettings lists %v", name, got, wantNames)
			}
		})
	}
}
