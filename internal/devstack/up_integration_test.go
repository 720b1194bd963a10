//go:build integration

package devstack

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// TestUpDeploysAndRuns deploys the real stack (the CDK app in ../../infra) to a
// fresh emulator with probe bootstraps, then checks the API, an SQS trigger and
// a no-op redeploy.
func TestUpDeploysAndRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the emulator and synthesizes the CDK app")
	}
	for _, tool := range []string{"python3", "node", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	Logf = t.Logf
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	assets, probes, assembly := t.TempDir(), t.TempDir(), t.TempDir()
	for _, fn := range FunctionNames {
		if err := os.MkdirAll(filepath.Join(assets, fn), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(assets, fn, "bootstrap"), []byte(probeBootstrap), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	d, err := Up(ctx, UpOptions{
		Emulator: EmulatorOptions{Env: []string{"PROBE_DIR=" + probes}},
		Synth:    SynthOptions{AssetRoot: assets, OutDir: assembly, Overrides: map[string]any{"llmEndpoint": "http://127.0.0.1:1", "smtpPort": 2599}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	}()
	t.Logf("up in %s: %s", time.Since(start).Round(time.Millisecond), d.APIURL)

	for _, k := range []string{"ApiId", "ApiStage", "JobsTableName", "FetchQueueUrl", "LlmDlqUrl", "RawBucketName", "WebhookSecretArn", "SweeperFunctionName"} {
		if d.Outputs[k] == "" {
			t.Errorf("output %s missing", k)
		}
	}
	if !strings.HasPrefix(d.Outputs["WebhookSecretArn"], "arn:aws:secretsmanager:") {
		t.Errorf("WebhookSecretArn = %q", d.Outputs["WebhookSecretArn"])
	}

	resp, err := http.Post(d.APIURL+"/webhooks/changelist", "application/json", strings.NewReader(`{"changelist":1}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 202 || string(body) != "probe local" || resp.Header.Get("X-Probe") != "yes" {
		t.Errorf("POST webhook: %d %q %v", resp.StatusCode, body, resp.Header)
	}

	if _, err := sqs.NewFromConfig(d.AWS).SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl: aws.String(d.Outputs["FetchQueueUrl"]), MessageBody: aws.String(`{"probe":"fetch-1"}`),
	}); err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(probes, d.Outputs["FetchFunctionName"]+".log")
	for deadline := time.Now().Add(30 * time.Second); ; {
		if b, _ := os.ReadFile(logFile); bytes.Contains(b, []byte(`fetch-1`)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("FetchFunction did not receive the FetchQueue message (log %s)", d.Emulator.LogFile)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// Redeploying the same assembly with the stock CLI is a no-op update.
	if _, err := Deploy(ctx, d.AWS, assembly, d.StackName, nil); err != nil {
		t.Errorf("redeploy: %v", err)
	}
}

// probeBootstrap is a custom-runtime bootstrap in sh + curl: it logs every event
// to $PROBE_DIR/<function>.log and answers API Gateway proxy events with 202.
const probeBootstrap = `#!/bin/sh
API="http://$AWS_LAMBDA_RUNTIME_API/2018-06-01/runtime/invocation"
while true; do
  H="$(mktemp)"
  BODY="$(curl -sS -D "$H" "$API/next")" || exit 1
  ID="$(tr -d '\r' <"$H" | awk 'tolower($1)=="lambda-runtime-aws-request-id:" {print $2}')"
  rm -f "$H"
  printf '%s\n' "$BODY" >>"$PROBE_DIR/$AWS_LAMBDA_FUNCTION_NAME.log"
  case "$BODY" in
    *'"httpMethod"'*) OUT='{"statusCode":202,"headers":{"X-Probe":"yes"},"body":"probe '"$CRITICIZER_ENV"'"}' ;;
    *) OUT='{"batchItemFailures":[]}' ;;
  esac
  curl -sS -o /dev/null -X POST -d "$OUT" "$API/$ID/response"
done
`
