package devstack

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// FunctionNames are the Lambda functions of the stack (functions/<name>,
// built to <assetRoot>/<name>/bootstrap).
var FunctionNames = []string{"webhook", "fetch", "llm", "notify", "sweeper", "sesevents", "jobpage", "digest", "doctor"}

// SynthOptions configures Synth.
type SynthOptions struct {
	RepoRoot string // default: found from the working directory
	// Env is the environment to synthesize (context "env"). Default "local".
	Env string
	// Overrides are laid over the environment's settings (context "overrides"),
	// e.g. {"llmEndpoint": "http://127.0.0.1:5001", "smtpPort": 2526}.
	Overrides map[string]any
	// AssetRoot holds <function>/bootstrap (context "assetRoot"). Default <repo>/build/lambda.
	AssetRoot string
	// Context holds any further context keys; it wins over cdk.json's context.
	Context map[string]any
	// OutDir receives the cloud assembly. Default: a new temporary directory.
	OutDir string
	// Output receives the app's stdout/stderr. Default: os.Stderr.
	Output io.Writer
}

// Synth builds ./infra and runs it the way the cdk CLI does: context from
// cdk.json plus the options, passed in CDK_CONTEXT_JSON, with CDK_OUTDIR set.
// It returns the cloud assembly directory.
func Synth(ctx context.Context, opts SynthOptions) (string, error) {
	root, err := repoRoot(opts.RepoRoot)
	if err != nil {
		return "", err
	}
	if opts.Env == "" {
		opts.Env = "local"
	}
	if opts.AssetRoot == "" {
		opts.AssetRoot = filepath.Join(root, "build", "lambda")
	}
	if opts.AssetRoot, err = filepath.Abs(opts.AssetRoot); err != nil {
		return "", err
	}
	if opts.Output == nil {
		opts.Output = os.Stderr
	}
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
	for k, v := range opts.Context {
		cdkCtx[k] = v
	}
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
	RepoRoot string   // default: found from the working directory
	OutDir   string   // default <repo>/build/lambda
	Names    []string // default FunctionNames
	// GOARCH of the binaries. Default runtime.GOARCH: the emulator runs
	// bootstrap as a host process, whatever architecture the stack declares.
	GOARCH string
}

// LambdaBuildFlags are the go build flags of every function bootstrap, the
// same as the Makefile's LAMBDA_BUILD_FLAGS: the lambda.norpc tag drops the
// legacy RPC mode, -trimpath keeps build paths out of the binary, and -s -w
// drop the symbol table and DWARF (a third of the size; stack traces keep
// function names and lines from pclntab).
var LambdaBuildFlags = []string{"-tags", "lambda.norpc", "-trimpath", "-ldflags", "-s -w"}

// BuildFunctions compiles functions/<name> to <OutDir>/<name>/bootstrap for
// linux (CGO off, -tags lambda.norpc), like the Makefile. It returns OutDir.
func BuildFunctions(ctx context.Context, opts BuildOptions) (string, error) {
	root, err := repoRoot(opts.RepoRoot)
	if err != nil {
		return "", err
	}
	if opts.OutDir == "" {
		opts.OutDir = filepath.Join(root, "build", "lambda")
	}
	if opts.Names == nil {
		opts.Names = FunctionNames
	}
	if opts.GOARCH == "" {
		opts.GOARCH = runtime.GOARCH
	}
	for _, name := range opts.Names {
		out := filepath.Join(opts.OutDir, name, "bootstrap")
		args := append(append([]string{"build"}, LambdaBuildFlags...), "-o", out, "./functions/"+name)
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+opts.GOARCH, "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("build functions/%s: %w\n%s", name, err, strings.TrimSpace(string(b)))
		}
	}
	return opts.OutDir, nil
}
