package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/store"
)

// fixture is one scenario's table, clock and names.
type fixture struct {
	scenario
	jobs *store.Store
	t0   time.Time
	n    names
}

func newFixture(t *testing.T, jobs *store.Store) *fixture {
	return &fixture{scenario: scenario{t, context.Background()}, jobs: jobs, t0: start(), n: newNames()}
}

// create stores a new job queued at fetch (as the webhook does) and
// returns its id.
func (f *fixture) create(name string) string {
	f.t.Helper()
	id := f.n.id(name)
	j := job.New(id, f.n.id("key-"+name), changelist(), 1, f.t0, time.Minute)
	f.is(fmt.Sprintf("create %s", id), nil, f.jobs.Create(f.ctx, j, f.idem(j)))
	return id
}

func (f *fixture) idem(j *job.Job) *store.Idempotency {
	return &store.Idempotency{Key: j.IdempotencyKey, RequestHash: "hash-" + j.ID, JobID: j.ID, CreatedAt: j.CreatedAt,
		ExpiresAt: f.t0.AddDate(1, 0, 0).Unix(), Response: store.SavedResponse{Status: 202, Headers: map[string]string{}, Body: j.ID}}
}

func (f *fixture) get(id string) *job.Job {
	f.t.Helper()
	j, err := f.jobs.Get(f.ctx, id)
	f.is(fmt.Sprintf("get %s", id), nil, err)
	return j
}

// claim claims stage for owner at now and fails the scenario if refused.
func (f *fixture) claim(id string, stage domain.Stage, owner string, now time.Time, budget int) *job.Job {
	f.t.Helper()
	j, err := f.jobs.Claim(f.ctx, id, stage, lease(owner, now), budget)
	f.is(fmt.Sprintf("claim %s by %s", stage, owner), nil, err)
	return j
}

// refused asserts a claim is refused for reason and changes nothing.
func (f *fixture) refused(id string, stage domain.Stage, owner string, now time.Time, budget int, reason job.Refusal) {
	f.t.Helper()
	before := f.get(id)
	_, err := f.jobs.Claim(f.ctx, id, stage, lease(owner, now), budget)
	var r *job.ClaimRefused
	if !errors.As(err, &r) || r.Reason != reason {
		f.t.Fatalf("claim %s by %s at +%s: %v, want refused %s", stage, owner, now.Sub(f.t0), err, reason)
	}
	f.unchanged(id, before)
}

// unchanged asserts the job is as it was.
func (f *fixture) unchanged(id string, before *job.Job) {
	f.t.Helper()
	after := f.get(id)
	if after.Seq != before.Seq || after.State != before.State || after.Stage != before.Stage || len(after.History) != len(before.History) {
		f.t.Fatalf("a refused write changed the job: seq %d→%d, %s/%s → %s/%s", before.Seq, after.Seq, before.State, before.Stage, after.State, after.Stage)
	}
	b, a := before.StageRecord(before.Stage), after.StageRecord(before.Stage)
	if *a != *b {
		f.t.Fatalf("a refused write changed the stage record: %+v → %+v", *b, *a)
	}
}

// lost asserts an owner's write was refused as a lost lease and changed nothing.
func (f *fixture) lost(id, what string, err error, before *job.Job) {
	f.t.Helper()
	if !errors.Is(err, job.ErrLeaseLost) {
		f.t.Fatalf("%s: %v, want the lease lost", what, err)
	}
	f.unchanged(id, before)
}

var upstream = job.FailureInfo{Class: failure.Upstream5xx, Message: "502 from the model"}

