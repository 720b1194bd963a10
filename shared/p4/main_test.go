package p4

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/criticizer/criticizer/internal/standin/p4depot"
)

// envDumpName is the name under which the test binary pretends to be p4 and
// prints its argv and environment as one -Mj record: it shows exactly what a
// child of Runner receives.
const envDumpName = "p4-envdump"

var (
	standinPath string // the p4 stand-in, built once for the package's tests
	envDumpPath string // a copy of this test binary named envDumpName
)

func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == envDumpName {
		dumpEnv()
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "p4test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		if err := setup(dir); err != nil {
			fmt.Fprintln(os.Stderr, "p4 tests setup:", err)
			return 1
		}
		return m.Run()
	}()
	os.Exit(code)
}

func setup(dir string) error {
	var err error
	if standinPath, err = p4depot.BuildStandin(dir); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	envDumpPath = filepath.Join(dir, envDumpName)
	b, err := os.ReadFile(self)
	if err != nil {
		return err
	}
	return os.WriteFile(envDumpPath, b, 0o755)
}

func dumpEnv() {
	rec := map[string]string{"args": strings.Join(os.Args[1:], " ")}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		rec["env."+k] = v
	}
	if wd, err := os.Getwd(); err == nil {
		rec["cwd"] = wd
	}
	json.NewEncoder(os.Stdout).Encode(rec)
}

// fixtureDepot copies the stand-in's fixture depot into a temporary
// directory, so fault counters start from zero in every test.
func fixtureDepot(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "depot")
	if err := os.CopyFS(dst, os.DirFS("../../internal/standin/p4/depot")); err != nil {
		t.Fatal(err)
	}
	return dst
}

// writeChange adds a change fixture to a depot directory.
func writeChange(t *testing.T, depotDir string, change map[string]any) {
	t.Helper()
	b, err := json.Marshal(change)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(depotDir, "changes")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, fmt.Sprint(change["change"])+".json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// newTestRunner returns a Runner on the stand-in serving depotDir, and the
// buffer its JSON logs go to.
func newTestRunner(t *testing.T, depotDir string, edit func(*Config)) (*Runner, *bytes.Buffer) {
	t.Helper()
	cfg := Config{
		Path:    standinPath,
		Port:    depotDir,
		User:    "criticizer",
		Client:  "criticizer-ci",
		Home:    t.TempDir(),
		Timeout: 10 * time.Second,
	}
	if edit != nil {
		edit(&cfg)
	}
	var logs bytes.Buffer
	r, err := NewRunner(cfg, slog.New(slog.NewJSONHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return r, &logs
}

// logLines decodes JSON log lines.
func logLines(t *testing.T, r io.Reader) []map[string]any {
	t.Helper()
	var out []map[string]any
	dec := json.NewDecoder(r)
	for dec.More() {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}
