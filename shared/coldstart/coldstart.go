// Package coldstart owns what every function does once per execution
// environment: the common configuration, the logger and metrics, the AWS
// SDK configuration. It builds no clients, so a binary links only what it calls.
package coldstart

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/criticizer/criticizer/shared/backoff"
	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/obs"
	"github.com/criticizer/criticizer/shared/stage"
)

// Env is a function's initialised dependencies.
type Env struct {
	Config  config.Common
	Vars    *config.Reader // for function-specific settings; check Vars.Err() after reading them
	Log     *slog.Logger
	Metrics *obs.Metrics
	AWS     aws.Config
}

// Load builds the named function's Env. Its logger passes every attribute
// through logs (sanitize.Logs); without one Load fails.
func Load(ctx context.Context, function string, logs obs.Sanitizer) (*Env, error) {
	if logs == nil {
		return nil, errors.New("no log sanitizer: wire sanitize.Logs")
	}
	vars := config.NewReader()
	common := config.LoadCommon(vars)
	log := obs.NewLogger(os.Stdout, common.LogLevel, function, logs)
	if err := vars.Err(); err != nil {
		return &Env{Log: log}, err
	}
	cfg, err := config.AWS(ctx)
	if err != nil {
		return &Env{Log: log}, err
	}
	// "app/<function>" in the User-Agent tells CloudTrail (and make bench) who asked.
	cfg.AppID = function
	return &Env{Config: common, Vars: vars, Log: log, Metrics: obs.NewMetrics(os.Stdout, common.Env), AWS: cfg}, nil
}

// Must returns env or, on a start-up error, logs it and exits: a function
// that cannot be configured must fail its init, loudly, not run half-wired.
func Must(env *Env, err error) *Env {
	if err != nil {
		if env != nil && env.Log != nil {
			env.Log.Error("cold start failed", "err", err)
		} else {
			fmt.Fprintln(os.Stderr, "cold start failed:", err)
		}
		os.Exit(1)
	}
	return env
}

// Runtime returns the stage runtime for s around proc, with the common
// lease, attempt budget and backoff.
func (e *Env) Runtime(s domain.Stage, jobs stage.Jobs, queues stage.Queues, proc stage.Processor, sanitize func(string) string) *stage.Runtime {
	return &stage.Runtime{
		Stage: s, Jobs: jobs, Queues: queues, Processor: proc, Lease: e.Config.Lease, Skew: e.Config.ClockSkew,
		MaxAttempts: e.Config.MaxAttempts, Backoff: backoff.Default, Log: e.Log, Metrics: e.Metrics, Sanitize: sanitize,
	}
}