func runJobs(t *testing.T, jobs *store.Store) {
	for name, run := range map[string]func(f *fixture){
		"create/new job is queued at fetch":         createNew,
		"create/key gate":                           createKeyGate,
		"create/version gate":                       createVersionGate,
		"claim/takes the lease and counts":          claimTakes,
		"claim/live lease is not taken over":        claimLiveLease,
		"claim/budget":                              claimBudget,
		"claim/budget is per stage":                 claimBudgetPerStage,
		"claim/stale or finished stage":             claimStale,
		"owner writes/need the owner":               ownerWrites,
		"owner writes/need the running stage":       ownerNeedsRunning,
		"renew/extends the lease":                   renewExtends,
		"complete/queues the next stage":            completeNext,
		"complete/finish leaves the sweep index":    completeFinish,
		"retry/releases the lease, first failure":   retryReleases,
		"dead letter/by the owner":                  deadLetterOwner,
		"dead letter/ownerless needs expired lease": deadLetterOwnerless,
		"replay/once per dead letter":               replayOnce,
		"restart/only a failed job, once":           restartFailed,
		"due/lists passed deadlines oldest first":   dueLists,
		"reschedule/refused after a change":         rescheduleSeq,
	} {
		t.Run(name, func(t *testing.T) { run(newFixture(t, jobs)) })
	}
}

func createNew(f *fixture) {
	id := f.create("new")
	j := f.get(id)
	if j.State != job.Queued || j.Stage != domain.StageFetch || j.StageRecord(domain.StageFetch).Status != job.StagePending {
		f.t.Fatalf("new job %s/%s, fetch %s", j.State, j.Stage, j.StageRecord(domain.StageFetch).Status)
	}
}

func createKeyGate(f *fixture) {
	first := job.New(f.n.id("a"), f.n.id("key"), changelist(), 1, f.t0, time.Minute)
	f.ok(f.jobs.Create(f.ctx, first, f.idem(first)))
	// The same create retried (its answer lost) succeeds and creates nothing new.
	f.is("a retried create", nil, f.jobs.Create(f.ctx, first, f.idem(first)))
	// Another job under the same key, even for another changelist, is refused
	// with the record that holds the key, and is not stored.
	other := job.New(f.n.id("b"), first.IdempotencyKey, changelist(), 1, f.t0, time.Minute)
	err := f.jobs.Create(f.ctx, other, f.idem(other))
	var dup *store.DuplicateKeyError
	if !errors.As(err, &dup) || dup.Existing.JobID != first.ID || dup.Existing.RequestHash != "hash-"+first.ID {
		f.t.Fatalf("a reused key: %v, want the key held by %s", err, first.ID)
	}
	f.answers("the refused job was stored", job.ErrNotFound)(f.jobs.Get(f.ctx, other.ID))
	// Nor did it move its changelist's gate: version 1 of it is still new.
	again := job.New(f.n.id("c"), f.n.id("key-c"), other.Changelist, 1, f.t0, time.Minute)
	f.is("the refused create moved the version gate", nil, f.jobs.Create(f.ctx, again, f.idem(again)))
}

func createVersionGate(f *fixture) {
	cl := changelist()
	mk := func(name string, v int) (*job.Job, error) {
		j := job.New(f.n.id(name), f.n.id("key-"+name), cl, v, f.t0, time.Minute)
		return j, f.jobs.Create(f.ctx, j, f.idem(j))
	}
	f.must(mk("v2", 2))
	for _, v := range []int{1, 2} {
		j, err := mk("stale", v)
		var stale *store.StaleVersionError
		if !errors.As(err, &stale) || stale.Current.LatestVersion != 2 {
			f.t.Fatalf("version %d after 2: %v, want refused as stale", v, err)
		}
		f.answers("the stale job was stored", job.ErrNotFound)(f.jobs.Get(f.ctx, j.ID))
		// Its key was not taken either: the key is usable for a newer version.
		if v == 2 {
			newer := job.New(f.n.id("v3"), j.IdempotencyKey, cl, 3, f.t0, time.Minute)
			f.is("version 3 under the stale job's key", nil, f.jobs.Create(f.ctx, newer, f.idem(newer)))
		}
	}
}

func claimTakes(f *fixture) {
	id := f.create("claim")
	j := f.claim(id, domain.StageFetch, "o1", f.t0, 3)
	r := j.StageRecord(domain.StageFetch)
	if j.State != job.Running || r.Status != job.StageRunning || r.Owner != "o1" || r.Attempts != 1 || r.LeaseExpiresAt != job.FormatTime(f.t0.Add(ttl)) {
		f.t.Fatalf("claimed job %s, fetch %+v", j.State, *r)
	}
	// The same claim retried (its answer lost) recognises itself.
	f.answers("a retried claim", nil)(f.jobs.Claim(f.ctx, id, domain.StageFetch, lease("o1", f.t0), 3))
}

