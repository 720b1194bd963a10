// Package p4depot builds what tests and benchmarks need to run against the
// p4 stand-in (internal/standin/p4): the stand-in binary itself, and
// generated fixture depots of any size (a 5,000-file changelist) with an
// optional simulated per-command server latency.
package p4depot

import (
	"cmp"
	"crypto/sha256"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// BuildStandin builds the p4 stand-in into dir and returns its path. A
// prebuilt one named by $P4_STANDIN is used as is.
func BuildStandin(dir string) (string, error) {
	if p := os.Getenv("P4_STANDIN"); p != "" {
		return p, nil
	}
	out := filepath.Join(dir, "p4")
	gobin := filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		gobin = "go"
	}
	cmd := exec.Command(gobin, "build", "-o", out, "github.com/criticizer/criticizer/internal/standin/p4")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building the p4 stand-in: %w", err)
	}
	return out, nil
}

// Spec describes a generated changelist.
type Spec struct {
	Change  int64
	Files   int           // files in the change
	Shelved bool          // a pending change with shelved files
	Latency time.Duration // server.json latency_ms: slept once per command
	// Root is the depot path the files live under, e.g. "//depot/projectA/gen/".
	Root string
}

// Generate writes a fixture depot into dir: one change of s.Files files under
// s.Root, mostly edits (with before and after content), every tenth an add
// and every twentieth (from the fifth) a delete; content is ~40 lines of
// Go-like text, and every hundredth file plants a fake credential so that
// redaction has work to do.
func Generate(dir string, s Spec) error {
	s.Root = cmp.Or(s.Root, "//depot/projectA/gen/")
	for _, d := range []string{"changes", "users", filepath.Join("files", "gen")} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	type file struct {
		Path       string `json:"path"`
		Action     string `json:"action"`
		Type       string `json:"type"`
		Rev        int    `json:"rev"`
		BeforeFile string `json:"before_file,omitempty"`
		AfterFile  string `json:"after_file,omitempty"`
	}
	files := make([]file, 0, s.Files)
	for i := range s.Files {
		f := file{Path: fmt.Sprintf("%sdir%03d/file%05d.go", s.Root, i/100, i), Type: "text", Action: "edit", Rev: 3}
		before, after := content(i, false), content(i, true)
		switch {
		case i%10 == 0:
			f.Action, f.Rev, before = "add", 1, ""
		case i%20 == 5:
			f.Action, f.Rev, after = "delete", 4, ""
		}
		if s.Shelved {
			f.Rev-- // the base revision; 0 for an add
		}
		for _, c := range []struct {
			name, text string
			field      *string
		}{{"before", before, &f.BeforeFile}, {"after", after, &f.AfterFile}} {
			if c.text == "" {
				continue
			}
			*c.field = fmt.Sprintf("files/gen/%05d.%s", i, c.name)
			if err := os.WriteFile(filepath.Join(dir, *c.field), []byte(c.text), 0o644); err != nil {
				return err
			}
		}
		files = append(files, f)
	}
	status := "submitted"
	if s.Shelved {
		status = "pending"
	}
	change := map[string]any{"change": s.Change, "status": status, "shelved": s.Shelved, "user": "gen",
		"client": "gen-ws", "time": 1731920000, "desc": fmt.Sprintf("Generated change of %d files\n", s.Files), "files": files}
	if err := writeJSON(filepath.Join(dir, "changes", fmt.Sprintf("%d.json", s.Change)), change); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(dir, "users", "gen.json"), map[string]string{"User": "gen", "Email": "gen@example.com", "FullName": "Generated"}); err != nil {
		return err
	}
	if s.Latency > 0 {
		return writeJSON(filepath.Join(dir, "server.json"), map[string]any{"latency_ms": s.Latency.Milliseconds()})
	}
	return nil
}

func content(i int, after bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "// Package gen%d is generated.\npackage gen%d\n\nimport \"fmt\"\n\n", i, i)
	for j := range 12 {
		fmt.Fprintf(&b, "func f%d() {\n", j)
		v := j
		if after && j%5 == 2 {
			v = j * 7 // the edit: a few changed lines per file
		}
		fmt.Fprintf(&b, "\tfmt.Println(%d)\n}\n", v)
	}
	if after && i%100 == 1 {
		// A key that looks real (detectors skip low-entropy placeholders),
		// different per file, the same on every run.
		sum := sha256.Sum256([]byte(strconv.Itoa(i)))
		fmt.Fprintf(&b, "\nconst awsKey = \"AKIA%s\"\n", base32.StdEncoding.EncodeToString(sum[:])[:16])
	}
	return b.String()
}

func writeJSON(name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(name, b, 0o644)
}
