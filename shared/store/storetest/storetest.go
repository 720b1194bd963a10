// Package storetest is the jobs table's contract: what the stages, sweeper and
// webhook rely on (create with its gates, claim, renew, complete, retry,
// dead-letter with and without owner, replay, due, and the outbox's
// begin/mark/release/reset/reconcile), written once as scenarios every
// implementation passes — over dynamotest (plain go test) and on the emulator
// (integration tag), one suite, two drivers, as riverqueue/river's driver tests
// run. Scenarios assert what the exported API shows, never a request's text, so
// a condition that changes what the table admits fails at unit speed.
package storetest

import (
	"context"
	"errors"
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

// scenario is what the jobs' and the rows' fixtures share: the test, its
// context, and the checks of a write's answer.
type scenario struct {
	t   *testing.T
	ctx context.Context
}

// ok fails the scenario on err; must does for a write that also returns a value.
func (s scenario) ok(err error) {
	s.t.Helper()
	if err != nil {
		s.t.Fatal(err)
	}
}

func (s scenario) must(_ any, err error) {
	s.t.Helper()
	s.ok(err)
}

// is fails the scenario unless the write named what answered target (nil:
// success); answers does for a write that also returns a value.
func (s scenario) is(what string, target, err error) {
	s.t.Helper()
	if !errors.Is(err, target) {
		s.t.Fatalf("%s: %v, want %v", what, err, target)
	}
}

func (s scenario) answers(what string, target error) func(any, error) {
	return func(_ any, err error) {
		s.t.Helper()
		s.is(what, target, err)
	}
}