func claimLiveLease(f *fixture) {
	id := f.create("live")
	f.claim(id, domain.StageFetch, "o1", f.t0, 5)
	f.refused(id, domain.StageFetch, "o2", f.t0.Add(ttl/2), 5, job.RefusedLeaseHeld)
	// Ended on the owner's clock but not surely on every host's: still held.
	f.refused(id, domain.StageFetch, "o2", f.t0.Add(ttl+skew-time.Millisecond), 5, job.RefusedLeaseHeld)
	j := f.claim(id, domain.StageFetch, "o2", f.t0.Add(ttl+skew), 5)
	if r := j.StageRecord(domain.StageFetch); r.Owner != "o2" || r.Attempts != 2 {
		f.t.Fatalf("an expired lease taken over: %+v", *r)
	}
}

func claimBudget(f *fixture) {
	id := f.create("budget")
	now := f.t0
	for i, owner := range []string{"o1", "o2"} {
		f.claim(id, domain.StageFetch, owner, now, 2)
		f.answers(fmt.Sprintf("retry %d", i+1), nil)(f.jobs.Retry(f.ctx, id, domain.StageFetch, lease(owner, now), upstream, time.Second))
		now = now.Add(time.Second)
	}
	f.refused(id, domain.StageFetch, "o3", now, 2, job.RefusedBudget)
	// One more attempt in the budget is exactly one more claim.
	if j := f.claim(id, domain.StageFetch, "o3", now, 3); j.StageRecord(domain.StageFetch).Attempts != 3 {
		f.t.Fatalf("attempts %d, want 3", j.StageRecord(domain.StageFetch).Attempts)
	}
}

// claimBudgetPerStage: attempts spent on one stage do not count against the
// next (rule BU-1).
func claimBudgetPerStage(f *fixture) {
	id := f.create("budget-stage")
	f.claim(id, domain.StageFetch, "o1", f.t0, 2)
	f.must(f.jobs.Retry(f.ctx, id, domain.StageFetch, lease("o1", f.t0), upstream, time.Second))
	f.claim(id, domain.StageFetch, "o2", f.t0, 2)
	f.must(f.jobs.Complete(f.ctx, id, domain.StageFetch, lease("o2", f.t0), job.Result{}, time.Minute))
	if j := f.claim(id, domain.StageLLM, "o3", f.t0, 1); j.StageRecord(domain.StageLLM).Attempts != 1 || j.StageRecord(domain.StageFetch).Attempts != 2 {
		f.t.Fatalf("attempts: llm %d fetch %d", j.StageRecord(domain.StageLLM).Attempts, j.StageRecord(domain.StageFetch).Attempts)
	}
}

func claimStale(f *fixture) {
	id := f.create("stale")
	f.refused(id, domain.StageLLM, "o1", f.t0, 5, job.RefusedStaleStage)
	f.claim(id, domain.StageFetch, "o1", f.t0, 5)
	f.must(f.jobs.Complete(f.ctx, id, domain.StageFetch, lease("o1", f.t0), job.Result{}, time.Minute))
	f.refused(id, domain.StageFetch, "o2", f.t0.Add(time.Hour), 5, job.RefusedStageDone)
}

