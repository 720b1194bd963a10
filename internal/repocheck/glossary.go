package repocheck

import (
	"fmt"
	"go/ast"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// codeIndex is what the glossary may cite, read from the Go files of a tree.
type codeIndex struct {
	root     string
	dirsOf   map[string][]string        // package name -> its directories
	names    map[string]map[string]bool // directory -> "T", "F", "T.M", "T.Field"
	methods  map[string]map[string]bool // directory -> "M" of each method T.M
	declared map[string][]string        // a name's last element -> directories declaring it
	strs     map[string]bool            // string literal values, struct tag values
	cmdStrs  map[string]bool            // the string literals of cmd/criticizer
	commands [][]string                 // cmd/criticizer's usage lines (help.go), as command words
	exported []exportedName             // non-test files only
}

// exportedName is one exported declaration or member of an exported type,
// or a package's own name (kind "package").
type exportedName struct {
	at, dir, kind, name string
}

// usageLine is a command line of cmd/criticizer's usage text, its
// bracketed global flags removed.
var (
	usageLine   = regexp.MustCompile(`^\s*criticizer\s+(.*)$`)
	bracketed   = regexp.MustCompile(`\[[^\]]*\]`)
	commandWord = regexp.MustCompile(`^[a-z][a-z-]*$`)
	tagValue    = regexp.MustCompile(`:"([^",]*)`)
)

// indexCode parses every .go file under dirs (relative to root).
func indexCode(root string, dirs ...string) (*codeIndex, error) {
	ix := &codeIndex{root: root, dirsOf: map[string][]string{}, names: map[string]map[string]bool{}, methods: map[string]map[string]bool{},
		declared: map[string][]string{}, strs: map[string]bool{}, cmdStrs: map[string]bool{}}
	seenPkg := map[string]bool{}
	err := walkGo(root, dirs, func(rel string, f *ast.File, fset *token.FileSet) {
		dir, test := filepath.ToSlash(filepath.Dir(rel)), strings.HasSuffix(rel, "_test.go")
		pkg := strings.TrimSuffix(f.Name.Name, "_test")
		if !slices.Contains(ix.dirsOf[pkg], dir) {
			ix.dirsOf[pkg] = append(ix.dirsOf[pkg], dir)
		}
		if !test && !seenPkg[dir] {
			seenPkg[dir] = true
			ix.exported = append(ix.exported, exportedName{dir, dir, "package", filepath.Base(dir)})
		}
		if ix.names[dir] == nil {
			ix.names[dir], ix.methods[dir] = map[string]bool{}, map[string]bool{}
		}
		at := func(p token.Pos) string { return fmt.Sprintf("%s:%d", rel, fset.Position(p).Line) }
		ix.declare(f, dir, test, at)
		ix.literals(f, dir == "cmd/criticizer")
	})
	return ix, err
}

// declare records f's names, methods and members; a non-test file's
// exported ones also for the word rules.
func (ix *codeIndex) declare(f *ast.File, dir string, test bool, at func(token.Pos) string) {
	add := func(name string, pos token.Pos, kind string, export bool) {
		ix.names[dir][name] = true
		last := name[strings.LastIndex(name, ".")+1:]
		if !slices.Contains(ix.declared[last], dir) {
			ix.declared[last] = append(ix.declared[last], dir)
		}
		if export && !test && ast.IsExported(last) {
			ix.exported = append(ix.exported, exportedName{at(pos), dir, kind, name})
		}
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			add(funcName(d), d.Pos(), "func", d.Recv == nil || ast.IsExported(strings.Split(funcName(d), ".")[0]))
			if d.Recv != nil {
				ix.methods[dir][d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					add(s.Name.Name, s.Pos(), "type", true)
					for _, m := range members(s) {
						add(s.Name.Name+"."+m.Name, m.Pos(), "member", ast.IsExported(s.Name.Name))
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						add(n.Name, n.Pos(), d.Tok.String(), true)
					}
				}
			}
		}
	}
}

// members are a struct type's field names or an interface's method names.
func members(s *ast.TypeSpec) []*ast.Ident {
	var list *ast.FieldList
	switch t := s.Type.(type) {
	case *ast.StructType:
		list = t.Fields
	case *ast.InterfaceType:
		list = t.Methods
	}
	var out []*ast.Ident
	if list != nil {
		for _, f := range list.List {
			out = append(out, f.Names...)
		}
	}
	return out
}

