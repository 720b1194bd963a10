package repocheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/internal/fnsettings"
	"github.com/criticizer/criticizer/shared/settings"
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
					if len(call.Args) > 0 {
						if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							if s, _ := strconv.Unquote(lit.Value); envName.MatchString(s) {
								t.Errorf("%s reads %s itself: move it into the loader of the package that uses it", filepath.Base(path), s)
							}
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

// readerMethods are config.Reader's readers: of a declared setting's
// variable, or (stack) of a name the stack sets itself.
var readerMethods = map[string]bool{
	"Optional": false, "String": false, "Int": false, "Float": false, "Bool": false,
	"OneOf": false, "Seconds": false, "Days": false, "List": false,
	"Stack": true, "StackRequired": true,
}

// TestEveryReadDeclared: each variable a loader reads by name, in every
// branch (a provider's, a channel's), is declared in shared/settings: a
// setting's variable for the setting readers, a *stack* row's name for
// Stack. The Reader refuses the others at cold start, but only on the
// branch a test happens to take; this reads every call site. A read through
// a variable (a key built from a stage's name) is left to that loader's test.
func TestEveryReadDeclared(t *testing.T) {
	var files []string
	for _, root := range []string{"../../shared", "../../functions"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
				files = append(files, path)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	checked := 0
	for _, path := range files {
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, read := range readerCalls(f) {
			if _, ok := settings.Variable(read.key); !read.stack && !ok {
				t.Errorf("%s: %s(%q): no setting declares it in shared/settings", path, read.method, read.key)
			}
			if read.stack && !settings.StackName(read.key) {
				t.Errorf("%s: %s(%q): no *stack* row in shared/settings names it", path, read.method, read.key)
			}
			checked++
		}
	}
	if checked < 60 {
		t.Fatalf("found %d reads by name; the check would prove little", checked)
	}
}

type readerCall struct {
	method, key string
	stack       bool
}

// readerCalls are the calls in f of a reader method with a literal key on
// a parameter of type *config.Reader (*Reader in package config).
func readerCalls(f *ast.File) []readerCall {
	var out []readerCall
	ast.Inspect(f, func(n ast.Node) bool {
		var ft *ast.FuncType
		var body *ast.BlockStmt
		switch fn := n.(type) {
		case *ast.FuncDecl:
			ft, body = fn.Type, fn.Body
			if fn.Recv != nil {
				ft = &ast.FuncType{Params: &ast.FieldList{List: append(slices.Clone(fn.Recv.List), fn.Type.Params.List...)}}
			}
		case *ast.FuncLit:
			ft, body = fn.Type, fn.Body
		}
		if ft == nil || body == nil {
			return true
		}
		readers := map[string]bool{}
		for _, p := range ft.Params.List {
			if star, ok := p.Type.(*ast.StarExpr); ok && (selector(star.X) == "config.Reader" || f.Name.Name == "config" && isIdent(star.X, "Reader")) {
				for _, name := range p.Names {
					readers[name.Name] = true
				}
			}
		}
		ast.Inspect(body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 1 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			stack, isReader := readerMethods[sel.Sel.Name]
			if !isReader {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); !ok || !readers[id.Name] {
				return true
			}
			if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				key, _ := strconv.Unquote(lit.Value)
				out = append(out, readerCall{sel.Sel.Name, key, stack})
			}
			return true
		})
		return true
	})
	return out
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}
