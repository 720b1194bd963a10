package devstack

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// Outputs are a stack's CloudFormation outputs by key.
type Outputs map[string]string

// LocalAPIURL is the emulator's URL of the stack's RestApi stage, e.g.
// http://127.0.0.1:4566/_aws/execute-api/<ApiId>/<ApiStage>. Append the path
// (/webhooks/changelist). On AWS use Outputs["ApiUrl"] instead.
func (o Outputs) LocalAPIURL(endpoint string) string {
	return strings.TrimRight(endpoint, "/") + "/_aws/execute-api/" + o["ApiId"] + "/" + o["ApiStage"]
}

// EmulatorConfig is an aws.Config for the emulator at endpoint: static
// credentials test/test, region us-east-1, BaseEndpoint = endpoint. Use
// artifacts.NewS3Client for S3 (path-style addressing).
func EmulatorConfig(endpoint string) aws.Config {
	return aws.Config{
		Region:           DefaultRegion,
		Credentials:      credentials.NewStaticCredentialsProvider("test", "test", ""),
		BaseEndpoint:     aws.String(endpoint),
		RetryMaxAttempts: 5,
	}
}

func pinnedVersion(root, key string) (string, error) {
	f, err := os.Open(filepath.Join(root, "versions.env"))
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "="); ok && k == key {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("versions.env: %s not set", key)
}

// Deploy deploys the stack stackName of the cloud assembly in assemblyDir to
// the emulator cfg points at, with the stock CLI: `cdk bootstrap` then
// `cdk deploy --outputs-file`, AWS_ENDPOINT_URL set to the emulator, CI=true
// and no stdin (never a prompt). Output of the CLI goes to out (nil: discarded,
// but the tail is part of a returned error).
func Deploy(ctx context.Context, cfg aws.Config, assemblyDir, stackName string, out io.Writer) (Outputs, error) {
	start := time.Now()
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	// The stock aws-cdk CLI at the version pinned in versions.env, run
	// through npx as the Makefile does (--yes: a clean clone installs it
	// without a prompt).
	cdkVersion, err := pinnedVersion(root, "AWS_CDK_CLI_VERSION")
	if err != nil {
		return nil, err
	}
	endpoint := aws.ToString(cfg.BaseEndpoint)
	outFile := filepath.Join(assemblyDir, "outputs.json")
	env := append(os.Environ(),
		"AWS_ENDPOINT_URL="+endpoint,
		"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_SESSION_TOKEN=",
		"AWS_REGION="+cfg.Region, "AWS_DEFAULT_REGION="+cfg.Region,
		"AWS_PROFILE=", "CI=true", "CDK_DISABLE_VERSION_CHECK=1",
		"JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION=1",
	)
	run := func(args ...string) error {
		var tail strings.Builder
		cmd := exec.CommandContext(ctx, "npx", slices.Concat([]string{"--yes", "aws-cdk@" + cdkVersion}, args)...)
		cmd.Dir, cmd.Env = root, env // no Stdin: /dev/null, the CLI never waits on a prompt
		w := io.Writer(&tail)
		if out != nil {
			w = io.MultiWriter(&tail, out)
		}
		cmd.Stdout, cmd.Stderr = w, w
		if err := cmd.Run(); err != nil {
			s := tail.String()
			return fmt.Errorf("cdk %s: %w\n%s", args[0], err, s[max(0, len(s)-4000):])
		}
		return nil
	}
	Logf("cdk bootstrap (emulator %s)", endpoint)
	if err := run("bootstrap", "--app", assemblyDir, "aws://"+emulatorAccount+"/"+cfg.Region); err != nil {
		return nil, err
	}
	Logf("cdk deploy %s", stackName)
	if err := run("deploy", "--app", assemblyDir, stackName, "--require-approval", "never",
		"--outputs-file", outFile, "--progress", "events"); err != nil {
		return nil, err
	}
	var all map[string]Outputs
	b, err := os.ReadFile(outFile)
	if err == nil {
		err = json.Unmarshal(b, &all)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", outFile, err)
	}
	o, ok := all[stackName]
	if !ok {
		return nil, fmt.Errorf("%s has no outputs for %s", outFile, stackName)
	}
	if err := fixGeneratedSecrets(ctx, cfg, assemblyDir, stackName); err != nil {
		return nil, err
	}
	Logf("stack %s deployed in %s", stackName, time.Since(start).Round(100*time.Millisecond))
	return fixSecretArns(ctx, cfg, o)
}

// emulatorAccount is the account MiniStack answers for the test credentials.
const emulatorAccount = "000000000000"

// fixSecretArns works around an emulator deviation: MiniStack (1.5.33) answers
// Ref of an AWS::SecretsManager::Secret with the secret's name, where
// CloudFormation answers its ARN. Outputs named *SecretArn that are not ARNs
// are resolved to the secret's real ARN. (Function environments still carry
// the name there; GetSecretValue accepts either.)
func fixSecretArns(ctx context.Context, cfg aws.Config, o Outputs) (Outputs, error) {
	sm := secretsmanager.NewFromConfig(cfg)
	for k, v := range o {
		if !strings.HasSuffix(k, "SecretArn") || v == "" || strings.HasPrefix(v, "arn:") {
			continue
		}
		d, err := sm.DescribeSecret(ctx, &secretsmanager.DescribeSecretInput{SecretId: aws.String(v)})
		if err != nil {
			return nil, fmt.Errorf("output %s: describe secret %s: %w", k, v, err)
		}
		o[k] = aws.ToString(d.ARN)
	}
	return o, nil
}