// literals records every string literal and struct tag value
// (`json:"review_version,omitempty"` gives review_version).
func (ix *codeIndex) literals(f *ast.File, operatorTool bool) {
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		v, err := strconv.Unquote(lit.Value)
		if err != nil {
			return true
		}
		ix.strs[v] = true
		if operatorTool {
			ix.cmdStrs[v] = true
			ix.usage(v)
		}
		if strings.HasPrefix(lit.Value, "`") {
			for _, m := range tagValue.FindAllStringSubmatch(v, -1) {
				ix.strs[m[1]] = true
			}
		}
		return true
	})
}

// usage records the command words of each "criticizer …" line of a
// literal: "dlq replay" of "criticizer [--stack NAME] [--json] dlq replay --stage S …".
func (ix *codeIndex) usage(text string) {
	for _, line := range strings.Split(text, "\n") {
		m := usageLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var words []string
		for _, w := range strings.Fields(bracketed.ReplaceAllString(m[1], "")) {
			if !commandWord.MatchString(w) {
				break
			}
			words = append(words, w)
		}
		ix.commands = append(ix.commands, words)
	}
}

// outsidePackages are packages outside the module the glossary may name by
// their package name.
var outsidePackages = []string{"slog"}

// glossarySection is docs/design.md's "Words with one meaning", up to the
// next section.
func glossarySection(doc string) (string, bool) {
	_, section, ok := strings.Cut(doc, "\n## Words with one meaning\n")
	section, _, _ = strings.Cut(section, "\n## ")
	return section, ok
}

// GlossaryReferences checks every code span of the glossary in doc (the
// text of docs/design.md) against ix: `pkg.Name` and `pkg.Type.Member` are
// declared, a path exists, `criticizer …` is an operator command, and any
// other span is a declared name, a package name or a string literal. It
// returns one line per broken reference.
func GlossaryReferences(doc string, ix *codeIndex) []string {
	section, ok := glossarySection(doc)
	if !ok {
		return []string{`docs/design.md has no "## Words with one meaning" section`}
	}
	var out []string
	for _, span := range backquoted(section) {
		if p := ix.reference(span); p != "" {
			out = append(out, fmt.Sprintf("glossary: `%s`: %s", span, p))
		}
	}
	return out
}

var qualified = regexp.MustCompile(`^([a-z]\w*)\.([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)$`)

// reference returns why span names nothing in the code, or "".
func (ix *codeIndex) reference(span string) string {
	span = strings.TrimPrefix(span, "*")
	if i := strings.Index(span, "…"); i >= 0 { // `internal/standin/…`: the directory
		span = strings.TrimSuffix(span[:i], "/")
		if span == "" {
			return ""
		}
	}
	if words, ok := strings.CutPrefix(span, "criticizer "); ok {
		return ix.command(strings.Fields(words))
	}
	if strings.Contains(span, "/") {
		if _, err := os.Stat(filepath.Join(ix.root, span)); err != nil {
			return "no such path"
		}
		return ""
	}
	if m := qualified.FindStringSubmatch(span); m != nil {
		if slices.Contains(outsidePackages, m[1]) {
			return ""
		}
		if len(ix.dirsOf[m[1]]) == 0 {
			return "no package " + m[1]
		}
		if len(ix.declaring(m[1], m[2])) == 0 {
			return fmt.Sprintf("package %s (%s) declares no %s", m[1], strings.Join(ix.packageDirs(m[1]), ", "), m[2])
		}
		return ""
	}
	if len(ix.declared[span]) > 0 || len(ix.dirsOf[span]) > 0 || ix.strs[span] {
		return ""
	}
	return "no declared name, package or string literal"
}

// packageDirs are the directories a glossary package name stands for: the
// shared/ one where there is one (`swarm.Review` is shared/swarm's), else all.
func (ix *codeIndex) packageDirs(pkg string) []string {
	shared := slices.DeleteFunc(slices.Clone(ix.dirsOf[pkg]), func(d string) bool { return !strings.HasPrefix(d, "shared/") })
	if len(shared) > 0 {
		return shared
	}
	return ix.dirsOf[pkg]
}

