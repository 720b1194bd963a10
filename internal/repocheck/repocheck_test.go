package repocheck

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestTrackedFiles fails when the repository tracks a file over 1 MiB or an
// executable binary (a committed test binary or Lambda bootstrap).
func TestTrackedFiles(t *testing.T) {
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not a git work tree (%v): the tracked-file check needs git", err)
	}
	out, err := exec.Command("git", "-C", strings.TrimSpace(string(root)), "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	files := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	if len(files) < 10 {
		t.Fatalf("git ls-files listed %d files; the check would prove nothing", len(files))
	}
	problems, err := Problems(strings.TrimSpace(string(root)), files)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

func TestProblems(t *testing.T) {
	pe := make([]byte, 0x100)
	copy(pe, "MZ")
	binary.LittleEndian.PutUint32(pe[0x3c:], 0x80)
	copy(pe[0x80:], "PE\x00\x00")
	textMZ := append([]byte("MZ is how this note starts"), bytes.Repeat([]byte(" "), 100)...)
	macho := []byte{0xcf, 0xfa, 0xed, 0xfe, 7, 0, 0, 1}

	cases := []struct {
		name    string
		content []byte
		want    string // substring of the problem, "" for none
	}{
		{"main.go", []byte("package main\n"), ""},
		{"redact.test", append([]byte("\x7fELF\x02\x01\x01"), make([]byte, 64)...), "ELF executable"},
		{"bootstrap", macho, "Mach-O executable"},
		{"tool.exe", pe, "PE executable"},
		{"notes.txt", textMZ, ""},
		{"big.json", bytes.Repeat([]byte("x"), MaxFileBytes+1), "over the"},
		{"limit.json", bytes.Repeat([]byte("x"), MaxFileBytes), ""},
		{"empty", nil, ""},
	}
	dir := t.TempDir()
	var names []string
	for _, c := range cases {
		if err := os.WriteFile(filepath.Join(dir, c.name), c.content, 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, c.name)
	}
	names = append(names, "deleted-in-work-tree.go")
	got, err := Problems(dir, names)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		i := slices.IndexFunc(got, func(p string) bool { return strings.HasPrefix(p, c.name+":") })
		switch {
		case c.want == "" && i >= 0:
			t.Errorf("%s flagged: %s", c.name, got[i])
		case c.want != "" && i < 0:
			t.Errorf("%s not flagged, want %q", c.name, c.want)
		case c.want != "" && !strings.Contains(got[i], c.want):
			t.Errorf("%s: got %q, want %q", c.name, got[i], c.want)
		}
	}
}
