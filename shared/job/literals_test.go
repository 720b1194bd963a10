package job

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoStateOrRefusalLiteralsOutsideJob keeps the state machine in one
// home: no non-test Go file outside this package spells a job state, a stage
// status or a claim refusal reason as a string literal in code; they use the
// constants. Constant declarations of another package's own vocabulary (the
// outbox's row status "pending", …) are that package's words, not ours.
func TestNoStateOrRefusalLiteralsOutsideJob(t *testing.T) {
	words := map[string]bool{}
	for _, s := range States {
		words[string(s)] = true
	}
	for _, s := range []StageStatus{StagePending, StageRunning, StageRetryWait, StageDone, StageFailed} {
		words[string(s)] = true
	}
	for _, r := range []Refusal{RefusedSucceeded, RefusedStageDone, RefusedStaleStage, RefusedDeadLettered, RefusedLeaseHeld, RefusedBudget, RefusedUnexpected} {
		words[string(r)] = true
	}
	root := filepath.Join("..", "..")
	scanned := 0
	for _, dir := range []string{"shared", "functions", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && path == filepath.Join(root, "shared", "job") {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			scanned++
			ast.Inspect(f, func(n ast.Node) bool {
				if g, ok := n.(*ast.GenDecl); ok && g.Tok == token.CONST {
					return false
				}
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				if v, err := strconv.Unquote(lit.Value); err == nil && words[v] {
					t.Errorf("%s: string literal %s spells a job state, stage status or refusal reason; use the shared/job constant", fset.Position(lit.Pos()), lit.Value)
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if scanned < 50 {
		t.Fatalf("scanned %d files: the walk did not find the repository", scanned)
	}
}
