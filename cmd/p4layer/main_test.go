package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// buildFor builds a tiny Go program for goarch: a real ELF executable of
// that architecture, standing in for a p4 client.
func buildFor(t *testing.T, goarch string) string {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module fake\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
	out := filepath.Join(dir, "p4")
	// go test puts its own GOROOT/bin first on PATH, so "go" is the toolchain running this test.
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+goarch, "CGO_ENABLED=0", "GOFLAGS=")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building a test ELF: %v\n%s", err, b)
	}
	return out
}

func TestStage(t *testing.T) {
	arm := buildFor(t, "arm64")
	script := filepath.Join(t.TempDir(), "p4")
	os.WriteFile(script, []byte("#!/bin/sh\necho p4\n"), 0o755)

	out := t.TempDir()
	if err := stage(arm, "arm64", out); err != nil {
		t.Fatalf("arm64 ELF for arm64: %v", err)
	}
	st, err := os.Stat(filepath.Join(out, "bin", "p4"))
	if err != nil || st.Mode().Perm() != 0o755 {
		t.Fatalf("staged binary: %v %v", st, err)
	}
	for _, tt := range []struct {
		name, src, arch, want string
	}{
		{"wrong architecture", arm, "x86_64", "built for EM_AARCH64"},
		{"not ELF", script, "arm64", "not an ELF file"},
		{"no binary named", "", "arm64", "make p4-layer P4="},
		{"unknown arch", arm, "mips", "unknown architecture"},
	} {
		err := stage(tt.src, tt.arch, t.TempDir())
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
}
