// Package devstack runs the Criticizer stack locally: it starts the AWS
// emulator (MiniStack, installed by localstack/start.sh), synthesizes the CDK app
// in ./infra and deploys the resulting cloud assembly through the emulator's
// CloudFormation API, the way `cdk deploy` would against AWS. The CDK app is the
// only definition of the resources; nothing here creates application resources.
package devstack

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Logf reports progress. Tests may replace it (e.g. with a testing.TB's Logf).
var Logf = func(format string, args ...any) { log.Printf("devstack: "+format, args...) }

// DefaultRegion is the emulator's region and the region of EmulatorConfig.
const DefaultRegion = "us-east-1"

// EmulatorOptions configures StartEmulator. Zero values are sensible defaults.
type EmulatorOptions struct {
	Port int      // on 127.0.0.1; 0 picks a free port
	Env  []string // extra KEY=VALUE entries, inherited by its Lambda processes
	// FunctionEndpoint, when set, is given the emulator's own endpoint and
	// returns the AWS_ENDPOINT_URL the emulator hands to every function
	// process (e.g. a fault-injecting proxy in front of it).
	FunctionEndpoint func(emulator string) string
}

// Emulator is a running MiniStack process (and its process group).
type Emulator struct {
	Endpoint string // http://127.0.0.1:<port>
	LogFile  string // its (and its Lambda processes') output, in <repo>/.run/logs (pruned after a day)

	proc   *group
	tmpDir string
}

// StartEmulator installs the pinned MiniStack into <repo>/.venv (through
// `localstack/start.sh --install-only`, the one install path), starts it on
// 127.0.0.1 in its own process group with AWS_ENDPOINT_URL pointing at itself
// (so the Lambda processes it spawns call back to it) and waits for
// /_ministack/health.
func StartEmulator(ctx context.Context, opts EmulatorOptions) (*Emulator, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute) // install, start and health
	defer cancel()
	install := exec.CommandContext(ctx, "bash", filepath.Join(root, "localstack", "start.sh"), "--install-only")
	install.Dir = root
	if out, err := install.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("install emulator: %w\n%s", err, out)
	}
	bin := filepath.Join(root, ".venv", "bin", "ministack")
	return onFreePort(opts.Port, func(port int) (*Emulator, error) { return startOnce(ctx, root, bin, port, opts) })
}

func startOnce(ctx context.Context, root, bin string, port int, opts EmulatorOptions) (*Emulator, error) {
	endpoint := "http://127.0.0.1:" + strconv.Itoa(port)
	if Healthy(endpoint) {
		return nil, fmt.Errorf("%s: %w by another process", endpoint, errPortInUse)
	}
	logDir, err := logDir()
	if err != nil {
		return nil, err
	}
	e := &Emulator{Endpoint: endpoint, LogFile: filepath.Join(logDir, fmt.Sprintf("ministack-%d.log", port))}
	// The emulator's temp dir holds extracted Lambda code; keep it per instance.
	if e.tmpDir, err = os.MkdirTemp("", fmt.Sprintf("ministack-%d-", port)); err != nil {
		return nil, err
	}
	functionEndpoint := endpoint
	if opts.FunctionEndpoint != nil {
		functionEndpoint = opts.FunctionEndpoint(endpoint)
	}
	cmd := exec.Command(bin)
	cmd.Dir = root
	cmd.Env = append(emulatorEnv(os.Environ()), "GATEWAY_PORT="+strconv.Itoa(port), "BIND_HOST=127.0.0.1",
		"MINISTACK_REGION="+DefaultRegion, "AWS_ENDPOINT_URL="+functionEndpoint, "AWS_ACCESS_KEY_ID=test",
		"AWS_SECRET_ACCESS_KEY=test", "AWS_DEFAULT_REGION="+DefaultRegion, "TMPDIR="+e.tmpDir)
	cmd.Env = append(cmd.Env, opts.Env...)
	if e.proc, err = startLogged(ctx, "emulator", cmd, e.LogFile, 100*time.Millisecond, "already in use", func() bool { return Healthy(endpoint) }); err != nil {
		_ = os.RemoveAll(e.tmpDir)
		return nil, fmt.Errorf("%s: %w", endpoint, err)
	}
	Logf("MiniStack ready on %s (pid %d, log %s)", endpoint, e.proc.pid, e.LogFile)
	return e, nil
}

// Stop sends SIGTERM to the emulator's process group (the emulator and every
// Lambda process it spawned), waits up to 10 s, then SIGKILLs the group.
func (e *Emulator) Stop() error {
	if e == nil || e.proc == nil {
		return nil
	}
	err := e.proc.stop("emulator")
	_ = os.RemoveAll(e.tmpDir)
	e.proc = nil
	return err
}

// Healthy reports whether an emulator answers its health endpoint.
func Healthy(endpoint string) bool {
	return answersOK(strings.TrimRight(endpoint, "/")+"/_ministack/health", "")
}

// answersOK reports whether a GET of url (with bearer, when set) answers
// 200 within 2 s: a server started here is ready.
func answersOK(url, bearer string) bool {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := (&http.Client{Timeout: 2 * time.Second}).Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// emulatorEnv drops the caller's AWS settings: Lambda processes inherit the
// emulator's environment and must never see real credentials or profiles.
func emulatorEnv(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return strings.HasPrefix(k, "AWS_") || k == "GATEWAY_PORT" || k == "EDGE_PORT" || k == "TMPDIR"
	})
}

// RunDir returns <RepoRoot>/.run, the untracked directory for pid files, logs
// and cloud assemblies, creating it with a .gitignore that ignores everything.
func RunDir() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, ".run")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	gi := filepath.Join(dir, ".gitignore")
	if _, err := os.Stat(gi); errors.Is(err, os.ErrNotExist) {
		if err := os.WriteFile(gi, []byte("*\n"), 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// logDir is .run/logs, its files older than a day pruned.
func logDir() (string, error) {
	run, err := RunDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(run, "logs")
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && !fi.IsDir() && time.Since(fi.ModTime()) > 24*time.Hour {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	return dir, os.MkdirAll(dir, 0o755)
}

func logTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// RepoRoot is the nearest ancestor of the working directory holding go.mod
// and localstack/start.sh.
func RepoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if fileExists(filepath.Join(d, "go.mod")) && fileExists(filepath.Join(d, "localstack", "start.sh")) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("repository root not found above %s (no go.mod + localstack/start.sh)", wd)
		}
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