// ownerWrites: a worker whose lease another owner holds (or never held)
// changes nothing, whichever write it tries.
func ownerWrites(f *fixture) {
	id := f.create("owner")
	f.claim(id, domain.StageFetch, "o1", f.t0, 5)
	before := f.get(id)
	other := lease("o2", f.t0.Add(time.Second))
	f.lost(id, "renew by another owner", f.jobs.Renew(f.ctx, id, domain.StageFetch, other), before)
	_, err := f.jobs.Complete(f.ctx, id, domain.StageFetch, other, job.Result{}, time.Minute)
	f.lost(id, "complete by another owner", err, before)
	_, err = f.jobs.Retry(f.ctx, id, domain.StageFetch, other, upstream, time.Second)
	f.lost(id, "retry by another owner", err, before)
	_, err = f.jobs.DeadLetter(f.ctx, id, domain.StageFetch, other, upstream, f.n.id("dl"), "{}")
	f.lost(id, "dead letter by another owner", err, before)
	// The owner itself, but naming a stage the job is not at.
	_, err = f.jobs.Complete(f.ctx, id, domain.StageLLM, lease("o1", f.t0), job.Result{}, time.Minute)
	if err == nil {
		f.t.Fatal("complete of a stage the job is not at was applied")
	}
	f.unchanged(id, before)
}

// ownerNeedsRunning: the owner of a released lease (its stage waits for a
// retry) can no longer write.
func ownerNeedsRunning(f *fixture) {
	id := f.create("released")
	f.claim(id, domain.StageFetch, "o1", f.t0, 5)
	f.must(f.jobs.Retry(f.ctx, id, domain.StageFetch, lease("o1", f.t0), upstream, time.Second))
	before := f.get(id)
	l := lease("o1", f.t0.Add(time.Second))
	f.lost(id, "renew of a released lease", f.jobs.Renew(f.ctx, id, domain.StageFetch, l), before)
	_, err := f.jobs.Complete(f.ctx, id, domain.StageFetch, l, job.Result{}, time.Minute)
	f.lost(id, "complete of a released lease", err, before)
	_, err = f.jobs.DeadLetter(f.ctx, id, domain.StageFetch, l, upstream, f.n.id("dl"), "{}")
	f.lost(id, "dead letter of a released lease", err, before)
}

func renewExtends(f *fixture) {
	id := f.create("renew")
	f.claim(id, domain.StageFetch, "o1", f.t0, 5)
	later := f.t0.Add(40 * time.Second)
	f.ok(f.jobs.Renew(f.ctx, id, domain.StageFetch, lease("o1", later)))
	if got := f.get(id).StageRecord(domain.StageFetch).LeaseExpiresAt; got != job.FormatTime(later.Add(ttl)) {
		f.t.Fatalf("lease ends %s after renewal, want %s", got, job.FormatTime(later.Add(ttl)))
	}
	// The renewed lease holds past the first one's end.
	f.refused(id, domain.StageFetch, "o2", f.t0.Add(ttl+skew), 5, job.RefusedLeaseHeld)
}

func completeNext(f *fixture) {
	id := f.create("complete")
	f.claim(id, domain.StageFetch, "o1", f.t0, 5)
	count := 3
	res := job.Result{Detail: "fetched", Recipients: []string{"a@example.com"}, FindingCount: &count}
	j, err := f.jobs.Complete(f.ctx, id, domain.StageFetch, lease("o1", f.t0), res, time.Minute)
	f.ok(err)
	r := j.StageRecord(domain.StageFetch)
	if j.State != job.Queued || j.Stage != domain.StageLLM || r.Status != job.StageDone || r.CompletedBy != "o1" || r.Owner != "" {
		f.t.Fatalf("after complete: %s/%s, fetch %+v", j.State, j.Stage, *r)
	}
	if got := f.get(id); len(got.Recipients) != 1 || got.FindingCount != 3 {
		f.t.Fatalf("the result was not kept: recipients %v, findings %d", got.Recipients, got.FindingCount)
	}
	// Retried after it was applied (and after the next stage was claimed).
	f.claim(id, domain.StageLLM, "o2", f.t0, 5)
	f.answers("a retried complete", nil)(f.jobs.Complete(f.ctx, id, domain.StageFetch, lease("o1", f.t0), res, time.Minute))
	if got := f.get(id); got.Stage != domain.StageLLM || got.StageRecord(domain.StageLLM).Owner != "o2" {
		f.t.Fatalf("the retried complete changed the job: %s, llm %+v", got.Stage, *got.StageRecord(domain.StageLLM))
	}
}

