package repocheck

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// A citation is a test name or repository path a document or comment names,
// where it was found, and what is wrong with it ("" while unchecked).
type citation struct {
	file string // slash-separated, relative to the root
	line int
	text string
}

// modulePath prefixes import paths cited in full; they name repository
// directories once it is removed.
const modulePath = "github.com/criticizer/criticizer/"

var (
	// A test citation: a Test, Benchmark or Fuzz function's name, optionally
	// qualified by its package or directory name and followed by a subtest.
	testSpan = regexp.MustCompile(`^(?:([a-z][a-z0-9_/]*)\.)?((?:Test|Benchmark|Fuzz)[A-Z0-9_][A-Za-z0-9_]*)(?:/\S*)?$`)
	testWord = regexp.MustCompile(`(?:\b([a-z][a-z0-9_]*)\.)?\b((?:Test|Benchmark|Fuzz)[A-Z0-9_][A-Za-z0-9_]*)\b`)
	// A path-shaped code span: file-name segments, a slash or an extension.
	pathSpan = regexp.MustCompile(`^(?:\./)?[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.*…-]*)*(?:#[\w-]*)?(?::\d+)?$`)
	extSpan  = regexp.MustCompile(`\.(?:md|go|json|env|ya?ml|py|sh|txt|mod|sum)$`)
	// A bare file name is checked only when it is a document or Go source
	// (a depot's .criticizer.yaml is not in this repository).
	bareSpan = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9_.-]*\.(?:md|go)$`)
	// A capitalized segment without extension after a directory is a test
	// name (integration/EndToEnd), not a path: ours are lower case or have one.
	nameSegment = regexp.MustCompile(`/[A-Z][A-Za-z0-9]*(?:=\S*)?$`)
	// A Markdown heading's text, and an HTML anchor written into a page.
	heading    = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	htmlAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	// Double-quoted text in a comment is an example of output or input.
	quoted = regexp.MustCompile(`"[^"]*"`)
	// In a Go comment: a bare Markdown file name.
	mdWord   = regexp.MustCompile(`(?:^|[^/\w.-])([A-Za-z0-9_-]+\.md)\b`)
	linkText = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	codeSpan = regexp.MustCompile("`([^`]+)`")
	// A selector after a package directory (shared/job.Transitions).
	selectorTail = regexp.MustCompile(`\.[A-Za-z_]\w*$`)
)

// StaleCitations checks every test name and repository path cited in the
// Markdown documents (README.md and docs/: code spans, links and their
// anchors) and the Go comments under root: how many it checked, and
// "file:line: what" for each that names nothing in the repository.
func StaleCitations(root string) (checked int, stale []string, err error) {
	r, err := scanRepo(root)
	if err != nil {
		return 0, nil, err
	}
	for _, c := range r.cites {
		if why := r.check(c); why != "" {
			stale = append(stale, fmt.Sprintf("%s:%d: %s", c.file, c.line, why))
		}
	}
	return len(r.cites), stale, nil
}

// repo is what the check knows of the repository: its files, and the
// packages that declare each test function.
type repo struct {
	root  string
	files map[string]bool            // slash paths of files and directories
	bases map[string]bool            // base names of files
	tests map[string][]string        // test name -> package and directory names
	slugs map[string]map[string]bool // Markdown file -> its headings' anchors
	decls map[string]bool            // other top-level names (a type TestDefinition)
	top   []string                   // top-level directory names
	paths *regexp.Regexp
	cites []citation
}

