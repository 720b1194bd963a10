// Package memstore is the in-memory jobs table for unit tests: the same
// operations as shared/store (claim, renew, complete, retry, dead-letter,
// replay, restart), each applied only when the job is in a state
// job.Transitions lists for the operation and, for stage work, when the lease
// owner matches — the rules the DynamoDB conditions of shared/store encode.
// A refused claim says why through job.Refuse, exactly as the store does.
// Faults (an error before the write, or a write applied whose answer is lost)
// are injected per operation, so the stage runtime's handling of both is
// tested without the emulator.
package memstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/store"
)

// Fault is what an injected fault does to one call of an operation: Err is
// returned; with Applied the write is applied first (its answer was lost).
type Fault struct {
	Err     error
	Applied bool
}

// Jobs is an in-memory jobs table. The zero value is not usable: call New.
type Jobs struct {
	mu     sync.Mutex
	jobs   map[string]*job.Job
	tokens map[string]map[string]bool // job id → write tokens applied
	calls  map[string]int
	faults map[string][]Fault
	last   map[string]string            // job id → token of the last write applied
	idem   map[string]store.Idempotency // idempotency key → record
	gates  map[int64]store.Changelist   // changelist → version gate
}

// New returns an empty table.
func New() *Jobs {
	return &Jobs{jobs: map[string]*job.Job{}, tokens: map[string]map[string]bool{}, calls: map[string]int{}, faults: map[string][]Fault{},
		last: map[string]string{}, idem: map[string]store.Idempotency{}, gates: map[int64]store.Changelist{}}
}

// Put stores a copy of j as it is (a test's starting point).
func (m *Jobs) Put(j *job.Job) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.jobs[j.ID] = clone(j)
}

// Get returns a copy of the job.
func (m *Jobs) Get(_ context.Context, id string) (*job.Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	j, ok := m.jobs[id]
	if !ok {
		return nil, fmt.Errorf("job %s: %w", id, job.ErrNotFound)
	}
	return clone(j), nil
}

// Inject queues faults for the next calls of op ("claim", "renew",
// "complete", "retry", "dead_letter", "mark_dead_letter_sent", "replay",
// "restart"), one per call; a zero Fault lets that call through.
func (m *Jobs) Inject(op string, faults ...Fault) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.faults[op] = append(m.faults[op], faults...)
}

// InjectFor queues faults for the next calls of op on job id only; they
// are taken before the faults Inject queued for every job.
func (m *Jobs) InjectFor(op, id string, faults ...Fault) {
	m.Inject(op+"/"+id, faults...)
}

// Calls reports how often op was called.
func (m *Jobs) Calls(op string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls[op]
}

// Writes reports how many writes were asked of the table (each is one
// DynamoDB request in the store).
func (m *Jobs) Writes() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, c := range m.calls {
		n += c
	}
	return n
}

// Create stores a new job with its idempotency record and the changelist's
// new latest version, all or nothing, as store.Create's transaction: a key
// already held by another job is *store.DuplicateKeyError, a review_version
// not higher than the changelist's latest is *store.StaleVersionError, and
// a retry of this very create (the key held by the same job) succeeds.
func (m *Jobs) Create(_ context.Context, j *job.Job, idem *store.Idempotency) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls["create"]++
	if cur, ok := m.idem[idem.Key]; ok {
		if cur.JobID == j.ID {
			return nil
		}
		return &store.DuplicateKeyError{Existing: &cur}
	}
	if gate, ok := m.gates[j.Changelist]; ok && gate.LatestVersion >= j.ReviewVersion {
		return &store.StaleVersionError{Current: &gate}
	}
	if _, ok := m.jobs[j.ID]; ok {
		return fmt.Errorf("create job %s: %w", j.ID, job.ErrConflict)
	}
	m.idem[idem.Key] = *idem
	m.gates[j.Changelist] = store.Changelist{Changelist: j.Changelist, LatestVersion: j.ReviewVersion, LatestJobID: j.ID, UpdatedAt: j.CreatedAt}
	m.jobs[j.ID] = clone(j)
	return nil
}

