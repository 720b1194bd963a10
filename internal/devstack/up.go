package devstack

import (
	"cmp"
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
	Synth    SynthOptions // Synth.Env defaults to "local"; without Synth.OutDir the assembly is removed once deployed
}

// Deployment is a running emulator with the stack deployed on it.
type Deployment struct {
	Emulator  *Emulator
	AWS       aws.Config // EmulatorConfig(Emulator.Endpoint)
	StackName string
	Outputs   Outputs
	APIURL    string // Outputs.LocalAPIURL(Emulator.Endpoint)
}

// Up starts an emulator, synthesizes the CDK app and deploys it: what an
// integration test's TestMain needs. The caller must Close the Deployment.
func Up(ctx context.Context, opts UpOptions) (*Deployment, error) {
	// Synthesize first: it is the slow, failure-prone step and needs no emulator.
	dir, err := Synth(ctx, opts.Synth)
	if err != nil {
		return nil, err
	}
	cleanup := func() {
		if opts.Synth.OutDir == "" {
			_ = os.RemoveAll(dir)
		}
	}
	em, err := StartEmulator(ctx, opts.Emulator)
	if err != nil {
		cleanup()
		return nil, err
	}
	cfg := EmulatorConfig(em.Endpoint)
	name := StackName(cmp.Or(opts.Synth.Env, DefaultEnv))
	out, err := Deploy(ctx, cfg, dir, name, opts.Synth.Output)
	cleanup()
	if err != nil {
		return nil, errors.Join(err, em.Stop())
	}
	return &Deployment{Emulator: em, AWS: cfg, StackName: name, Outputs: out, APIURL: out.LocalAPIURL(em.Endpoint)}, nil
}

// Close stops the emulator (all state is in memory and goes with it).
func (d *Deployment) Close() error {
	if d == nil {
		return nil
	}
	return d.Emulator.Stop()
}
