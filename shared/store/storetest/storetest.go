// Package storetest is the contract of the jobs table: the operations the
// stages, the sweeper and the webhook rely on (create with its key and
// version gates, claim, renew, complete, retry, dead-letter with and without
// an owner, replay, sweep due, and the outbox's begin/mark/release/reset/
// reconcile) written once as scenarios that every implementation must pass.
// It runs against memstore and against shared/store over an in-process
// DynamoDB that evaluates the real condition expressions (plain go test), and
// against shared/store on the emulator (integration build tag) — one suite,
// many drivers, the way riverqueue/river's driver tests run. Scenarios assert
// outcomes seen through the exported API (the job or row after each
// operation, the error's meaning), never a request's text, so a change of a
// condition that changes what the table admits fails here at unit speed.
package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/store"
)

// Jobs is the jobs table as the pipeline uses it: the methods memstore.Jobs
// and *store.Store share.
type Jobs interface {
	job.Getter
	Create(ctx context.Context, j *job.Job, idem *store.Idempotency) error
	Claim(ctx context.Context, id string, stage domain.Stage, l job.Lease, maxAttempts int) (*job.Job, error)
	Renew(ctx context.Context, id string, stage domain.Stage, l job.Lease) error
	Complete(ctx context.Context, id string, stage domain.Stage, l job.Lease, r job.Result, sweepAfter time.Duration) (*job.Job, error)
	Retry(ctx context.Context, id string, stage domain.Stage, l job.Lease, f job.FailureInfo, delay time.Duration) (*job.Job, error)
	DeadLetter(ctx context.Context, id string, stage domain.Stage, l job.Lease, f job.FailureInfo, dlID, body string) (*job.Job, error)
	MarkDeadLetterSent(ctx context.Context, id string, stage domain.Stage, dlID string, now time.Time) error
	Replay(ctx context.Context, id string, stage domain.Stage, dlID string, dlClass failure.Class, now time.Time, sweepAfter time.Duration) (*job.Job, error)
	Restart(ctx context.Context, id, actor, requestID string, now time.Time, sweepAfter time.Duration) (*job.Job, error)
	Due(ctx context.Context, now time.Time, limit int32) ([]*job.Job, error)
	Reschedule(ctx context.Context, j *job.Job, now, next time.Time, note string) error
}

// Driver gives the suite a table to run against.
type Driver struct {
	// Jobs returns the jobs table. Rows other scenarios (or other tests)
	// left in it are ignored: every scenario names its own ids, keys and
	// changelists.
	Jobs func(t *testing.T) Jobs
	// Outbox returns the delivery rows over the same table; nil skips the
	// outbox scenarios (memstore has no outbox).
	Outbox func(t *testing.T) *outbox.Outbox
}

// Run runs every scenario against d.
func Run(t *testing.T, d Driver) {
	t.Helper()
	runJobs(t, d)
	if d.Outbox != nil {
		runOutbox(t, d)
	}
}

// start is a scenario's clock (its t0): fifty years ahead of the host's, so
// the deployed sweeper and reconciler (which read the real clock) never find
// a scenario's job due or row stuck, and no expires_at lies in the past.
func start() time.Time {
	return time.Now().UTC().Truncate(time.Second).AddDate(50, 0, 0)
}

// names makes the unique ids of one scenario.
type names struct{ prefix string }

func newNames() names { return names{prefix: fmt.Sprintf("contract-%x", rand.Uint64())} }

func (n names) id(s string) string { return n.prefix + "-" + s }

// changelist is a changelist number no other scenario or test uses.
func changelist() int64 { return 1_000_000_000 + rand.Int64N(1_000_000_000) }

const (
	ttl  = time.Minute
	skew = 2 * time.Second
)

func lease(owner string, now time.Time) job.Lease {
	return job.Lease{Owner: owner, Now: now, TTL: ttl, Skew: skew}
}