// Claim takes the stage's lease and counts the attempt (rule LS-1).
func (m *Jobs) Claim(_ context.Context, id string, stage domain.Stage, l job.Lease, maxAttempts int) (*job.Job, error) {
	return m.write("claim", id, ownerToken(l, job.OpClaim), func(j *job.Job) (bool, error) {
		r := stageRec(j, stage)
		if j.Stage == stage && j.State == job.Running && r.Status == job.StageRunning && r.Owner == l.Owner {
			return false, nil // this very claim, applied before
		}
		ok := j.Stage == stage && allows(job.OpClaim, j.State) && slices.Contains(job.Claimable, r.Status) &&
			r.Attempts < maxAttempts && (r.Status != job.StageRunning || r.LeaseExpiresAt <= l.ExpiredBefore())
		if !ok {
			return false, &job.ClaimRefused{Reason: job.Refuse(clone(j), stage, l, maxAttempts), Job: clone(j)}
		}
		at := job.FormatTime(l.Now)
		r.Status, r.Attempts, r.Owner, r.LeaseExpiresAt = job.StageRunning, r.Attempts+1, l.Owner, l.Expires()
		move(j, job.OpClaim, at, job.Event{At: at, Type: job.EventClaimed, Stage: string(stage), To: string(job.Running), Detail: "owner " + l.Owner})
		j.SweepAt = job.FormatTime(l.Now.Add(2 * l.TTL))
		return true, nil
	})
}

// ownerGuard is the condition of every owner's write: the job is at the
// stage, in a state op applies to, and the stage runs under l's owner.
func ownerGuard(j *job.Job, op job.Op, stage domain.Stage, l job.Lease) bool {
	r := stageRec(j, stage)
	return j.Stage == stage && allows(op, j.State) && r.Status == job.StageRunning && r.Owner == l.Owner
}

// Renew extends the owner's lease.
func (m *Jobs) Renew(_ context.Context, id string, stage domain.Stage, l job.Lease) error {
	_, err := m.write("renew", id, ownerToken(l, job.OpRenew), func(j *job.Job) (bool, error) {
		if !ownerGuard(j, job.OpRenew, stage, l) {
			return false, fmt.Errorf("renew: %w", job.ErrLeaseLost)
		}
		stageRec(j, stage).LeaseExpiresAt = l.Expires()
		j.UpdatedAt = job.FormatTime(l.Now)
		return true, nil
	})
	return err
}

// Complete marks the owner's stage done and queues the next stage, or
// finishes the job after the last one.
func (m *Jobs) Complete(_ context.Context, id string, stage domain.Stage, l job.Lease, res job.Result, sweepAfter time.Duration) (*job.Job, error) {
	return m.write("complete", id, ownerToken(l, completeOp(stage)), func(j *job.Job) (bool, error) {
		r := stageRec(j, stage)
		if r.Status == job.StageDone && r.CompletedBy == l.Owner {
			return false, nil
		}
		next, hasNext := stage.Next()
		op := job.OpComplete
		if !hasNext {
			op, next = job.OpFinish, stage
		}
		if !ownerGuard(j, op, stage, l) {
			return false, fmt.Errorf("complete: %w", job.ErrLeaseLost)
		}
		at := job.FormatTime(l.Now)
		from := j.State
		r.Status, r.CompletedAt, r.CompletedBy, r.Owner, r.LeaseExpiresAt = job.StageDone, at, l.Owner, "", ""
		move(j, op, at, job.Event{At: at, Type: job.EventCompleted, Stage: string(stage), From: string(from), To: string(job.Target(op)), Detail: res.Detail})
		j.Stage = next
		mergeResult(j, res)
		if hasNext {
			j.SweepAt = job.FormatTime(l.Now.Add(sweepAfter))
		} else {
			j.SweepAt, j.SweepShard = "", ""
		}
		return true, nil
	})
}