// declaring returns pkg's directories that declare name: a top-level name,
// Type.Member, or a method (`store.Retry` for Store.Retry).
func (ix *codeIndex) declaring(pkg, name string) []string {
	return slices.DeleteFunc(slices.Clone(ix.packageDirs(pkg)), func(d string) bool { return !ix.names[d][name] && !ix.methods[d][name] })
}

// command returns why words are not an operator command: they must begin
// a usage line and each be a string literal the tool dispatches on.
func (ix *codeIndex) command(words []string) string {
	for _, w := range words {
		if !ix.cmdStrs[w] {
			return fmt.Sprintf("cmd/criticizer never reads %q", w)
		}
	}
	if slices.ContainsFunc(ix.commands, func(c []string) bool { return len(c) >= len(words) && slices.Equal(c[:len(words)], words) }) {
		return ""
	}
	return "no such command in cmd/criticizer's usage"
}

// againWords are the glossary's words for doing something again, as they
// appear in identWords (ReEnqueue is re_enqueue). "returns" (SQS handing a
// message out again) has none: every function "returns".
var againWords = map[string]*regexp.Regexp{
	"retry":      regexp.MustCompile(`(^|_)(retry|retries|retried|retrying|retryable)(_|$)`),
	"re-enqueue": regexp.MustCompile(`(^|_)re_?enqueue`),
	"replay":     regexp.MustCompile(`(^|_)re_?play`),
	"restart":    regexp.MustCompile(`(^|_)re_?start`),
	"redeliver":  regexp.MustCompile(`(^|_)re_?deliver`),
	"requeue":    regexp.MustCompile(`(^|_)re_?queue`),
	"resend":     regexp.MustCompile(`(^|_)re_?sen[dt]`),
	"settle":     regexp.MustCompile(`(^|_)settl`),
	"reconcile":  regexp.MustCompile(`(^|_)reconcil`),
	"rerun":      regexp.MustCompile(`(^|_)re_?run`),
}

// keptTerms are other vocabularies' names a word rule skips: the webhook's
// replay window (the glossary's own paragraph) and HTTP's Retry-After
// header (RFC 9110 §10.2.3).
var keptTerms = []string{"replay_window", "retry_after"}

// uncheckedAgainWords are glossary rows of the again table no name rule
// follows (see againWords).
var uncheckedAgainWords = []string{"returns"}

// WordUse allows a word in a package the glossary's row does not cite: Dir
// is the package's directory, Why says how the use is the word's one meaning.
type WordUse struct {
	Word, Dir, Why string
}

// MisusedWords checks ix's exported and package names against the glossary's
// again table: a name may use a word only in the packages its row cites, or
// where allowed lists it. One line per misuse, then per unneeded allowance.
func MisusedWords(doc string, ix *codeIndex, allowed []WordUse) []string {
	rows, err := glossaryTable(doc, 2) // the table of words for doing something again
	if err == "" && len(rows) == 0 {
		err = "glossary: no table of words for doing something again"
	}
	var out []string
	if err != "" {
		out = append(out, err)
	}
	cited := map[string][]string{} // word -> directories its row cites
	for word, spans := range rows {
		if againWords[word] == nil && !slices.Contains(uncheckedAgainWords, word) {
			out = append(out, fmt.Sprintf("glossary: %q has no name rule: add it to againWords", word))
		}
		for _, s := range spans {
			cited[word] = append(cited[word], ix.citedDirs(s)...)
		}
	}
	for word := range againWords {
		if _, ok := rows[word]; !ok {
			out = append(out, fmt.Sprintf("againWords has %q, which the glossary's again table does not list", word))
		}
	}
	used := map[WordUse]bool{}
	for _, n := range ix.exported {
		split := identWords(n.name)
		for _, k := range keptTerms {
			split = strings.ReplaceAll(split, k, "")
		}
		for word, re := range againWords {
			if !re.MatchString(split) || slices.Contains(cited[word], n.dir) {
				continue
			}
			if i := slices.IndexFunc(allowed, func(a WordUse) bool { return a.Word == word && a.Dir == n.dir }); i >= 0 {
				used[allowed[i]] = true
				continue
			}
			out = append(out, fmt.Sprintf("%s: %s %s says %q outside its glossary meaning (its row cites %s)",
				n.at, n.kind, n.name, word, strings.Join(orNone(cited[word]), ", ")))
		}
	}
	for _, a := range allowed {
		if !used[a] {
			out = append(out, fmt.Sprintf("allowed %q in %s, but no exported name there needs it: remove the allowance", a.Word, a.Dir))
		}
	}
	return out
}

