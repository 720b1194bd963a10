// Command infra is the Criticizer CDK app. `cdk synth|deploy -c env=<local|dev|staging|prod>`
// runs it through cdk.json; internal/devstack runs it directly with CDK_OUTDIR and
// CDK_CONTEXT_JSON to deploy the same template to the emulator.
//
// Where things are: stack.go builds the stack (table, buckets, queues and
// DLQs, the API); alarms.go every alarm, one row each, and the dashboard;
// functions.go the functions, their least-privilege grants and the
// sweeper's schedules; config.go reads
// cdk.json into EnvConfig; validate.go runs synth's checks (declared.go:
// each value against shared/settings, placeholders.go: checked-in
// placeholders refused outside local); network.go and encryption.go the VPC
// placement and the KMS key; the other files one feature each, named for it.
package main

import (
	"fmt"
	"maps"
	"os"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
)

// featureFlags are CDK feature flags this app is written against. They are
// the lowest-priority context, so cdk.json / -c / CDK_CONTEXT_JSON can still
// override them.
var featureFlags = map[string]any{
	// S3 server access logs delivered via a bucket policy, not ACLs (our buckets enforce bucket-owner).
	"@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy": true,
	// Merge IAM statements produced by the grants into few, minimal statements.
	"@aws-cdk/aws-iam:minimizePolicies": true,
	// No account-wide API Gateway CloudWatch role (RestApi sets cloudWatchRole=false explicitly too).
	"@aws-cdk/aws-apigateway:disableCloudWatchRole": true,
	"@aws-cdk/core:target-partitions":               []any{"aws", "aws-cn"},
}

// newApp builds the app and the environment's stack. extraContext is laid over
// the feature flags (tests use it; the CLI path uses CDK_CONTEXT_JSON). An
// empty outdir is the CLI's (CDK_OUTDIR); tests give their own, else every app
// leaves an empty cdk.out* directory in the temp dir.
func newApp(outdir string, extraContext map[string]any) (awscdk.App, awscdk.Stack, error) {
	ctx := maps.Clone(featureFlags)
	maps.Copy(ctx, extraContext)
	props := &awscdk.AppProps{Context: &ctx}
	if outdir != "" {
		props.Outdir = jsii.String(outdir)
	}
	app := awscdk.NewApp(props)
	envName, cfg, err := LoadConfig(app.Node())
	if err != nil {
		return nil, nil, err
	}
	assetRoot := defaultAssetRoot
	if v, ok := app.Node().TryGetContext(jsii.String(ctxAssetRoot)).(string); ok && v != "" {
		assetRoot = v
	}
	fns := []string{"webhook", "fetch", "llm", "notify", "sweeper", "doctor"}
	if cfg.EmailProvider == "ses" {
		fns = append(fns, "sesevents")
	}
	if cfg.JobPage {
		fns = append(fns, "jobpage")
	}
	if cfg.WeeklyDigest {
		fns = append(fns, "digest")
	}
	for _, fn := range fns {
		if _, err := os.Stat(assetRoot + "/" + fn + "/bootstrap"); err != nil {
			return nil, nil, fmt.Errorf("function asset missing (run `make build` first, or set context %s): %w", ctxAssetRoot, err)
		}
	}
	// metricMathAlarms=false only from the emulator harness (MiniStack rejects them).
	mathAlarms := true
	if v, ok := app.Node().TryGetContext(jsii.String(ctxMetricMathAlarms)).(bool); ok {
		mathAlarms = v
	}
	stack := NewCriticizerStack(app, &StackProps{EnvName: envName, Config: cfg, AssetRoot: assetRoot, MetricMathAlarms: mathAlarms})
	if err := checkFunctionSettings(stack); err != nil {
		return nil, nil, err
	}
	return app, stack, nil
}

func main() {
	defer jsii.Close()
	app, _, err := newApp("", nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "infra:", err)
		os.Exit(1)
	}
	app.Synth(nil)
}
