//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/lambda"

	llmstandin "github.com/criticizer/criticizer/internal/standin/llm"
	"github.com/criticizer/criticizer/shared/dlq"
	"github.com/criticizer/criticizer/shared/domain"
)

// criticizer runs the operator CLI binary against the emulator, as an
// operator would from a shell, and fails the test if it fails.
func criticizer(t *testing.T, args ...string) string {
	t.Helper()
	stdout, stderr, err := runCriticizer(t, args...)
	if err != nil {
		t.Fatalf("criticizer %v: %v\n%s", args, err, stderr)
	}
	return stdout
}

// runCriticizer builds the operator CLI and runs it against the emulator's
// stack; a command that refuses is an answer here, not a failure.
func runCriticizer(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "criticizer")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/criticizer").CombinedOutput(); err != nil {
		t.Fatalf("build the CLI: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, append([]string{"--stack", env.local.StackName}, args...)...)
	cmd.Env = append(os.Environ(), "AWS_ENDPOINT_URL="+env.local.Emulator.Endpoint, "AWS_ACCESS_KEY_ID=test",
		"AWS_SECRET_ACCESS_KEY=test", "AWS_REGION=us-east-1", "CRITICIZER_ACTOR=integration-operator")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// The operator's loop: list the DLQ, show the item, replay it by job, check the job.
func TestOperatorCLI(t *testing.T) {
	fault(t, llmstandin.Fault{Status: 403, Count: 1, Body: json.RawMessage(`{"error":{"code":"permission_denied","message":"no"}}`)})
	_, id := submit(t, 12345)
	waitJob(t, id, untilSettled(), "failed", failed)
	waitDeadLetter(t, domain.StageLLM, id) // the DLQ send follows the job write

	var items []struct {
		MessageID string `json:"message_id"`
		Stage     string `json:"stage"`
		Envelope  struct {
			JobID      string `json:"job_id"`
			DeadLetter struct {
				ErrorClass string `json:"error_class"`
			} `json:"dead_letter"`
		} `json:"envelope"`
	}
	// --max beyond the suite's dead letters: the job's item is among the newest.
	out := criticizer(t, "--json", "dlq", "list", "--stage", "llm", "--max", strconv.Itoa(dlq.Searched))
	if err := json.Unmarshal([]byte(out), &items); err != nil {
		t.Fatalf("dlq list --json: %v\n%s", err, out)
	}
	var msg string
	for _, it := range items {
		if it.Envelope.JobID == id {
			msg = it.MessageID
			if it.Envelope.DeadLetter.ErrorClass != "AUTH_DENIED" {
				t.Fatalf("listed error class %q", it.Envelope.DeadLetter.ErrorClass)
			}
		}
	}
	if msg == "" {
		t.Fatalf("job %s not in `dlq list` output: %s", id, out)
	}
	table := criticizer(t, "dlq", "list", "--stage", "llm", "--max", strconv.Itoa(dlq.Searched))
	if !strings.Contains(table, "ERROR_CLASS") || !strings.Contains(table, id) {
		t.Fatalf("table output lacks the item:\n%s", table)
	}
	if show := criticizer(t, "dlq", "show", msg, "--stage", "llm"); !strings.Contains(show, `"first_failure_at"`) || !strings.Contains(show, "AUTH_DENIED") {
		t.Fatalf("dlq show:\n%s", show)
	}

	env.llm.Reset() // the credential is fixed
	if out := criticizer(t, "dlq", "replay", "--stage", "llm", "--job", id, "--note", "OPS-42 key rotated"); !strings.Contains(out, "1 item(s) replayed") {
		t.Fatalf("dlq replay: %s", out)
	}
	waitJob(t, id, untilSettled(), "succeeded after replay", succeeded)
	if out := criticizer(t, "job", id); !strings.Contains(out, "succeeded") || !strings.Contains(out, "replayed") ||
		!strings.Contains(out, "integration-operator") || !strings.Contains(out, "OPS-42 key rotated") {
		t.Fatalf("job output:\n%s", out)
	}
}

// The concurrency bound W is configuration applied to the event source mappings.
func TestStageConcurrencyIsBounded(t *testing.T) {
	out, err := env.lambda.ListEventSourceMappings(context.Background(), &lambda.ListEventSourceMappingsInput{})
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, m := range out.EventSourceMappings {
		if !strings.Contains(*m.FunctionArn, env.local.StackName) {
			continue
		}
		seen++
		if m.ScalingConfig == nil || m.ScalingConfig.MaximumConcurrency == nil || *m.ScalingConfig.MaximumConcurrency != 2 {
			t.Errorf("%s: scaling config %+v, want MaximumConcurrency 2", *m.FunctionArn, m.ScalingConfig)
		}
		if len(m.FunctionResponseTypes) != 1 || m.FunctionResponseTypes[0] != "ReportBatchItemFailures" {
			t.Errorf("%s: response types %v", *m.FunctionArn, m.FunctionResponseTypes)
		}
	}
	if seen != 3 {
		t.Fatalf("%d event source mappings for the stack, want 3", seen)
	}
}
