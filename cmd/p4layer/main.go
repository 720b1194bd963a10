// Command p4layer stages a user-supplied Perforce client binary as a Lambda
// layer: it checks that the file is an ELF executable for the functions'
// architecture and copies it to <out>/bin/p4 (mode 0755). The repository
// ships no Perforce binary; `make p4-layer P4=/path/to/p4` runs this.
//
//	go run ./cmd/p4layer -p4 /path/to/p4 -arch arm64 -out build/p4-layer
package main

import (
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// machines maps the Lambda architecture names to ELF machine types.
var machines = map[string]elf.Machine{
	"arm64":  elf.EM_AARCH64,
	"x86_64": elf.EM_X86_64,
	"amd64":  elf.EM_X86_64,
}

func main() {
	src := flag.String("p4", "", "path of the p4 client binary to stage")
	arch := flag.String("arch", "arm64", "target architecture: arm64 or x86_64")
	out := flag.String("out", "build/p4-layer", "layer directory; the binary goes to <out>/bin/p4")
	flag.Parse()
	if err := stage(*src, *arch, *out); err != nil {
		fmt.Fprintln(os.Stderr, "p4layer:", err)
		os.Exit(1)
	}
	fmt.Printf("staged %s as %s (ELF %s executable)\n", *src, filepath.Join(*out, "bin", "p4"), *arch)
}

// check returns why path is not an ELF executable for arch, or nil.
func check(path, arch string) error {
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

func stage(src, arch, out string) error {
	if src == "" {
		return errors.New("name the p4 binary: make p4-layer P4=/path/to/p4")
	}
	if err := check(src, arch); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	dir := filepath.Join(out, "bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".p4-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, in); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o755); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, "p4"))
}