func mergeResult(j *job.Job, res job.Result) {
	a := res.Artifacts
	for dst, v := range map[*string]string{&j.Artifacts.Raw: a.Raw, &j.Artifacts.Redacted: a.Redacted, &j.Artifacts.RedactedProof: a.RedactedProof, &j.Artifacts.Result: a.Result} {
		if v != "" {
			*dst = v
		}
	}
	if res.Recipients != nil {
		j.Recipients = slices.Clone(res.Recipients)
	}
	if res.FindingCount != nil {
		j.FindingCount = *res.FindingCount
	}
	if res.Review != nil {
		rv := *res.Review
		j.Review = &rv
	}
}

// Retry records the owner's retryable failure and releases the lease.
func (m *Jobs) Retry(_ context.Context, id string, stage domain.Stage, l job.Lease, f job.FailureInfo, delay time.Duration) (*job.Job, error) {
	return m.write("retry", id, ownerToken(l, job.OpRetry), func(j *job.Job) (bool, error) {
		if !ownerGuard(j, job.OpRetry, stage, l) {
			return false, fmt.Errorf("retry: %w", job.ErrLeaseLost)
		}
		at := job.FormatTime(l.Now)
		r := stageRec(j, stage)
		failed(r, at, f)
		r.Status, r.Owner, r.LeaseExpiresAt = job.StageRetryWait, "", ""
		move(j, job.OpRetry, at, job.Event{At: at, Type: job.EventRetryScheduled, Stage: string(stage), From: string(job.Running), To: string(job.RetryWait),
			Detail: fmt.Sprintf("%s; retry in %s", f.Class, delay.Round(time.Millisecond))})
		j.SweepAt = job.FormatTime(l.Now.Add(delay + 2*l.TTL))
		return true, nil
	})
}

func failed(r *job.StageRecord, at string, f job.FailureInfo) {
	if r.FirstFailureAt == "" {
		r.FirstFailureAt = at
	}
	r.LastFailureAt, r.LastErrorClass, r.LastError = at, f.Class, f.Message
}

// DeadLetter records the stage as dead-lettered, keeping the DLQ body until
// MarkDeadLetterSent. With an owner the write is owner-guarded; without one
// it requires that no live lease exists.
func (m *Jobs) DeadLetter(_ context.Context, id string, stage domain.Stage, l job.Lease, f job.FailureInfo, dlID, body string) (*job.Job, error) {
	return m.write("dead_letter", id, "dead_letter/"+dlID, func(j *job.Job) (bool, error) {
		r := stageRec(j, stage)
		if r.DeadLetterID == dlID && j.State == job.Failed {
			return false, nil
		}
		ok := ownerGuard(j, job.OpDeadLetter, stage, l)
		if l.Owner == "" {
			ok = j.Stage == stage && allows(job.OpDeadLetter, j.State) && (r.Status != job.StageRunning || r.LeaseExpiresAt <= l.ExpiredBefore())
		}
		if !ok {
			return false, fmt.Errorf("dead-letter: %w", job.ErrLeaseLost)
		}
		at := job.FormatTime(l.Now)
		failed(r, at, f)
		r.Status, r.DeadLetterID, r.DeadLetter, r.DLQPending, r.Owner, r.LeaseExpiresAt = job.StageFailed, dlID, body, true, "", ""
		move(j, job.OpDeadLetter, at, job.Event{At: at, Type: job.EventDeadLettered, Stage: string(stage), To: string(job.Failed), Detail: fmt.Sprintf("%s (%s)", f.Class, dlID)})
		j.SweepAt, j.SweepShard = "", ""
		return true, nil
	})
}

// MarkDeadLetterSent clears the kept DLQ body once the DLQ has it.
func (m *Jobs) MarkDeadLetterSent(_ context.Context, id string, stage domain.Stage, dlID string, now time.Time) error {
	_, err := m.write("mark_dead_letter_sent", id, "dlq_sent/"+dlID, func(j *job.Job) (bool, error) {
		r := stageRec(j, stage)
		if r.DeadLetterID != dlID {
			return false, nil // superseded: nothing to clear
		}
		r.DLQPending, r.DeadLetter = false, ""
		j.UpdatedAt = job.FormatTime(now)
		return true, nil
	})
	return err
}

