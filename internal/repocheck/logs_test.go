package repocheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryFunctionLogsThroughTheSanitizer fails if a function's wiring could
// log an error without the sanitizer (rule SC-5): each main package must
// build its logger with coldstart.Load(ctx, name, sanitize.Logs), and none
// may reach a logger any other way (slog's default logger, package log,
// obs.NewLogger), since those would skip it.
func TestEveryFunctionLogsThroughTheSanitizer(t *testing.T) {
	dirs, err := filepath.Glob("../../functions/*")
	if err != nil || len(dirs) < 6 {
		t.Fatalf("found %d function directories (%v); the check would prove nothing", len(dirs), err)
	}
	forbidden := map[string]bool{
		"slog.New": true, "slog.Default": true, "slog.SetDefault": true, "slog.Debug": true, "slog.Info": true,
		"slog.Warn": true, "slog.Error": true, "slog.Log": true, "slog.DebugContext": true, "slog.InfoContext": true,
		"slog.WarnContext": true, "slog.ErrorContext": true, "slog.LogAttrs": true, "obs.NewLogger": true,
	}
	for _, dir := range dirs {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
			wired := 0
			for _, path := range files {
				if strings.HasSuffix(path, "_test.go") {
					continue
				}
				src, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				f, err := parser.ParseFile(token.NewFileSet(), path, src, 0)
				if err != nil {
					t.Fatal(err)
				}
				ast.Inspect(f, func(n ast.Node) bool {
					call, ok := n.(*ast.CallExpr)
					if !ok {
						return true
					}
					callee := selector(call.Fun)
					switch {
					case forbidden[callee] || strings.HasPrefix(callee, "log."):
						t.Errorf("%s calls %s: log only through the logger coldstart.Load builds", filepath.Base(path), callee)
					case callee == "coldstart.Load":
						if len(call.Args) != 3 || selector(call.Args[2]) != "sanitize.Logs" {
							t.Errorf("%s: coldstart.Load must be given sanitize.Logs", filepath.Base(path))
						} else {
							wired++
						}
					}
					return true
				})
			}
			if wired != 1 {
				t.Errorf("functions/%s calls coldstart.Load(…, sanitize.Logs) %d times, want once", name, wired)
			}
		})
	}
}

// selector returns "pkg.Name" for a pkg.Name expression, else "".
func selector(e ast.Expr) string {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return ""
	}
	return id.Name + "." + sel.Sel.Name
}
