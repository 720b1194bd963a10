package job

import (
	"errors"
	"time"

	"github.com/criticizer/criticizer/shared/domain"
)

// TimeFormat is how every persisted timestamp is written: RFC 3339 in UTC with
// fixed millisecond precision, so lexical order equals time order.
const TimeFormat = "2006-01-02T15:04:05.000Z"

// FormatTime renders t in TimeFormat.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

// ParseTime reads a timestamp written by FormatTime.
func ParseTime(v string) (time.Time, error) { return time.Parse(TimeFormat, v) }

// Clock is the single time source for persisted timestamps and lease
// decisions. The zero value reads the system clock; tests set a func.
type Clock func() time.Time

// Now returns the time in UTC, truncated to milliseconds so that values
// round-trip through FormatTime.
func (c Clock) Now() time.Time {
	t := time.Now()
	if c != nil {
		t = c()
	}
	return t.UTC().Truncate(time.Millisecond)
}

// Now reads the system clock the way every persisted timestamp is taken.
func Now() time.Time { return Clock(nil).Now() }

// DefaultClockSkew is the clock-skew budget between hosts (DynamoDB has no
// server clock): a lease counts as expired only once older than it, and a
// worker stops trusting its own that much early.
const DefaultClockSkew = 2 * time.Second

// Lease describes who claims a stage and until when.
type Lease struct {
	Owner string        // unique per delivery: SQS message id + receive count
	Now   time.Time     // one time source per write
	TTL   time.Duration // lease duration (the queue's visibility timeout)
	Skew  time.Duration // the clock-skew budget between hosts (CLOCK_SKEW_SECONDS)
}

// Expires is when the lease ends, as written.
func (l Lease) Expires() string { return FormatTime(l.Now.Add(l.TTL)) }

// ExpiredBefore is the cut-off for taking over another owner's lease (ended
// at least Skew ago here).
func (l Lease) ExpiredBefore() string { return FormatTime(l.Now.Add(-l.Skew)) }

// Live reports whether a stage's lease, as recorded, may still be held by its
// owner when seen from a host whose clock reads now.
func Live(rec *StageRecord, now time.Time, skew time.Duration) bool {
	return rec.Status == StageRunning && rec.LeaseExpiresAt > FormatTime(now.Add(-skew))
}

// Refusal says why a claim was refused.
type Refusal string

const (
	RefusedSucceeded    Refusal = "succeeded"        // the job is done
	RefusedStageDone    Refusal = "stage_done"       // this stage completed (its message returned)
	RefusedStaleStage   Refusal = "stale_stage"      // the job is at another stage
	RefusedDeadLettered Refusal = "dead_lettered"    // the stage was dead-lettered
	RefusedLeaseHeld    Refusal = "lease_held"       // another owner's lease is live
	RefusedBudget       Refusal = "budget_exhausted" // every attempt was used
	RefusedUnexpected   Refusal = "unexpected_state" // none of the above: a state the table does not expect
)

// ClaimRefused explains why a stage could not be claimed.
type ClaimRefused struct {
	Reason Refusal
	Job    *Job // the record as it was
}

func (e *ClaimRefused) Error() string { return "claim refused: " + string(e.Reason) }

// ErrClaimRefused matches every *ClaimRefused with errors.Is.
var ErrClaimRefused = errors.New("claim refused")

// Is makes errors.Is(err, ErrClaimRefused) hold.
func (e *ClaimRefused) Is(target error) bool { return target == ErrClaimRefused }

// Errors a job's writes answer with, beside ErrClaimRefused. The store wraps
// them with details; callers test with errors.Is and need not import the store.
var (
	ErrNotFound      = errors.New("not found")
	ErrLeaseLost     = errors.New("stage lease lost: another worker owns it or it expired")
	ErrNotReplayable = errors.New("job is not waiting for this replay")
	ErrConflict      = errors.New("conditional write refused")
)

// Refuse says why a claim of stage under l was refused, given the job as it
// was when the condition failed.
func Refuse(j *Job, stage domain.Stage, l Lease, maxAttempts int) Refusal {
	rec := j.StageRecord(stage)
	switch {
	case j.State == Succeeded:
		return RefusedSucceeded
	case rec.Status == StageDone:
		return RefusedStageDone
	case j.Stage != stage:
		return RefusedStaleStage
	case rec.Status == StageFailed || j.State == Failed:
		return RefusedDeadLettered
	case rec.Status == StageRunning && rec.LeaseExpiresAt > l.ExpiredBefore():
		return RefusedLeaseHeld
	case rec.Attempts >= maxAttempts:
		return RefusedBudget
	}
	return RefusedUnexpected
}
