// Package repocheck holds the repository's own hygiene rules, run by `go test
// ./...` (and so by `make test`): no tracked file is build output (a tracked
// binary or large blob bloats every clone forever, and a committed test
// binary or bootstrap is code nobody reviewed); every test name and path the
// docs and comments cite exists (StaleCitations); the imports follow
// docs/design.md's package map (MapViolations); the glossary's references
// exist (GlossaryReferences), its words for doing something again name
// things only where it says (MisusedWords) and a type named Review is a
// Swarm review (ReviewTypes); no package is named with a word of several
// meanings (AmbiguousPackages); and no function in shared/ is over
// MaxFuncLines (LongFunctions).
package repocheck

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// isPE checks the DOS stub's pointer to the "PE\0\0" signature, so a text
// file that happens to start with "MZ" is not mistaken for a program.
func isPE(head []byte) bool {
	if len(head) < 0x40 || !bytes.HasPrefix(head, []byte("MZ")) {
		return false
	}
	off := int(binary.LittleEndian.Uint32(head[0x3c:]))
	return off+4 <= len(head) && bytes.Equal(head[off:off+4], []byte("PE\x00\x00"))
}
