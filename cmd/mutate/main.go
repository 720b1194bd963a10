// Command mutate is the mutation check (`make mutate`, run by `make test`):
// it applies each mutation listed in mutations.json — one deliberate break of
// a guarantee in the code that enforces it — to a scratch copy of the
// repository, runs the unit tests the entry names, and reports whether the
// tests caught it (failed) or it survived (passed). It exits non-zero when a
// mutation survives, when its original snippet is no longer in the file
// exactly once (the list must follow the code), or when the named tests fail
// without the mutation (a catch would prove nothing).
//
//	mutate [-list FILE] [-only ID[,ID…]] [-v]
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Mutation is one entry of mutations.json.
type Mutation struct {
	ID          string            `json:"id"`
	Rule        string            `json:"rule"` // the docs/guarantees.md rule it breaks
	File        string            `json:"file"`
	Original    string            `json:"original"`
	Replacement string            `json:"replacement"`
	Why         string            `json:"why"`
	Packages    []string          `json:"packages"` // go test packages, narrow
	Run         string            `json:"run"`      // go test -run
	Env         map[string]string `json:"env,omitempty"`
}

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("mutate", flag.ContinueOnError)
	list := fs.String("list", "cmd/mutate/mutations.json", "the mutation list")
	only := fs.String("only", "", "comma-separated mutation ids to run (default all)")
	verbose := fs.Bool("v", false, "print the test output of every run")
	if err := fs.Parse(args); err != nil {
		return err
	}
	muts, err := Load(*list)
	if err != nil {
		return err
	}
	if *only != "" {
		want := strings.Split(*only, ",")
		muts = slices.DeleteFunc(muts, func(m Mutation) bool { return !slices.Contains(want, m.ID) })
	}
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	if err := Check(root, muts); err != nil {
		return err
	}
	// A stable copy per checkout, so go's build cache serves the packages a
	// mutation does not touch across runs; it is refreshed every run.
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	sum := sha256.Sum256([]byte(root))
	work := filepath.Join(cache, "criticizer-mutate", hex.EncodeToString(sum[:6]))
	if err := os.RemoveAll(work); err != nil {
		return err
	}
	if err := copyTracked(ctx, root, work); err != nil {
		return err
	}

	baseline := map[string]error{}
	var survived, broken []string
	for _, m := range muts {
		key := m.command()
		if _, done := baseline[key]; !done {
			_, berr := goTest(ctx, work, m)
			baseline[key] = berr
		}
		if baseline[key] != nil {
			broken = append(broken, m.ID)
			fmt.Fprintf(out, "BROKEN    %-28s the named tests fail without the mutation: %v\n", m.ID, baseline[key])
			continue
		}
		start := time.Now()
		output, terr := mutated(ctx, work, m)
		var exit *exec.ExitError
		switch {
		case terr == nil:
			survived = append(survived, m.ID)
			fmt.Fprintf(out, "SURVIVED  %-28s %s: %s\n", m.ID, m.Rule, m.Why)
		case errors.As(terr, &exit) && (bytes.Contains(output, []byte("[build failed]")) || bytes.Contains(output, []byte("[setup failed]"))):
			// A mutation the compiler rejects proves nothing about the tests.
			broken = append(broken, m.ID)
			fmt.Fprintf(out, "INVALID   %-28s the mutated code does not compile\n", m.ID)
		case errors.As(terr, &exit):
			fmt.Fprintf(out, "caught    %-28s %-5s %s (%s)\n", m.ID, m.Rule, m.File, time.Since(start).Round(100*time.Millisecond))
		default:
			return fmt.Errorf("%s: %w", m.ID, terr)
		}
		if *verbose || terr == nil {
			out.Write(output)
		}
	}
	fmt.Fprintf(out, "\n%d mutations: %d caught, %d survived, %d invalid or with failing tests\n", len(muts), len(muts)-len(survived)-len(broken), len(survived), len(broken))
	if len(survived)+len(broken) > 0 {
		return fmt.Errorf("survived: %v; invalid or failing unmutated: %v", survived, broken)
	}
	return nil
}

// Load reads a mutation list and checks every entry is complete.
func Load(path string) ([]Mutation, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var muts []Mutation
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&muts); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	seen := map[string]bool{}
	for i, m := range muts {
		switch {
		case m.ID == "" || seen[m.ID]:
			return nil, fmt.Errorf("%s: entry %d: missing or duplicate id %q", path, i, m.ID)
		case m.File == "" || m.Original == "" || m.Original == m.Replacement:
			return nil, fmt.Errorf("%s: %s: file, original and a different replacement are required", path, m.ID)
		case m.Why == "" || m.Rule == "":
			return nil, fmt.Errorf("%s: %s: say which rule it breaks and why it matters", path, m.ID)
		case len(m.Packages) == 0 || m.Run == "":
			return nil, fmt.Errorf("%s: %s: name the narrow packages and tests that must catch it", path, m.ID)
		}
		seen[m.ID] = true
	}
	return muts, nil
}

// Check verifies that each mutation's original snippet occurs exactly once
// in its file under root.
func Check(root string, muts []Mutation) error {
	var problems []string
	for _, m := range muts {
		b, err := os.ReadFile(filepath.Join(root, m.File))
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", m.ID, err))
			continue
		}
		if n := strings.Count(string(b), m.Original); n != 1 {
			problems = append(problems, fmt.Sprintf("%s: original snippet found %d times in %s (want exactly once)", m.ID, n, m.File))
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	return nil
}

// command identifies a test run (baselines are shared between mutations
// that run the same tests).
func (m Mutation) command() string {
	return fmt.Sprint(m.Env) + "|" + m.Run + "|" + strings.Join(m.Packages, " ") // fmt prints a map sorted by key
}

// mutated applies m in work, runs its tests and restores the file.
func mutated(ctx context.Context, work string, m Mutation) ([]byte, error) {
	path := filepath.Join(work, m.File)
	orig, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(orig), m.Original, m.Replacement, 1)), 0o644); err != nil {
		return nil, err
	}
	defer os.WriteFile(path, orig, 0o644)
	return goTest(ctx, work, m)
}

// goTest runs the mutation's tests in work; an *exec.ExitError means they
// failed (or did not compile: a mutation the compiler catches is caught).
func goTest(ctx context.Context, work string, m Mutation) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	args := append([]string{"test", "-count=1", "-run", m.Run}, m.Packages...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = work
	cmd.Env = os.Environ()
	for k, v := range m.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return out, fmt.Errorf("go test timed out: %w", ctx.Err())
	}
	return out, err
}

// copyTracked copies the repository's tracked files (and the untracked ones
// not ignored: work in progress is checked too) into dst.
func copyTracked(ctx context.Context, root, dst string) error {
	cmd := exec.CommandContext(ctx, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	list, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("git ls-files: %w", err)
	}
	for _, f := range strings.Split(strings.TrimRight(string(list), "\x00"), "\x00") {
		if f == "" {
			continue
		}
		src := filepath.Join(root, f)
		info, err := os.Lstat(src)
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted in the work tree
		}
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			continue
		}
		b, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, f)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(target, b, info.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}
