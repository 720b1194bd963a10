// Package coldstart owns what every function does once per execution
// environment: read and validate configuration, build the JSON logger and
// metrics, and create the AWS clients and the stores on top of them. The
// functions' main packages stay a few lines of wiring.
package coldstart

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/backoff"
	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/obs"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/queue"
	"github.com/criticizer/criticizer/shared/secrets"
	"github.com/criticizer/criticizer/shared/stage"
	"github.com/criticizer/criticizer/shared/store"
	"github.com/criticizer/criticizer/shared/swarm"
)

// Env is a function's initialised dependencies.
type Env struct {
	Config  config.Common
	Vars    *config.Reader // for function-specific settings; check Vars.Err() after reading them
	Log     *slog.Logger
	Metrics *obs.Metrics
	AWS     aws.Config
	S3      *s3.Client
	Secrets *secrets.Store
	Jobs    *store.Store
	Outbox  *outbox.Outbox
	Queues  *queue.Queues
}

// Load builds the Env for the named function from its environment.
func Load(ctx context.Context, function string) (*Env, error) {
	vars := config.NewReader()
	common := config.LoadCommon(vars)
	log := obs.NewLogger(os.Stdout, common.LogLevel, function)
	if err := vars.Err(); err != nil {
		return &Env{Log: log}, err
	}
	cfg, err := config.AWS(ctx)
	if err != nil {
		return &Env{Log: log}, err
	}
	ddb := dynamodb.NewFromConfig(cfg)
	return &Env{
		Config: common, Vars: vars, Log: log, Metrics: obs.NewMetrics(os.Stdout, common.Env), AWS: cfg,
		S3:      s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = config.UsePathStyleS3() }),
		Secrets: secrets.New(secretsmanager.NewFromConfig(cfg), 5*time.Minute),
		Jobs:    store.New(ddb, common.JobsTable),
		Outbox:  outbox.New(ddb, common.JobsTable),
		Queues:  queue.New(sqs.NewFromConfig(cfg), common.QueueURLs, common.DLQURLs),
	}, nil
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

// Raw and Redacted return the artifact stores of the two buckets.
func (e *Env) Raw() *artifacts.Store      { return artifacts.New(e.S3, e.Config.RawBucket) }
func (e *Env) Redacted() *artifacts.Store { return artifacts.New(e.S3, e.Config.RedactedBkt) }

// Runtime returns the stage runtime for s around proc. A job from a Helix
// Swarm test run that is dead-lettered reports {fail} to the run.
func (e *Env) Runtime(s domain.Stage, proc stage.Processor, sanitize func(string) string) *stage.Runtime {
	rep := e.SwarmReporter()
	return &stage.Runtime{
		Stage: s, Jobs: e.Jobs, Queues: e.Queues, Processor: proc, Lease: e.Config.Lease,
		MaxAttempts: e.Config.MaxAttempts, Backoff: backoff.Default, Log: e.Log, Metrics: e.Metrics, Sanitize: sanitize,
		AfterDeadLetter: func(ctx context.Context, job *store.Job, class failure.Class) {
			if err := rep.Fail(ctx, job, class); err != nil {
				e.Log.WarnContext(ctx, "swarm fail callback failed", "err", err, "error_class", failure.Classify(err))
			}
		},
	}
}

// SwarmReporter reports to Helix Swarm test runs through the callback URLs
// kept with each job (no Swarm login needed: the URLs carry Swarm's token).
func (e *Env) SwarmReporter() *swarm.Reporter {
	return &swarm.Reporter{Swarm: &swarm.Client{}, Jobs: e.Jobs, Log: e.Log}
}
