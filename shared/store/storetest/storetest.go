// Package storetest is the contract of the jobs table: the operations the
// stages, the sweeper and the webhook rely on (create with its key and
// version gates, claim, renew, complete, retry, dead-letter with and without
// an owner, replay, sweep due, and the outbox's begin/mark/release/reset/
// reconcile) written once as scenarios that every implementation must pass.
// It runs against shared/store over dynamotest, the in-process DynamoDB
// that evaluates the real condition expressions (plain go test), and on the
// emulator (integration build tag), which shows the two agree — one suite,
// two drivers, the way riverqueue/river's driver tests run. Scenarios assert
// outcomes seen through the exported API (the job or row after each
// operation, the error's meaning), never a request's text, so a change of a
// condition that changes what the table admits fails here at unit speed.
package storetest

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/store"
)

// Run runs every scenario against the jobs table and the delivery rows
// over it.
func Run(t *testing.T, jobs *store.Store, rows *outbox.Outbox) {
	t.Helper()
	runJobs(t, jobs)
	runOutbox(t, rows)
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
