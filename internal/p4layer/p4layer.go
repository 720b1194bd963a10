// Package p4layer owns the p4 client layer: staging the Perforce client binary
// the operator chose as <layer>/bin/p4, only if its SHA-256 is the one they
// named and it is an ELF executable for the functions' architecture, with a
// record (<layer>/p4-layer.json: checksum, "p4 -V" version, architecture)
// that synth verifies. The binary receives the Perforce password and the
// fetch function's AWS credentials: it is trusted by checksum, never by shape.
package p4layer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// RecordName is the record's file name inside the layer directory.
const RecordName = "p4-layer.json"

// Record is what the layer build saw.
type Record struct {
	SHA256  string `json:"sha256"`  // of bin/p4, lower-case hex
	Version string `json:"version"` // the "Rev." line of "p4 -V"
	Arch    string `json:"arch"`
}

// machines maps the Lambda architecture names to ELF machine types.
var machines = map[string]elf.Machine{
	"arm64":  elf.EM_AARCH64,
	"x86_64": elf.EM_X86_64,
	"amd64":  elf.EM_X86_64,
}

var sha256Re = regexp.MustCompile(`^[0-9a-f]{64}$`)

// CheckSHA256 reports whether sum is a SHA-256 in lower-case hex.
func CheckSHA256(sum string) error {
	if !sha256Re.MatchString(sum) {
		return errors.New("want a SHA-256 as 64 lower-case hex digits (sha256sum prints it)")
	}
	return nil
}

// FileSHA256 returns the SHA-256 of the file at path, lower-case hex.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Stage copies src to <out>/bin/p4 (mode 0755) and writes the record, if
// src's SHA-256 is wantSHA and it is an ELF executable for arch.
func Stage(src, arch, wantSHA, out string) (Record, error) {
	if src == "" {
		return Record{}, errors.New("name the p4 binary: make p4-layer P4=/path/to/p4 P4_SHA256=<its published SHA-256>")
	}
	if err := CheckSHA256(wantSHA); err != nil {
		return Record{}, fmt.Errorf("expected checksum %q: %w (make p4-layer P4_SHA256=…)", wantSHA, err)
	}
	got, err := FileSHA256(src)
	if err != nil {
		return Record{}, err
	}
	if got != wantSHA {
		return Record{}, fmt.Errorf("%s has SHA-256 %s, not the expected %s: refusing a binary nobody chose", src, got, wantSHA)
	}
	if err := checkELF(src, arch); err != nil {
		return Record{}, err
	}
	version, err := versionOf(src)
	if err != nil {
		return Record{}, err
	}
	rec := Record{SHA256: got, Version: version, Arch: arch}
	if err := install(src, filepath.Join(out, "bin"), "p4", 0o755); err != nil {
		return Record{}, err
	}
	b, _ := json.MarshalIndent(rec, "", "  ")
	return rec, os.WriteFile(filepath.Join(out, RecordName), append(b, '\n'), 0o644)
}

// Verify checks the layer in dir against the configured checksum: its
// record must name wantSHA, and bin/p4 must still hash to it.
func Verify(dir, wantSHA string) (Record, error) {
	var rec Record
	b, err := os.ReadFile(filepath.Join(dir, RecordName))
	if err != nil {
		return rec, fmt.Errorf("no %s in %s: stage the layer with make p4-layer P4=… P4_SHA256=…", RecordName, dir)
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, fmt.Errorf("%s in %s: %w", RecordName, dir, err)
	}
	if rec.SHA256 != wantSHA {
		return rec, fmt.Errorf("the layer in %s was built from a p4 with SHA-256 %s (%s), not the configured %s", dir, rec.SHA256, rec.Version, wantSHA)
	}
	got, err := FileSHA256(filepath.Join(dir, "bin", "p4"))
	if err != nil {
		return rec, fmt.Errorf("the layer in %s has no bin/p4: %w", dir, err)
	}
	if got != wantSHA {
		return rec, fmt.Errorf("the layer's bin/p4 in %s has SHA-256 %s, not the recorded and configured %s: it was replaced after the build", dir, got, wantSHA)
	}
	return rec, nil
}

// checkELF returns why path is not an ELF executable for arch, or nil.
func checkELF(path, arch string) error {
	want, ok := machines[arch]
	if !ok {
		return fmt.Errorf("unknown architecture %q (want arm64 or x86_64)", arch)
	}
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%s is not an ELF file (a Linux p4 client is needed): %w", path, err)
	}
	defer f.Close()
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return fmt.Errorf("%s is an ELF %s, not an executable", path, f.Type)
	}
	if f.Machine != want {
		return fmt.Errorf("%s is built for %s, the functions run on %s (%s)", path, f.Machine, arch, want)
	}
	if f.Class != elf.ELFCLASS64 {
		return fmt.Errorf("%s is a 32-bit binary", path)
	}
	return nil
}

// revRe is "p4 -V"'s version line: "Rev. P4/LINUX26X86_64/2023.2/2519561 (2023/11/20)."
var revRe = regexp.MustCompile(`Rev\. P4/[A-Za-z0-9_]+/[0-9]{4}\.[0-9]+[A-Za-z.]*/[0-9]+( \([0-9/]+\))?`)

// identRe is the version as a real p4 binary stores it: the line is composed
// when printed (support/ident.cc: "Rev. " << GetIdent() << " (" << GetDate()
// << ")."), from an ident string with the "@(#)" magic (support/ident.h
// IdentMagic; client/clientmain.cc: "P4/<os>/<release>/<patch>").
var identRe = regexp.MustCompile(`@\(#\)(P4/[A-Za-z0-9_]+/[0-9]{4}\.[0-9]+[A-Za-z.]*/[0-9]+)`)

// versionOf is the binary's "p4 -V" version: run, or (another
// architecture) read from its ident string or a stored version line.
func versionOf(path string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "-V").Output()
	if err != nil {
		if out, err = os.ReadFile(path); err != nil {
			return "", err
		}
		if m := identRe.FindSubmatch(out); m != nil {
			return "Rev. " + string(m[1]), nil
		}
	}
	v := revRe.Find(out)
	if v == nil {
		return "", fmt.Errorf("%s: no \"Rev. P4/…\" version in p4 -V or in the binary: not a Perforce client", path)
	}
	return strings.TrimSpace(string(bytes.TrimSuffix(v, []byte(".")))), nil
}

// install copies src to dir/name atomically with mode.
func install(src, dir, name string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".p4-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = io.Copy(tmp, in)
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, name))
}