// glossaryTable reads the glossary's n-th table: each row's bold word
// ("**review** (alone)" is review) and its meaning's code spans.
func glossaryTable(doc string, n int) (map[string][]string, string) {
	section, ok := glossarySection(doc)
	if !ok {
		return nil, `docs/design.md has no "## Words with one meaning" section`
	}
	rows, ts := map[string][]string{}, tables(section)
	if len(ts) < n {
		return rows, ""
	}
	for _, cells := range ts[n-1][1:] {
		if len(cells) >= 2 {
			_, word, _ := strings.Cut(cells[0], "**")
			word, _, _ = strings.Cut(word, "**")
			rows[word] = backquoted(cells[1])
		}
	}
	return rows, ""
}

// reviewTypes are the type names that say "review" alone.
var reviewTypes = []string{"Review", "Reviews"}

// ReviewTypes checks that an exported type named Review or Reviews is a
// Swarm review: declared where the glossary's "review" row cites one, or
// where allowed lists it. One line per other such type, then per unneeded allowance.
func ReviewTypes(doc string, ix *codeIndex, allowed []WordUse) []string {
	rows, err := glossaryTable(doc, 1)
	if err != "" {
		return []string{err}
	}
	var swarm []string // directories the row cites a Review type in
	for _, span := range rows["review"] {
		if m := qualified.FindStringSubmatch(span); m != nil && slices.Contains(reviewTypes, m[2]) {
			swarm = append(swarm, ix.declaring(m[1], m[2])...)
		}
	}
	var out []string
	used := map[WordUse]bool{}
	for _, n := range ix.exported {
		if n.kind != "type" || !slices.Contains(reviewTypes, n.name) || slices.Contains(swarm, n.dir) {
			continue
		}
		if i := slices.IndexFunc(allowed, func(a WordUse) bool { return a.Word == "review" && a.Dir == n.dir }); i >= 0 {
			used[allowed[i]] = true
			continue
		}
		out = append(out, fmt.Sprintf("%s: type %s is not a Swarm review (the glossary's review row cites %s): name it for what it is",
			n.at, n.name, strings.Join(orNone(swarm), ", ")))
	}
	for _, a := range allowed {
		if a.Word == "review" && !used[a] {
			out = append(out, fmt.Sprintf("allowed type %s in %s, but there is none there: remove the allowance", strings.Join(reviewTypes, "/"), a.Dir))
		}
	}
	return out
}

// citedDirs are the directories a code span of the glossary points at.
func (ix *codeIndex) citedDirs(span string) []string {
	if words, ok := strings.CutPrefix(span, "criticizer "); ok && ix.command(strings.Fields(words)) == "" {
		return []string{"cmd/criticizer"}
	}
	if strings.Contains(span, "/") {
		return []string{span}
	}
	if m := qualified.FindStringSubmatch(span); m != nil {
		return ix.declaring(m[1], m[2])
	}
	if token.IsExported(span) { // not a status or mode string, which any package may hold
		return ix.declared[span]
	}
	return nil
}

// identWords splits a Go name into lower-case words joined by "_":
// RequeueReconciled is requeue_reconciled, HTTPRetryAfter http_retry_after.
func identWords(name string) string {
	var b strings.Builder
	r := []rune(name)
	for i, c := range r {
		upper := unicode.IsUpper(c)
		if i > 0 && (c == '_' || c == '.' ||
			upper && (!unicode.IsUpper(r[i-1]) || i+1 < len(r) && unicode.IsLower(r[i+1]))) {
			if r[i-1] != '_' && r[i-1] != '.' {
				b.WriteByte('_')
			}
		}
		if c != '_' && c != '.' {
			b.WriteRune(unicode.ToLower(c))
		}
	}
	return b.String()
}

func orNone(s []string) []string {
	if len(s) == 0 {
		return []string{"no package"}
	}
	return s
}