func completeFinish(f *fixture) {
	id := f.create("finish")
	now := f.t0
	for _, st := range domain.Stages {
		f.claim(id, st, "o-"+string(st), now, 5)
		f.answers(fmt.Sprintf("complete %s", st), nil)(f.jobs.Complete(f.ctx, id, st, lease("o-"+string(st), now), job.Result{}, time.Minute))
	}
	if j := f.get(id); j.State != job.Succeeded {
		f.t.Fatalf("after the last stage: %s", j.State)
	}
	if f.due(id, now.Add(24*time.Hour)) {
		f.t.Fatal("a succeeded job is still due for the sweeper")
	}
}

func retryReleases(f *fixture) {
	id := f.create("retry")
	t1, t2 := f.t0, f.t0.Add(10*time.Second)
	f.claim(id, domain.StageFetch, "o1", t1, 5)
	j, err := f.jobs.Retry(f.ctx, id, domain.StageFetch, lease("o1", t1), upstream, time.Second)
	f.ok(err)
	if r := j.StageRecord(domain.StageFetch); j.State != job.RetryWait || r.Status != job.StageRetryWait || r.Owner != "" {
		f.t.Fatalf("after retry: %s, fetch %+v", j.State, *r)
	}
	// The same retry again (its answer lost) recognises its own write and
	// changes nothing (rule LS-6) ...
	before := f.get(id)
	f.answers("a retried retry", nil)(f.jobs.Retry(f.ctx, id, domain.StageFetch, lease("o1", t1), upstream, time.Second))
	f.unchanged(id, before)
	// The lease is released: the retry's claim need not wait for it to end.
	f.claim(id, domain.StageFetch, "o2", t2, 5)
	// ... but once another write followed, it is a lost lease.
	before = f.get(id)
	_, err = f.jobs.Retry(f.ctx, id, domain.StageFetch, lease("o1", t1), upstream, time.Second)
	f.lost(id, "a retry retried after another owner's claim", err, before)
	j, err = f.jobs.Retry(f.ctx, id, domain.StageFetch, lease("o2", t2), job.FailureInfo{Class: failure.NetworkTimeout, Message: "slow"}, time.Second)
	f.ok(err)
	r := j.StageRecord(domain.StageFetch)
	if r.FirstFailureAt != job.FormatTime(t1) || r.LastFailureAt != job.FormatTime(t2) || r.LastErrorClass != failure.NetworkTimeout {
		f.t.Fatalf("failures: first %s last %s (%s), want first %s last %s", r.FirstFailureAt, r.LastFailureAt, r.LastErrorClass, job.FormatTime(t1), job.FormatTime(t2))
	}
}

func deadLetterOwner(f *fixture) {
	id := f.create("dlq")
	dl := f.n.id("dl")
	f.claim(id, domain.StageFetch, "o1", f.t0, 5)
	j, err := f.jobs.DeadLetter(f.ctx, id, domain.StageFetch, lease("o1", f.t0), upstream, dl, `{"body":1}`)
	f.ok(err)
	r := j.StageRecord(domain.StageFetch)
	if j.State != job.Failed || r.Status != job.StageFailed || !r.DLQPending || r.DeadLetter != `{"body":1}` || r.FirstFailureAt != job.FormatTime(f.t0) {
		f.t.Fatalf("after dead letter: %s, fetch %+v", j.State, *r)
	}
	if f.due(id, f.t0.Add(24*time.Hour)) {
		f.t.Fatal("a dead-lettered job is still due for the sweeper")
	}
	// Retried (answer lost): success, nothing more.
	f.answers("a retried dead letter", nil)(f.jobs.DeadLetter(f.ctx, id, domain.StageFetch, lease("o1", f.t0), upstream, dl, `{"body":1}`))
	// Another dead letter's confirmation clears nothing of this one.
	f.ok(f.jobs.MarkDeadLetterSent(f.ctx, id, domain.StageFetch, f.n.id("other-dl"), f.t0))
	if r := f.get(id).StageRecord(domain.StageFetch); !r.DLQPending || r.DeadLetter == "" {
		f.t.Fatalf("another dead letter's confirmation cleared this one: %+v", *r)
	}
	f.ok(f.jobs.MarkDeadLetterSent(f.ctx, id, domain.StageFetch, dl, f.t0))
	if r := f.get(id).StageRecord(domain.StageFetch); r.DLQPending || r.DeadLetter != "" {
		f.t.Fatalf("the sent dead letter is still kept: %+v", *r)
	}
	f.refused(id, domain.StageFetch, "o2", f.t0.Add(time.Hour), 5, job.RefusedDeadLettered)
}