func scanRepo(root string) (*repo, error) {
	r := &repo{root: root, files: map[string]bool{}, bases: map[string]bool{}, tests: map[string][]string{}, decls: map[string]bool{}, slugs: map[string]map[string]bool{}}
	var docs, gofiles []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if d.IsDir() && skippedDir(rel, d.Name()) {
			return filepath.SkipDir
		}
		inTestdata := strings.HasPrefix(rel, "testdata/") || strings.Contains(rel, "/testdata/")
		r.files[rel] = true
		switch {
		case d.IsDir():
			if !strings.Contains(rel, "/") {
				r.top = append(r.top, rel)
			}
		case strings.HasSuffix(rel, ".go") && !inTestdata:
			gofiles = append(gofiles, rel)
		case rel == "README.md" || (strings.HasPrefix(rel, "docs/") && strings.HasSuffix(rel, ".md")):
			docs = append(docs, rel)
		}
		if !d.IsDir() {
			r.bases[d.Name()] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	r.paths = r.pathWords()
	for _, f := range gofiles {
		if err := r.readGo(f); err != nil {
			return nil, err
		}
	}
	for _, f := range docs {
		if err := r.readMarkdown(f); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// skippedDir is tool output and hidden directories: not the repository's own.
func skippedDir(rel, name string) bool {
	return strings.HasPrefix(name, ".") || slices.Contains([]string{"build", "cdk.out", "node_modules"}, rel)
}

// readGo records the tests a file declares and the citations in its comments.
func (r *repo) readGo(rel string) error {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(r.root, rel), nil, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return err
	}
	test := strings.HasSuffix(rel, "_test.go")
	pkg, dir := strings.TrimSuffix(f.Name.Name, "_test"), path.Base(path.Dir(rel))
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if test && d.Recv == nil && testSpan.MatchString(d.Name.Name) {
				r.tests[d.Name.Name] = append(r.tests[d.Name.Name], pkg, dir)
			} else {
				r.decls[d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				if ts, ok := s.(*ast.TypeSpec); ok {
					r.decls[ts.Name.Name] = true
				}
			}
		}
	}
	for _, g := range f.Comments {
		for _, c := range g.List {
			first := fset.Position(c.Pos()).Line
			for i, line := range strings.Split(c.Text, "\n") {
				r.commentLine(rel, first+i, line)
			}
		}
	}
	return nil
}

// commentLine takes citations from a comment: words shaped like a test
// name, a path from a top-level directory or a Markdown file name.
func (r *repo) commentLine(rel string, n int, line string) {
	if strings.HasPrefix(line, "//go:") || strings.HasPrefix(line, "//nolint") {
		return
	}
	text := quoted.ReplaceAllString(line, "")
	for _, ix := range testWord.FindAllStringIndex(text, -1) {
		if inForeignPath(text, ix[0], ix[1]) {
			continue
		}
		r.cites = append(r.cites, citation{rel, n, text[ix[0]:ix[1]]})
	}
	for _, m := range r.paths.FindAllStringSubmatch(line, -1) {
		if !nameSegment.MatchString(m[1]) {
			r.cites = append(r.cites, citation{rel, n, m[1]})
		}
	}
	for _, m := range mdWord.FindAllStringSubmatch(line, -1) {
		r.cites = append(r.cites, citation{rel, n, m[1]})
	}
}

// inForeignPath: text[i:j], shaped like a test name, is a segment of another
// project's path (module/TestIntegration/…, TestRunApi.php).
func inForeignPath(text string, i, j int) bool {
	return i > 0 && text[i-1] == '/' || j < len(text) && text[j] == '/' ||
		j+1 < len(text) && text[j] == '.' && text[j+1] >= 'a' && text[j+1] <= 'z'
}

// pathWords matches a path that starts at one of the top-level directories.
func (r *repo) pathWords() *regexp.Regexp {
	quoted := make([]string, len(r.top))
	for i, t := range r.top {
		quoted[i] = regexp.QuoteMeta(t)
	}
	return regexp.MustCompile(`(?:^|[\s("'\x60])((?:\./)?(?:` + strings.Join(quoted, "|") + `)/[A-Za-z0-9_./*…-]*[A-Za-z0-9_*…])`)
}

// readMarkdown records the code spans and link targets outside fenced
// blocks (commands and output, not citations), and its headings' anchors.
func (r *repo) readMarkdown(rel string) error {
	f, err := os.Open(filepath.Join(r.root, rel))
	if err != nil {
		return err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 0, 64*1024), 1<<20)
	fenced := false
	slugs := map[string]bool{}
	r.slugs[rel] = slugs
	for n := 1; s.Scan(); n++ {
		line := s.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		if h := heading.FindStringSubmatch(line); h != nil {
			addSlug(slugs, h[1])
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			slugs[m[1]] = true
		}
		for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
			if span := strings.TrimSpace(m[1]); testSpan.MatchString(span) || r.pathShaped(span) {
				r.cites = append(r.cites, citation{rel, n, span})
			}
		}
		for _, m := range linkText.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
			if t := m[1]; !strings.Contains(t, ":") {
				r.cites = append(r.cites, citation{rel, n, "link:" + t})
			}
		}
	}
	return s.Err()
}

