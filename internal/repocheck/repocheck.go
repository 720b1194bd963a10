// Package repocheck holds the repository's own hygiene rules, run by `go
// test ./...`: no tracked file is build output (a binary bloats every clone,
// and a committed binary is code nobody reviewed); every cited test name and
// path exists (StaleCitations); imports follow docs/design.md's package map
// (MapViolations); the glossary's references exist (GlossaryReferences), its
// words for doing something again are used only where it says (MisusedWords)
// and a type named Review is a Swarm review (ReviewTypes); no package has a
// name of several meanings (AmbiguousPackages); and no function in shared/ is
// over MaxFuncLines (LongFunctions).
package repocheck

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// MaxFileBytes is the largest file the repository may track (1 MiB).
const MaxFileBytes = 1 << 20

// Problems returns one line per tracked file (paths relative to root) that
// is over MaxFileBytes or an executable binary.
func Problems(root string, files []string) ([]string, error) {
	var out []string
	for _, name := range files {
		path := filepath.Join(root, name)
		fi, err := os.Lstat(path)
		if os.IsNotExist(err) {
			continue // deleted in the work tree, not yet committed
		}
		if err != nil {
			return nil, err
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		if fi.Size() > MaxFileBytes {
			out = append(out, fmt.Sprintf("%s: %d bytes, over the %d-byte limit", name, fi.Size(), MaxFileBytes))
			continue
		}
		kind, err := executableKind(path)
		if err != nil {
			return nil, err
		}
		if kind != "" {
			out = append(out, fmt.Sprintf("%s: %s executable", name, kind))
		}
	}
	return out, nil
}

// executableKind names the executable format of the file by its magic
// number (ELF, Mach-O, PE), or returns "" for anything else.
func executableKind(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	head := make([]byte, 512)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return "", err
	}
	head = head[:n]
	switch {
	case bytes.HasPrefix(head, []byte("\x7fELF")):
		return "ELF", nil
	case len(head) >= 4 && isMachO(binary.BigEndian.Uint32(head)):
		return "Mach-O", nil
	case isPE(head):
		return "PE", nil
	}
	return "", nil
}

func isMachO(magic uint32) bool {
	switch magic {
	case 0xfeedface, 0xfeedfacf, 0xcefaedfe, 0xcffaedfe, 0xcafebabe: // 32/64-bit, both byte orders, universal
		return true
	}
	return false
}

// isPE follows the DOS stub's pointer to "PE\0\0", so text starting "MZ" is no program.
func isPE(head []byte) bool {
	if len(head) < 0x40 || !bytes.HasPrefix(head, []byte("MZ")) {
		return false
	}
	off := int(binary.LittleEndian.Uint32(head[0x3c:]))
	return off+4 <= len(head) && bytes.Equal(head[off:off+4], []byte("PE\x00\x00"))
}

// MaxFuncLines is the longest a non-test function in shared/ may be: a
// function reads top to bottom as named steps.
const MaxFuncLines = 80

// ambiguousNames are package names of several meanings ("review": a Swarm
// review, a version, the result contract, the llm stage; docs/design.md).
var ambiguousNames = []string{"review"}

// AmbiguousPackages returns one line per directory under dirs whose name,
// or package clause, has several meanings.
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

// funcName is Recv.Name for a method, Name otherwise.
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

// walkGo parses every .go file under dirs and visits it by its slash path from root.
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