// deadLetterOwnerless: a stage whose budget crashed workers spent is
// dead-lettered without an owner, but never under a live lease.
func deadLetterOwnerless(f *fixture) {
	id := f.create("ownerless")
	f.claim(id, domain.StageFetch, "o1", f.t0, 5)
	before := f.get(id)
	for _, at := range []time.Duration{ttl / 2, ttl + skew - time.Millisecond} {
		_, err := f.jobs.DeadLetter(f.ctx, id, domain.StageFetch, lease("", f.t0.Add(at)), upstream, f.n.id("dl-early"), "{}")
		f.lost(id, "an ownerless dead letter under a live lease", err, before)
	}
	j, err := f.jobs.DeadLetter(f.ctx, id, domain.StageFetch, lease("", f.t0.Add(ttl+skew)), upstream, f.n.id("dl"), "{}")
	f.is("an ownerless dead letter after the lease ended", nil, err)
	if j.State != job.Failed || j.StageRecord(domain.StageFetch).Status != job.StageFailed {
		f.t.Fatalf("after the ownerless dead letter: %s", j.State)
	}
	// A stage waiting for its retry (no lease) needs no expiry.
	id2 := f.create("ownerless-wait")
	f.claim(id2, domain.StageFetch, "o1", f.t0, 5)
	f.must(f.jobs.Retry(f.ctx, id2, domain.StageFetch, lease("o1", f.t0), upstream, time.Second))
	f.answers("an ownerless dead letter of a stage waiting for its retry", nil)(f.jobs.DeadLetter(f.ctx, id2, domain.StageFetch, lease("", f.t0), upstream, f.n.id("dl2"), "{}"))
}

func replayOnce(f *fixture) {
	id := f.create("replay")
	dl := f.n.id("dl")
	f.claim(id, domain.StageFetch, "o1", f.t0, 1)
	f.must(f.jobs.DeadLetter(f.ctx, id, domain.StageFetch, lease("o1", f.t0), upstream, dl, "{}"))
	f.answers("a replay of another dead letter", job.ErrNotReplayable)(f.jobs.Replay(f.ctx, id, domain.StageFetch, f.n.id("other"), failure.Upstream5xx, f.t0, time.Minute))
	j, err := f.jobs.Replay(f.ctx, id, domain.StageFetch, dl, failure.Upstream5xx, f.t0.Add(time.Second), time.Minute)
	f.ok(err)
	r := j.StageRecord(domain.StageFetch)
	if j.State != job.Queued || r.Status != job.StagePending || r.Attempts != 0 || r.Replays != 1 || r.FirstFailureAt != "" {
		f.t.Fatalf("after replay: %s, fetch %+v", j.State, *r)
	}
	// The same replay again (a redrive, or its answer lost) replays nothing.
	f.answers("the same replay retried", nil)(f.jobs.Replay(f.ctx, id, domain.StageFetch, dl, failure.Upstream5xx, f.t0.Add(2*time.Second), time.Minute))
	if r := f.get(id).StageRecord(domain.StageFetch); r.Replays != 1 {
		f.t.Fatalf("one dead letter replayed %d times", r.Replays)
	}
	// The fresh budget admits a claim again, and once the stage moved on
	// the dead letter is no longer replayable.
	f.claim(id, domain.StageFetch, "o2", f.t0.Add(3*time.Second), 1)
	f.answers("a replay of a running stage", job.ErrNotReplayable)(f.jobs.Replay(f.ctx, id, domain.StageFetch, dl, failure.Upstream5xx, f.t0.Add(4*time.Second), time.Minute))
}