// pathShaped: a span that starts at a top-level entry, or a bare file name
// with a known extension.
func (r *repo) pathShaped(span string) bool {
	span = strings.TrimPrefix(span, modulePath)
	if !pathSpan.MatchString(span) || nameSegment.MatchString(span) {
		return false
	}
	clean := strings.TrimPrefix(span, "./")
	if !strings.Contains(clean, "/") {
		return bareSpan.MatchString(clean)
	}
	return slices.Contains(r.top, strings.Split(clean, "/")[0])
}

// check says what is wrong with a citation, or "".
func (r *repo) check(c citation) string {
	if t, ok := strings.CutPrefix(c.text, "link:"); ok {
		return r.checkLink(c.file, t)
	}
	if m := testSpan.FindStringSubmatch(c.text); m != nil {
		return r.checkTest(c.text, m[1], m[2])
	}
	if m := testWord.FindStringSubmatch(c.text); m != nil && m[0] == c.text {
		return r.checkTest(c.text, m[1], m[2])
	}
	return r.checkPath(c)
}

// checkLink resolves a link from its file's directory; an anchor into a
// Markdown file read must be one of its headings'.
func (r *repo) checkLink(from, link string) string {
	target, anchor, _ := strings.Cut(link, "#")
	file := from
	if target != "" {
		file = path.Clean(path.Join(path.Dir(from), target))
		if !r.files[file] {
			return fmt.Sprintf("link to %s: no such file", link)
		}
	}
	if slugs, read := r.slugs[file]; read && anchor != "" && !slugs[anchor] {
		return fmt.Sprintf("link to %s: %s has no heading #%s", link, file, anchor)
	}
	return ""
}

// addSlug records GitHub's anchor for a heading: lower-cased, without
// punctuation, spaces as hyphens, "-1", "-2", … when repeated.
func addSlug(slugs map[string]bool, text string) {
	var b strings.Builder
	for _, c := range strings.ToLower(strings.TrimSpace(text)) {
		switch {
		case c == ' ':
			b.WriteRune('-')
		case c == '-' || c == '_' || unicode.IsLetter(c) || unicode.IsDigit(c) || unicode.Is(unicode.Mn, c):
			b.WriteRune(c)
		}
	}
	slug := b.String()
	for i := 1; slugs[slug]; i++ {
		slug = fmt.Sprintf("%s-%d", b.String(), i)
	}
	slugs[slug] = true
}

func (r *repo) checkTest(cited, pkg, name string) string {
	pkgs := r.tests[name]
	if len(pkgs) == 0 && r.decls[name] {
		return "" // a type or helper whose name starts like a test
	}
	if len(pkgs) == 0 {
		return fmt.Sprintf("test %s does not exist", cited)
	}
	if i := strings.LastIndex(pkg, "/"); i >= 0 {
		pkg = pkg[i+1:]
	}
	if pkg != "" && !slices.Contains(pkgs, pkg) {
		return fmt.Sprintf("test %s.%s: %s is declared in %s", pkg, name, name, strings.Join(slices.Compact(slices.Sorted(slices.Values(pkgs))), ", "))
	}
	return ""
}

// checkPath resolves a path from the root (a bare file name anywhere); a
// trailing anchor, line, ellipsis or selector (shared/job.Lease) is not in it.
func (r *repo) checkPath(c citation) string {
	p := strings.TrimPrefix(strings.TrimPrefix(c.text, modulePath), "./")
	p, _, _ = strings.Cut(p, "#")
	if i := strings.LastIndex(p, ":"); i > 0 {
		p = p[:i]
	}
	p = strings.TrimRight(strings.TrimSuffix(strings.TrimSuffix(p, "…"), "..."), "/")
	if !strings.Contains(p, "/") {
		if r.bases[p] || r.files[p] {
			return ""
		}
		return fmt.Sprintf("%s: no file of that name in the repository", c.text)
	}
	if strings.ContainsAny(p, "*") {
		if matches, _ := filepath.Glob(filepath.Join(r.root, filepath.FromSlash(p))); len(matches) > 0 {
			return ""
		}
	}
	if r.files[p] {
		return ""
	}
	if dir := selectorTail.ReplaceAllString(p, ""); dir != p && r.files[dir] && !extSpan.MatchString(p) {
		return ""
	}
	return fmt.Sprintf("%s: no such file or directory", c.text)
}
