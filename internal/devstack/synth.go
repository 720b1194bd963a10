package devstack

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// FunctionNames are the Lambda functions of the stack (functions/<name>,
// built to <assetRoot>/<name>/bootstrap).
var FunctionNames = []string{"webhook", "fetch", "llm", "notify", "sweeper", "sesevents", "jobpage", "digest", "doctor"}

// DefaultEnv is the environment Synth (and so Up) synthesizes when none is
// named: the emulator's.
const DefaultEnv = "local"

// SynthOptions configures Synth.
type SynthOptions struct {
	Env       string         // the environment to synthesize (context "env"); default DefaultEnv
	Overrides map[string]any // laid over the environment's settings (context "overrides")
	AssetRoot string         // holds <function>/bootstrap (context "assetRoot"); default <repo>/build/lambda
	Context   map[string]any // further context keys; they win over cdk.json's context
	OutDir    string         // receives the cloud assembly; default a new temporary directory
	Output    io.Writer      // the app's stdout/stderr; default os.Stderr
}

// Synth builds ./infra and runs it the way the cdk CLI does: context from
// cdk.json plus the options, passed in CDK_CONTEXT_JSON, with CDK_OUTDIR set.
// It returns the cloud assembly directory.
func Synth(ctx context.Context, opts SynthOptions) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	opts.Env = cmp.Or(opts.Env, DefaultEnv)
	if opts.AssetRoot, err = filepath.Abs(cmp.Or(opts.AssetRoot, filepath.Join(root, "build", "lambda"))); err != nil {
		return "", err
	}
	opts.Output = cmp.Or[io.Writer](opts.Output, os.Stderr)
	outDir := opts.OutDir
	if outDir == "" {
		if outDir, err = os.MkdirTemp("", "criticizer-cdk.out-"); err != nil {
			return "", err
		}
	} else {
		// Reusing a directory: drop the previous assembly (stale asset copies).
		if fileExists(filepath.Join(outDir, "manifest.json")) {
			if err := os.RemoveAll(outDir); err != nil {
				return "", err
			}
		}
		if err := os.MkdirAll(outDir, 0o755); err != nil {
			return "", err
		}
	}
	if outDir, err = filepath.Abs(outDir); err != nil {
		return "", err
	}
	cdkCtx, err := cdkJSONContext(root)
	if err != nil {
		return "", err
	}
	cdkCtx["env"] = opts.Env
	cdkCtx["assetRoot"] = opts.AssetRoot
	// Emulator deviation: MiniStack rejects CloudWatch alarms on metric math /
	// Metrics Insights ("Properties.Metrics is not supported"); the stack leaves
	// those out (only EscalationsAlarm today).
	cdkCtx["metricMathAlarms"] = false
	if len(opts.Overrides) > 0 {
		cdkCtx["overrides"] = opts.Overrides
	}
	maps.Copy(cdkCtx, opts.Context)
	ctxJSON, err := json.Marshal(cdkCtx)
	if err != nil {
		return "", fmt.Errorf("context: %w", err)
	}
	binDir, err := os.MkdirTemp("", "criticizer-infra-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(binDir)
	bin := filepath.Join(binDir, "infra")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./infra")
	build.Dir = root
	build.Stdout, build.Stderr = opts.Output, opts.Output
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("go build ./infra: %w", err)
	}
	app := exec.CommandContext(ctx, bin)
	app.Dir = root
	app.Env = append(os.Environ(),
		"CDK_OUTDIR="+outDir,
		"CDK_CONTEXT_JSON="+string(ctxJSON),
		"JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION=1",
		"JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=16,18,20,21,23",
	)
	app.Stdout, app.Stderr = opts.Output, opts.Output
	if err := app.Run(); err != nil {
		return "", fmt.Errorf("synth (env %s): %w", opts.Env, err)
	}
	if !fileExists(filepath.Join(outDir, "manifest.json")) {
		return "", fmt.Errorf("synth produced no cloud assembly in %s", outDir)
	}
	return outDir, nil
}

// cdkJSONContext returns the "context" object of <root>/cdk.json (empty if absent),
// which the cdk CLI would pass to the app.
func cdkJSONContext(root string) (map[string]any, error) {
	b, err := os.ReadFile(filepath.Join(root, "cdk.json"))
	if os.IsNotExist(err) {
		return map[string]any{}, nil
	} else if err != nil {
		return nil, err
	}
	var f struct {
		Context map[string]any `json:"context"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("cdk.json: %w", err)
	}
	if f.Context == nil {
		f.Context = map[string]any{}
	}
	return f.Context, nil
}

// BuildOptions configures BuildFunctions.
type BuildOptions struct {
	OutDir string // default <repo>/build/lambda
}

// LambdaBuildFlags are the go build flags of every function bootstrap, the
// same as the Makefile's LAMBDA_BUILD_FLAGS: the lambda.norpc tag drops the
// legacy RPC mode, -trimpath keeps build paths out of the binary, and -s -w
// drop the symbol table and DWARF (a third of the size; stack traces keep
// function names and lines from pclntab).
var LambdaBuildFlags = []string{"-tags", "lambda.norpc", "-trimpath", "-ldflags", "-s -w"}

// BuildFunctions compiles functions/<name> to <OutDir>/<name>/bootstrap for
// linux (CGO off, -tags lambda.norpc), like the Makefile, for the host's
// GOARCH: the emulator runs bootstrap as a host process, whatever
// architecture the stack declares. It returns OutDir.
func BuildFunctions(ctx context.Context, opts BuildOptions) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	opts.OutDir = cmp.Or(opts.OutDir, filepath.Join(root, "build", "lambda"))
	for _, name := range FunctionNames {
		out := filepath.Join(opts.OutDir, name, "bootstrap")
		args := append(append([]string{"build"}, LambdaBuildFlags...), "-o", out, "./functions/"+name)
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+runtime.GOARCH, "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("build functions/%s: %w\n%s", name, err, strings.TrimSpace(string(b)))
		}
	}
	return opts.OutDir, nil
}
