package main

import (
	"fmt"
	"go/token"
	"go/types"
	"io"
	"slices"
	"strings"

	"golang.org/x/tools/go/callgraph/cha"
	"golang.org/x/tools/go/callgraph/vta"
	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"
)

// The tour (issue 40): one job followed into the notify stage's Process,
// as a reader steps into each call. Measured from the code, not asserted:
// the notify function (functions/notify) is built to SSA and its call graph
// resolved by VTA, so an interface call goes to the implementations main
// actually wires in. From notifystage.(*Notify).Process the calls are
// followed depth first in source order, each project function at its first
// call only; neither code outside the module nor the branches taken when an
// error is not nil (a normal job takes none) are followed.
//
//	rooms:  project packages entered
//	stays:  maximal runs of consecutive entered functions in one package
//	climbs: moves from one stay to the next whose package imports (directly
//	        or not) the one left — up the import layering, as a callback or
//	        a return into a caller's helper does
//	detours: stays between two stays of one package (a → b → a): a call
//	        out to a helper of another package and back
//
// Targets (issue 40): at most 12 rooms, 25 stays, 3 climbs.
const (
	tourMain   = "./functions/notify"
	tourPkg    = "github.com/criticizer/criticizer/shared/notifystage"
	tourModule = "github.com/criticizer/criticizer/"
)

var tourTargets = Tour{Rooms: 12, Stays: 25, Climbs: 3}

// Tour is the measure; Path the stays in order.
type Tour struct {
	Rooms, Stays, Climbs, Detours int
	Path                          []string
}

// runTour measures the tour and prints it with its verdict.
func runTour(out io.Writer) []string {
	t, err := measureTour(tourMain)
	if err != nil {
		return []string{"tour: " + err.Error()}
	}
	verdict := "meets the targets"
	if t.Rooms > tourTargets.Rooms || t.Stays > tourTargets.Stays || t.Climbs > tourTargets.Climbs {
		verdict = "MISSES the targets"
	}
	fmt.Fprintf(out, "\nThe tour of one job into notifystage.(*Notify).Process (targets: <= %d rooms, %d stays, %d climbs):\n\n",
		tourTargets.Rooms, tourTargets.Stays, tourTargets.Climbs)
	fmt.Fprintf(out, "%d rooms, %d stays (%d of them detours a → b → a), %d climbs: %s\n%s\n", t.Rooms, t.Stays, t.Detours, t.Climbs, verdict, strings.Join(t.Path, " → "))
	return nil
}

func measureTour(mainPkg string) (Tour, error) {
	cfg := &packages.Config{Mode: packages.LoadAllSyntax}
	pkgs, err := packages.Load(cfg, mainPkg)
	if err != nil {
		return Tour{}, err
	}
	if packages.PrintErrors(pkgs) > 0 {
		return Tour{}, fmt.Errorf("loading %s failed", mainPkg)
	}
	imports := map[string][]string{} // package path → the project packages it imports
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		for path := range p.Imports {
			imports[p.PkgPath] = append(imports[p.PkgPath], path)
		}
	})
	prog, _ := ssautil.AllPackages(pkgs, ssa.InstantiateGenerics)
	prog.Build()
	funcs := ssautil.AllFunctions(prog)
	cg := vta.CallGraph(funcs, cha.CallGraph(prog))
	var start *ssa.Function
	for fn := range funcs {
		if fn.Pkg != nil && fn.Pkg.Pkg.Path() == tourPkg && fn.Name() == "Process" && fn.Signature.Recv() != nil {
			start = fn
		}
	}
	if start == nil {
		return Tour{}, fmt.Errorf("no %s.(*Notify).Process", tourPkg)
	}
	var entered []string // the package of each project function, in the order entered
	seen := map[*ssa.Function]bool{}
	var visit func(*ssa.Function)
	visit = func(fn *ssa.Function) {
		seen[fn] = true
		if p := pkgOf(fn); strings.HasPrefix(p, tourModule) {
			entered = append(entered, strings.TrimPrefix(p, tourModule))
		}
		node := cg.Nodes[fn]
		if node == nil {
			return
		}
		bySite := map[ssa.CallInstruction][]*ssa.Function{}
		for _, e := range node.Out {
			bySite[e.Site] = append(bySite[e.Site], e.Callee.Func)
		}
		failed := errorBranches(fn)
		for _, b := range fn.Blocks {
			if slices.ContainsFunc(failed, func(f *ssa.BasicBlock) bool { return f.Dominates(b) }) {
				continue
			}
			for _, in := range b.Instrs {
				site, ok := in.(ssa.CallInstruction)
				if !ok {
					continue
				}
				callees := bySite[site]
				slices.SortFunc(callees, func(a, b *ssa.Function) int { return strings.Compare(a.String(), b.String()) })
				for _, c := range callees {
					if !seen[c] && strings.HasPrefix(pkgOf(c), tourModule) {
						visit(c)
					}
				}
			}
		}
	}
	visit(start)
	return tourOf(entered, imports), nil
}

