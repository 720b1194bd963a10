package repocheck

import (
	"fmt"
	"slices"
	"strings"
)

// Package is one package of the module as `go list` reports it: its path
// inside the module and the packages its non-test files import.
type Package struct {
	Path    string // "shared/job"; the module path removed
	Imports []string
}

// layerMap is docs/design.md's "Package map": what each layer may import,
// inside and outside the module, and each package's layer.
type layerMap struct {
	may      map[string][]string // layer -> the layers it may import
	outside  map[string][]string // layer -> import path prefixes; nil: any
	rows     []string            // package rows in order: "shared/job", "cmd/...", "functions/*"
	layerOf  map[string]string   // row -> layer
	problems []string
}

// MapViolations checks packages against the package map in doc (the text
// of docs/design.md): every package is in it, every row names a package,
// and every import is one its layer may make. One line per violation.
func MapViolations(doc string, pkgs []Package) []string {
	m := parseLayerMap(doc)
	out := m.problems
	used := map[string]bool{}
	for _, p := range pkgs {
		row := m.row(p.Path)
		if row == "" {
			out = append(out, fmt.Sprintf("%s: not in the package map", p.Path))
			continue
		}
		used[row] = true
		layer := m.layerOf[row]
		for _, imp := range p.Imports {
			if inner, ok := strings.CutPrefix(imp, modulePath); ok {
				to := m.layerOf[m.row(inner)]
				if to != "" && !slices.Contains(m.may[layer], to) {
					out = append(out, fmt.Sprintf("%s (%s) imports %s (%s): %s may import only %s", p.Path, layer, inner, to, layer, strings.Join(m.may[layer], ", ")))
				}
				continue
			}
			if allowed := m.outside[layer]; allowed != nil && !standard(imp) &&
				!slices.ContainsFunc(allowed, func(p string) bool { return strings.HasPrefix(imp, p) }) {
				out = append(out, fmt.Sprintf("%s (%s) imports %s: outside the module %s may import only the standard library and %s", p.Path, layer, imp, layer, strings.Join(allowed, ", ")))
			}
		}
	}
	for _, r := range m.rows {
		if !used[r] {
			out = append(out, fmt.Sprintf("the package map's row %s names no package", r))
		}
	}
	return out
}

// row is a package's map row: its own, else the longest pattern covering it.
func (m *layerMap) row(pkg string) string {
	if _, ok := m.layerOf[pkg]; ok {
		return pkg
	}
	best := ""
	for _, r := range m.rows {
		if covers(r, pkg) && len(r) > len(best) {
			best = r
		}
	}
	return best
}

// covers: "dir/*" holds the packages one level below dir, "dir/..." dir and all below.
func covers(pattern, pkg string) bool {
	if dir, ok := strings.CutSuffix(pattern, "/*"); ok {
		rest, below := strings.CutPrefix(pkg, dir+"/")
		return below && !strings.Contains(rest, "/")
	}
	if dir, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == dir || strings.HasPrefix(pkg, dir+"/")
	}
	return false
}

// parseLayerMap reads the "## Package map" section's layer table (layer |
// may import | outside the module) and package table (package | layer | owns).
func parseLayerMap(doc string) *layerMap {
	m := &layerMap{may: map[string][]string{}, outside: map[string][]string{}, layerOf: map[string]string{}}
	_, section, ok := strings.Cut(doc, "\n## Package map\n")
	if !ok {
		m.problems = append(m.problems, `docs/design.md has no "## Package map" section`)
		return m
	}
	section, _, _ = strings.Cut(section, "\n## ")
	table := ""
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "|") {
			table = ""
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case table == "":
			table = cells[0] // the header names the table
		case strings.HasPrefix(cells[0], "---"):
		case table == "layer" && len(cells) >= 3:
			m.may[cells[0]] = splitList(cells[1])
			if cells[2] != "any" {
				m.outside[cells[0]] = backquoted(cells[2])
			}
		case table == "package" && len(cells) >= 2:
			row := strings.Trim(cells[0], "`")
			if _, dup := m.layerOf[row]; dup {
				m.problems = append(m.problems, fmt.Sprintf("the package map lists %s twice", row))
			}
			m.rows = append(m.rows, row)
			m.layerOf[row] = cells[1]
		}
	}
	m.validate()
	return m
}

// validate reports a map that names a layer its layer table does not define.
func (m *layerMap) validate() {
	if len(m.may) == 0 || len(m.rows) == 0 {
		m.problems = append(m.problems, "the package map has no layer table or no package table")
	}
	for layer, may := range m.may {
		for _, l := range may {
			if _, ok := m.may[l]; !ok {
				m.problems = append(m.problems, fmt.Sprintf("the package map's layer %s may import %s, which is no layer", layer, l))
			}
		}
	}
	for _, r := range m.rows {
		if _, ok := m.may[m.layerOf[r]]; !ok {
			m.problems = append(m.problems, fmt.Sprintf("the package map puts %s in %s, which is no layer", r, m.layerOf[r]))
		}
	}
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func backquoted(s string) []string {
	var out []string
	for _, m := range codeSpan.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// standard: a standard library import path (no dot in its first element).
func standard(imp string) bool {
	first, _, _ := strings.Cut(imp, "/")
	return !strings.Contains(first, ".")
}
