// Package coldstart owns what every function does once per execution
// environment: read and validate the common configuration, build the JSON
// logger and metrics, and load the AWS SDK configuration. It builds no
// clients: each function's main package builds the stores it uses, so a
// binary links only what it calls and starts no faster than it must.
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

// Load builds the Env for the named function from its environment. Its
// logger passes every attribute through logs (sanitize.Logs in every
// function); without one Load fails, so no function logs unvetted text.
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
	// "app/<function>" in every AWS request's User-Agent: CloudTrail, and
	// make bench's request count, tell which function made a request.
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