// errorBranches are the blocks a function enters when an error is not nil
// (`if err != nil`, or the else of `if err == nil`): a normal job takes none.
func errorBranches(fn *ssa.Function) []*ssa.BasicBlock {
	var out []*ssa.BasicBlock
	for _, b := range fn.Blocks {
		br, ok := b.Instrs[len(b.Instrs)-1].(*ssa.If)
		if !ok {
			continue
		}
		cmp, ok := br.Cond.(*ssa.BinOp)
		if !ok || (cmp.Op != token.NEQ && cmp.Op != token.EQL) {
			continue
		}
		nilConst := func(v ssa.Value) bool { c, ok := v.(*ssa.Const); return ok && c.IsNil() }
		isErr := func(v ssa.Value) bool { return types.Identical(v.Type(), errorType) }
		if !(isErr(cmp.X) && nilConst(cmp.Y) || isErr(cmp.Y) && nilConst(cmp.X)) {
			continue
		}
		if cmp.Op == token.NEQ {
			out = append(out, b.Succs[0])
		} else {
			out = append(out, b.Succs[1])
		}
	}
	return out
}

var errorType = types.Universe.Lookup("error").Type()

// pkgOf is the package a function (or closure, or instantiation) belongs to.
func pkgOf(fn *ssa.Function) string {
	for fn.Parent() != nil {
		fn = fn.Parent()
	}
	if o := fn.Origin(); o != nil {
		fn = o
	}
	if fn.Pkg != nil {
		return fn.Pkg.Pkg.Path()
	}
	if obj := fn.Object(); obj != nil && obj.Pkg() != nil {
		return obj.Pkg().Path()
	}
	return ""
}

// tourOf counts rooms, stays and climbs of the entered sequence.
func tourOf(entered []string, imports map[string][]string) Tour {
	var t Tour
	rooms := map[string]bool{}
	for _, p := range entered {
		rooms[p] = true
		if n := len(t.Path); n == 0 || t.Path[n-1] != p {
			if n > 0 && dependsOn(imports, tourModule+p, tourModule+t.Path[n-1]) {
				t.Climbs++
			}
			t.Path = append(t.Path, p)
		}
	}
	for i := 1; i+1 < len(t.Path); i++ {
		if t.Path[i-1] == t.Path[i+1] {
			t.Detours++
		}
	}
	t.Rooms, t.Stays = len(rooms), len(t.Path)
	return t
}

// dependsOn says whether package a imports b, directly or not.
func dependsOn(imports map[string][]string, a, b string) bool {
	seen := map[string]bool{}
	var walk func(string) bool
	walk = func(p string) bool {
		if seen[p] {
			return false
		}
		seen[p] = true
		for _, q := range imports[p] {
			if q == b || walk(q) {
				return true
			}
		}
		return false
	}
	return walk(a)
}