// Replay resumes a dead-lettered stage with a fresh budget, once per dead
// letter.
func (m *Jobs) Replay(_ context.Context, id string, stage domain.Stage, dlID string, dlClass failure.Class, now time.Time, sweepAfter time.Duration) (*job.Job, error) {
	return m.write("replay", id, "replay/"+dlID, func(j *job.Job) (bool, error) {
		r := stageRec(j, stage)
		if j.Stage == stage && j.State == job.Queued && r.Status == job.StagePending && r.ReplayedFrom == dlID {
			return false, nil // this very replay, applied and nothing written since (store: last_write)
		}
		if !(j.Stage == stage && allows(job.OpReplay, j.State) && r.Status == job.StageFailed && r.DeadLetterID == dlID) {
			return false, fmt.Errorf("replay: %w", job.ErrNotReplayable)
		}
		at := job.FormatTime(now)
		r.Status, r.Attempts, r.Replays, r.ReplayedFrom, r.ReplayedClass = job.StagePending, 0, r.Replays+1, dlID, dlClass
		r.FirstFailureAt, r.LastFailureAt = "", ""
		move(j, job.OpReplay, at, job.Event{At: at, Type: job.EventReplayed, Stage: string(stage), From: string(job.Failed), To: string(job.Queued), Detail: "from dead letter " + dlID})
		j.SweepShard, j.SweepAt = job.SweepShard, job.FormatTime(now.Add(sweepAfter))
		return true, nil
	})
}

// Restart sends a dead-lettered job back to fetch with every stage reset.
func (m *Jobs) Restart(_ context.Context, id, actor, requestID string, now time.Time, sweepAfter time.Duration) (*job.Job, error) {
	return m.write("restart", id, "restart/"+requestID, func(j *job.Job) (bool, error) {
		if m.tokens[id]["restart/"+requestID] {
			return false, nil
		}
		if !allows(job.OpRestart, j.State) {
			return false, fmt.Errorf("restart: job is %s, only failed jobs restart: %w", j.State, job.ErrNotReplayable)
		}
		at := job.FormatTime(now)
		m.tokens[id]["restart/"+requestID] = true
		move(j, job.OpRestart, at, job.Event{At: at, Type: job.EventRestarted, Stage: string(domain.StageFetch), From: string(job.Failed), To: string(job.Queued), Actor: actor, Detail: "by " + actor})
		j.Stage, j.Stages = domain.StageFetch, job.PendingStages()
		j.SweepShard, j.SweepAt = job.SweepShard, job.FormatTime(now.Add(sweepAfter))
		return true, nil
	})
}

// RecordOperator appends an operator action to the job's history; the
// job's state is not touched (store.RecordOperator).
func (m *Jobs) RecordOperator(_ context.Context, id, action, actor, note string, now time.Time) error {
	if strings.TrimSpace(actor) == "" || strings.TrimSpace(note) == "" {
		return failure.Errorf(failure.SchemaInvalid, "an operator action needs an actor and a note or ticket reference")
	}
	_, err := m.write("record_operator", id, "", func(j *job.Job) (bool, error) {
		at := job.FormatTime(now)
		j.History = append(j.History, job.Event{At: at, Type: job.EventType("operator_" + action), Actor: actor, Detail: note})
		j.UpdatedAt = at
		return true, nil
	})
	return err
}

// Due lists the jobs on the sweep index whose sweep deadline passed, oldest
// first (store.Due; the index is the jobs with a sweep shard).
func (m *Jobs) Due(_ context.Context, now time.Time, limit int32) ([]*job.Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls["due"]++
	cutoff := job.FormatTime(now)
	var out []*job.Job
	for _, j := range m.jobs {
		if j.SweepShard != "" && j.SweepAt != "" && j.SweepAt <= cutoff {
			out = append(out, clone(j))
		}
	}
	slices.SortFunc(out, func(a, b *job.Job) int { return strings.Compare(a.SweepAt+a.ID, b.SweepAt+b.ID) })
	if limit > 0 && len(out) > int(limit) {
		out = out[:limit]
	}
	return out, nil
}

