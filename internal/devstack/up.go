package devstack

import (
	"context"
	"errors"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// StackName is the CloudFormation stack name of an environment (as in infra).
func StackName(env string) string { return "Criticizer-" + env }

// UpOptions configures Up.
type UpOptions struct {
	Emulator EmulatorOptions
	Synth    SynthOptions // Synth.Env defaults to "local"
	// KeepAssembly keeps the synthesized cloud assembly (when Synth.OutDir is
	// empty it is a temporary directory, removed by default).
	KeepAssembly bool
}

// Deployment is a running emulator with the stack deployed on it.
type Deployment struct {
	Emulator    *Emulator
	AWS         aws.Config // EmulatorConfig(Emulator.Endpoint)
	StackName   string
	Outputs     Outputs
	APIURL      string // Outputs.LocalAPIURL(Emulator.Endpoint)
	AssemblyDir string // empty unless kept
}

// Up starts an emulator, synthesizes the CDK app and deploys it: what an
// integration test's TestMain needs. The caller must Close the Deployment.
func Up(ctx context.Context, opts UpOptions) (*Deployment, error) {
	if opts.Synth.Env == "" {
		opts.Synth.Env = "local"
	}
	// Synthesize first: it is the slow, failure-prone step and needs no emulator.
	dir, err := Synth(ctx, opts.Synth)
	if err != nil {
		return nil, err
	}
	cleanup := func() {
		if !opts.KeepAssembly && opts.Synth.OutDir == "" {
			_ = os.RemoveAll(dir)
		}
	}
	em, err := StartEmulator(ctx, opts.Emulator)
	if err != nil {
		cleanup()
		return nil, err
	}
	cfg := EmulatorConfig(em.Endpoint)
	name := StackName(opts.Synth.Env)
	out, err := Deploy(ctx, cfg, dir, name, opts.Synth.Output)
	cleanup()
	if err != nil {
		return nil, errors.Join(err, em.Stop())
	}
	d := &Deployment{Emulator: em, AWS: cfg, StackName: name, Outputs: out, APIURL: out.LocalAPIURL(em.Endpoint)}
	if opts.KeepAssembly || opts.Synth.OutDir != "" {
		d.AssemblyDir = dir
	}
	return d, nil
}

// Close stops the emulator (all state is in memory and goes with it).
func (d *Deployment) Close() error {
	if d == nil {
		return nil
	}
	return d.Emulator.Stop()
}