// restartFailed: the operator's full restart takes a dead-lettered job back
// to fetch with every stage reset, once per request; a job that is not
// failed is never restarted.
func restartFailed(f *fixture) {
	id := f.create("restart")
	f.claim(id, domain.StageFetch, "o1", f.t0, 5)
	before := f.get(id)
	f.answers("restart of a running job", job.ErrNotReplayable)(f.jobs.Restart(f.ctx, id, "ops", f.n.id("r0"), f.t0, time.Minute))
	f.unchanged(id, before)
	f.must(f.jobs.DeadLetter(f.ctx, id, domain.StageFetch, lease("o1", f.t0), upstream, f.n.id("dl"), "{}"))
	j, err := f.jobs.Restart(f.ctx, id, "ops", f.n.id("r1"), f.t0.Add(time.Second), time.Minute)
	f.ok(err)
	r := j.StageRecord(domain.StageFetch)
	if j.State != job.Queued || j.Stage != domain.StageFetch || r.Status != job.StagePending || r.Attempts != 0 || r.DeadLetterID != "" {
		f.t.Fatalf("after restart: %s/%s, fetch %+v", j.State, j.Stage, *r)
	}
	seq := j.Seq
	// The same request again (its answer lost) restarts nothing more.
	f.answers("a retried restart", nil)(f.jobs.Restart(f.ctx, id, "ops", f.n.id("r1"), f.t0.Add(2*time.Second), time.Minute))
	if got := f.get(id); got.Seq != seq {
		f.t.Fatalf("a retried restart wrote again: seq %d → %d", seq, got.Seq)
	}
}

// due reports whether the sweeper's query at now lists job id.
func (f *fixture) due(id string, now time.Time) bool {
	f.t.Helper()
	jobs, err := f.jobs.Due(f.ctx, now, 10000)
	f.ok(err)
	return slices.ContainsFunc(jobs, func(j *job.Job) bool { return j.ID == id })
}

func dueLists(f *fixture) {
	a := f.create("due-a") // due at t0+1m (job.New's sweepAfter)
	f.t0 = f.t0.Add(time.Second)
	b := f.create("due-b") // due at t0+1m1s
	if f.due(a, f.t0.Add(time.Minute-2*time.Second)) {
		f.t.Fatal("a job is due before its sweep deadline")
	}
	if !f.due(a, f.t0.Add(time.Minute-time.Second)) || f.due(b, f.t0.Add(time.Minute-time.Second)) {
		f.t.Fatal("the sweep deadline is not inclusive, or the later job is due early")
	}
	jobs, err := f.jobs.Due(f.ctx, f.t0.Add(time.Hour), 10000)
	f.ok(err)
	var order []string
	for _, j := range jobs {
		if j.ID == a || j.ID == b {
			order = append(order, j.ID)
		}
	}
	if len(order) != 2 || order[0] != a {
		f.t.Fatalf("due order %v, want %s first", order, a)
	}
	// A claim moves the deadline past the lease: not due while it runs.
	f.claim(a, domain.StageFetch, "o1", f.t0.Add(time.Hour), 5)
	if f.due(a, f.t0.Add(time.Hour+ttl)) {
		f.t.Fatal("a job is due for the sweeper while its lease runs")
	}
}

func rescheduleSeq(f *fixture) {
	id := f.create("reschedule")
	read := f.get(id)
	f.claim(id, domain.StageFetch, "o1", f.t0, 5)
	f.is("a reschedule from a stale read", job.ErrConflict, f.jobs.Reschedule(f.ctx, read, f.t0, f.t0.Add(time.Hour), "stale"))
	cur := f.get(id)
	f.ok(f.jobs.Reschedule(f.ctx, cur, f.t0, f.t0.Add(time.Hour), "fresh"))
	if got := f.get(id); got.SweepAt != job.FormatTime(f.t0.Add(time.Hour)) || got.Seq != cur.Seq+1 {
		f.t.Fatalf("rescheduled to %s seq %d", got.SweepAt, got.Seq)
	}
}
