// Command cfncheck runs the real template validators, cfn-lint and checkov
// (pinned in versions.env, installed into .venv/validators by
// `localstack/start.sh --install-validators`), on the synthesized dev,
// staging and prod templates, and fails on any finding that the checked-in
// baseline (infra/cfncheck/baseline.json) does not accept with a reason.
// cfn-lint errors cannot be accepted; a baseline entry that no longer
// matches anything fails too, so the baseline only shrinks. `make validate`
// runs it; `make test` runs `make validate`.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/criticizer/criticizer/internal/devstack"
	"github.com/criticizer/criticizer/internal/p4layer"
	"github.com/criticizer/criticizer/shared/settings"
)

// environments are the checked-in environments a studio deploys.
var environments = []string{"dev", "staging", "prod"}

func main() {
	venv := flag.String("venv", ".venv/validators", "virtualenv holding cfn-lint and checkov")
	baselinePath := flag.String("baseline", "infra/cfncheck/baseline.json", "accepted findings, each with its reason")
	keep := flag.String("out", "", "keep the synthesized templates in this directory")
	flag.Parse()
	if err := run(*venv, *baselinePath, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "cfncheck:", err)
		os.Exit(1)
	}
}

func run(venv, baselinePath, keep string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	base, err := loadBaseline(baselinePath)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "cfncheck-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if keep == "" {
		keep = filepath.Join(work, "out")
	}
	assets, layer, layerSHA256, err := placeholders(work)
	if err != nil {
		return err
	}
	var findings []Finding
	for _, env := range environments {
		tmpl, err := synthesize(ctx, env, assets, layer, layerSHA256, filepath.Join(keep, env))
		if err != nil {
			return err
		}
		lint, err := runCfnLint(ctx, venv, env, tmpl)
		if err != nil {
			return err
		}
		ck, err := runCheckov(ctx, venv, env, tmpl)
		if err != nil {
			return err
		}
		fmt.Printf("cfncheck: %s: cfn-lint %d finding(s), checkov %d failed check(s)\n", env, len(lint), len(ck))
		findings = append(findings, lint...)
		findings = append(findings, ck...)
	}
	rep := base.Judge(findings)
	fmt.Print(rep.String())
	if !rep.OK() {
		return fmt.Errorf("findings outside the baseline (fix them, or accept each in %s with its reason)", baselinePath)
	}
	return nil
}

// placeholders are what synth needs but the validators never read: a
// bootstrap per function and a staged p4 layer (bin/p4 and its record, with
// the checksum synth checks it by).
func placeholders(dir string) (assets, layer, layerSHA256 string, err error) {
	write := func(path string, b []byte) {
		if err == nil {
			err = os.MkdirAll(filepath.Dir(path), 0o755)
		}
		if err == nil {
			err = os.WriteFile(path, b, 0o755)
		}
	}
	assets, layer = filepath.Join(dir, "assets"), filepath.Join(dir, "p4-layer")
	for _, fn := range devstack.FunctionNames {
		write(filepath.Join(assets, fn, "bootstrap"), []byte("#!/bin/sh\n"))
	}
	p4 := filepath.Join(layer, "bin", "p4")
	write(p4, []byte("#!/bin/sh\n"))
	if err != nil {
		return "", "", "", err
	}
	if layerSHA256, err = p4layer.FileSHA256(p4); err != nil {
		return "", "", "", err
	}
	rec, _ := json.Marshal(p4layer.Record{SHA256: layerSHA256, Version: "placeholder", Arch: "arm64"})
	write(filepath.Join(layer, p4layer.RecordName), rec)
	return assets, layer, layerSHA256, err
}

// overrides replace what the checked-in environments only hold a place for
// (synth refuses it: shared/settings) with the declared samples, and point
// at the placeholder layer.
func overrides(layer, layerSHA256 string) map[string]any {
	return settings.SamplesUnder(map[string]any{"p4LayerPath": layer, "p4LayerSha256": layerSHA256})
}

// synthesize builds env's template the way `cdk synth` does (cdk.json's
// context, every alarm) and returns its path.
func synthesize(ctx context.Context, env, assets, layer, layerSHA256, out string) (string, error) {
	var log bytes.Buffer // jsii's banners; shown only when synth fails
	dir, err := devstack.Synth(ctx, devstack.SynthOptions{
		Env: env, AssetRoot: assets, OutDir: out,
		Overrides: overrides(layer, layerSHA256),
		// devstack leaves metric-math alarms out for the emulator; AWS gets them.
		Context: map[string]any{"metricMathAlarms": true},
		Output:  &log,
	})
	if err != nil {
		return "", fmt.Errorf("%w\n%s", err, log.String())
	}
	return filepath.Join(dir, "Criticizer-"+env+".template.json"), nil
}