// Reschedule moves a job's sweep deadline only if nobody changed the job
// since it was read (seq unchanged), as store.Reschedule.
func (m *Jobs) Reschedule(_ context.Context, j *job.Job, now, next time.Time, note string) error {
	_, err := m.write("reschedule", j.ID, fmt.Sprintf("sweep/%d/%s", j.Seq, job.FormatTime(now)), func(cur *job.Job) (bool, error) {
		if cur.Seq != j.Seq {
			return false, fmt.Errorf("reschedule: %w", job.ErrConflict)
		}
		at := job.FormatTime(now)
		cur.SweepAt, cur.UpdatedAt, cur.Seq = job.FormatTime(next), at, cur.Seq+1
		cur.History = append(cur.History, job.Event{At: at, Type: job.EventSwept, Stage: string(cur.Stage), From: string(cur.State), To: string(cur.State), Detail: note})
		return true, nil
	})
	return err
}

// ownerToken is the write token of an owner's write, as the store's: the
// owner is unique per delivery, so owner+op names one write across retries.
func ownerToken(l job.Lease, op job.Op) string { return l.Owner + "/" + string(op) }

// completeOp is the operation completing stage is: finish after the last.
func completeOp(stage domain.Stage) job.Op {
	if _, hasNext := stage.Next(); hasNext {
		return job.OpComplete
	}
	return job.OpFinish
}

// write applies change to job id under the table's lock, with the faults
// injected for op. change reports whether it changed the job; an error
// leaves the job untouched. tok names the write (the store's last_write):
// a write refused because its own earlier attempt was the last one applied
// (its answer lost) succeeds, as in the store (rule LS-6).
func (m *Jobs) write(op, id, tok string, change func(j *job.Job) (bool, error)) (*job.Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls[op]++
	var fault Fault
	if q := m.faults[op+"/"+id]; len(q) > 0 {
		fault, m.faults[op+"/"+id] = q[0], q[1:]
	} else if q := m.faults[op]; len(q) > 0 {
		fault, m.faults[op] = q[0], q[1:]
	}
	if fault.Err != nil && !fault.Applied {
		return nil, fault.Err
	}
	cur, ok := m.jobs[id]
	if !ok {
		return nil, fmt.Errorf("%s: job %s: %w", op, id, job.ErrNotFound)
	}
	if m.tokens[id] == nil {
		m.tokens[id] = map[string]bool{}
	}
	next := clone(cur)
	changed, err := change(next)
	if err != nil && (tok == "" || m.last[id] != tok) {
		return nil, err
	}
	if changed {
		m.jobs[id] = next
		m.last[id] = tok
	}
	if fault.Err != nil {
		return nil, fault.Err
	}
	return clone(m.jobs[id]), nil
}

// allows reports whether op applies to a job in state s (job.Transitions).
func allows(op job.Op, s job.State) bool { return slices.Contains(job.Expect(op), s) }

// move applies op's transition: the target state, updated_at, seq and the
// history entry.
func move(j *job.Job, op job.Op, at string, ev job.Event) {
	j.State, j.UpdatedAt, j.Seq = job.Target(op), at, j.Seq+1
	j.History = append(j.History, ev)
}

func stageRec(j *job.Job, s domain.Stage) *job.StageRecord {
	if j.Stages == nil {
		j.Stages = map[domain.Stage]*job.StageRecord{}
	}
	if j.Stages[s] == nil {
		j.Stages[s] = &job.StageRecord{Status: job.StagePending}
	}
	return j.Stages[s]
}

func clone(j *job.Job) *job.Job {
	c := *j
	c.Stages = make(map[domain.Stage]*job.StageRecord, len(j.Stages))
	for k, r := range j.Stages {
		if r != nil {
			rc := *r
			c.Stages[k] = &rc
		}
	}
	c.History = slices.Clone(j.History)
	c.Recipients = slices.Clone(j.Recipients)
	c.RequestedRecipients = slices.Clone(j.RequestedRecipients)
	if j.Review != nil {
		rv := *j.Review
		c.Review = &rv
	}
	if j.Swarm != nil {
		sw := *j.Swarm
		c.Swarm = &sw
	}
	return &c
}
