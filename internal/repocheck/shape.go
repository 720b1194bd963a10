package repocheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
)

// MaxFuncLines is the longest a non-test function in shared/ may be, from
// its func keyword to its closing brace: a stage's Process, like any other
// function, reads top to bottom as named steps.
const MaxFuncLines = 80

// ambiguousNames are package names that would stand for several things:
// "review" is a Swarm review, the review version, the result contract and
// the llm stage (docs/design.md, "Words with one meaning").
var ambiguousNames = []string{"review"}

// AmbiguousPackages returns one line for each directory under dirs (relative
// to root) whose name, or whose Go files' package clause, is a word with
// several meanings.
func AmbiguousPackages(root string, dirs ...string) ([]string, error) {
	var out []string
	err := walkGo(root, dirs, func(rel string, f *ast.File, _ *token.FileSet) {
		if dir := filepath.Base(filepath.Dir(rel)); slices.Contains(ambiguousNames, dir) {
			out = append(out, fmt.Sprintf("%s: directory %q: name the package for the one thing it is", rel, dir))
		} else if name := strings.TrimSuffix(f.Name.Name, "_test"); slices.Contains(ambiguousNames, name) {
			out = append(out, fmt.Sprintf("%s: package %s: name the package for the one thing it is", rel, name))
		}
	})
	return out, err
}

// LongFunctions returns one line, "file:line: name is N lines", for each
// non-test function under dirs (relative to root) over max lines.
func LongFunctions(root string, max int, dirs ...string) ([]string, error) {
	var out []string
	err := walkGo(root, dirs, func(rel string, f *ast.File, fset *token.FileSet) {
		if strings.HasSuffix(rel, "_test.go") {
			return
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			start, end := fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line
			if n := end - start + 1; n > max {
				out = append(out, fmt.Sprintf("%s:%d: %s is %d lines", rel, start, funcName(fd), n))
			}
		}
	})
	return out, err
}

// funcName is a function's name as a reader finds it: Recv.Name for a
// method, Name otherwise.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if g, ok := t.(*ast.IndexExpr); ok { // a generic receiver, T[P]
		t = g.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// walkGo parses every .go file under dirs (relative to root) and calls visit
// with its slash-separated path relative to root.
func walkGo(root string, dirs []string, visit func(rel string, f *ast.File, fset *token.FileSet)) error {
	fset := token.NewFileSet()
	for _, dir := range dirs {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution|parser.ParseComments)
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			visit(filepath.ToSlash(rel), f, fset)
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
