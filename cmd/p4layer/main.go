// Command p4layer stages a user-supplied Perforce client binary as a Lambda
// layer (internal/p4layer): only a binary with the SHA-256 the operator
// names, an ELF executable for the functions' architecture, copied to
// <out>/bin/p4 with a record of its checksum and "p4 -V" version that synth
// checks against the environment's p4LayerSha256. The repository ships no
// Perforce binary; `make p4-layer P4=/path/to/p4 P4_SHA256=<hex>` runs this.
//
//	go run ./cmd/p4layer -p4 /path/to/p4 -sha256 <hex> -arch arm64 -out build/p4-layer
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/criticizer/criticizer/internal/p4layer"
)

func main() {
	src := flag.String("p4", "", "path of the p4 client binary to stage")
	sum := flag.String("sha256", "", "the binary's expected SHA-256 (lower-case hex), as Perforce publishes it")
	arch := flag.String("arch", "arm64", "target architecture: arm64 or x86_64")
	out := flag.String("out", "build/p4-layer", "layer directory; the binary goes to <out>/bin/p4")
	flag.Parse()
	rec, err := p4layer.Stage(*src, *arch, *sum, *out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "p4layer:", err)
		os.Exit(1)
	}
	fmt.Printf("staged %s as %s (ELF %s, %s, SHA-256 %s); set p4LayerSha256 to this checksum in cdk.json\n",
		*src, filepath.Join(*out, "bin", "p4"), rec.Arch, rec.Version, rec.SHA256)
}
