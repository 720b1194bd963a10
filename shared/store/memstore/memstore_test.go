package memstore

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
)

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// The table applies an operation exactly to the states job.Transitions
// lists for it, moves the job to the operation's target, and refuses the
// rest with the store's errors — so the tests built on it exercise the
// state machine, not a script.
func TestOperationsFollowTransitions(t *testing.T) {
	ctx := context.Background()
	l := job.Lease{Owner: "o1", Now: t0, TTL: time.Minute, Skew: 2 * time.Second}
	fi := job.FailureInfo{Class: failure.Upstream5xx}
	ops := map[job.Op]struct {
		stage domain.Stage
		rec   job.StageRecord // the stage record a call of op needs
		call  func(m *Jobs) error
	}{
		job.OpClaim: {domain.StageFetch, job.StageRecord{Status: job.StagePending},
			func(m *Jobs) error { _, err := m.Claim(ctx, "j", domain.StageFetch, l, 5); return err }},
		job.OpRenew: {domain.StageFetch, job.StageRecord{Status: job.StageRunning, Owner: "o1"},
			func(m *Jobs) error { return m.Renew(ctx, "j", domain.StageFetch, l) }},
		job.OpComplete: {domain.StageFetch, job.StageRecord{Status: job.StageRunning, Owner: "o1"},
			func(m *Jobs) error {
				_, err := m.Complete(ctx, "j", domain.StageFetch, l, job.Result{}, time.Minute)
				return err
			}},
		job.OpFinish: {domain.StageNotify, job.StageRecord{Status: job.StageRunning, Owner: "o1"},
			func(m *Jobs) error {
				_, err := m.Complete(ctx, "j", domain.StageNotify, l, job.Result{}, time.Minute)
				return err
			}},
		job.OpRetry: {domain.StageFetch, job.StageRecord{Status: job.StageRunning, Owner: "o1"},
			func(m *Jobs) error { _, err := m.Retry(ctx, "j", domain.StageFetch, l, fi, time.Second); return err }},
		job.OpDeadLetter: {domain.StageFetch, job.StageRecord{Status: job.StageRunning, Owner: "o1"},
			func(m *Jobs) error {
				_, err := m.DeadLetter(ctx, "j", domain.StageFetch, l, fi, "dl", "{}")
				return err
			}},
		job.OpReplay: {domain.StageFetch, job.StageRecord{Status: job.StageFailed, DeadLetterID: "dl"},
			func(m *Jobs) error {
				_, err := m.Replay(ctx, "j", domain.StageFetch, "dl", fi.Class, t0, time.Minute)
				return err
			}},
		job.OpRestart: {domain.StageFetch, job.StageRecord{Status: job.StageFailed},
			func(m *Jobs) error { _, err := m.Restart(ctx, "j", "ops", "r1", t0, time.Minute); return err }},
	}
	for op, tt := range ops {
		for _, st := range job.States {
			m := New()
			rec := tt.rec
			m.Put(&job.Job{ID: "j", State: st, Stage: tt.stage, Seq: 1, Stages: map[domain.Stage]*job.StageRecord{tt.stage: &rec}})
			err := tt.call(m)
			allowed := slices.Contains(job.Expect(op), st)
			if allowed != (err == nil) {
				t.Errorf("%s from %s: err %v, want allowed=%v", op, st, err, allowed)
				continue
			}
			j, _ := m.Get(ctx, "j")
			if allowed && j.State != job.Target(op) {
				t.Errorf("%s from %s: job %s, want %s", op, st, j.State, job.Target(op))
			}
			if !allowed && (j.State != st || j.Seq != 1) {
				t.Errorf("%s from %s refused but the job changed: %s seq %d", op, st, j.State, j.Seq)
			}
			if !allowed && op != job.OpClaim && !errors.Is(err, job.ErrLeaseLost) && !errors.Is(err, job.ErrNotReplayable) {
				t.Errorf("%s from %s: %v, want the store's refusal", op, st, err)
			}
		}
	}
}

// Owner writes by another owner are refused: the lease guard.
func TestOwnerWritesNeedTheOwner(t *testing.T) {
	ctx := context.Background()
	m := New()
	m.Put(&job.Job{ID: "j", State: job.Running, Stage: domain.StageFetch, Seq: 1,
		Stages: map[domain.Stage]*job.StageRecord{domain.StageFetch: {Status: job.StageRunning, Owner: "o1", LeaseExpiresAt: job.FormatTime(t0.Add(time.Minute))}}})
	other := job.Lease{Owner: "o2", Now: t0, TTL: time.Minute}
	if err := m.Renew(ctx, "j", domain.StageFetch, other); !errors.Is(err, job.ErrLeaseLost) {
		t.Errorf("renew by another owner: %v", err)
	}
	if _, err := m.Complete(ctx, "j", domain.StageFetch, other, job.Result{}, time.Minute); !errors.Is(err, job.ErrLeaseLost) {
		t.Errorf("complete by another owner: %v", err)
	}
	var refused *job.ClaimRefused
	if _, err := m.Claim(ctx, "j", domain.StageFetch, other, 5); !errors.As(err, &refused) || refused.Reason != job.RefusedLeaseHeld {
		t.Errorf("claim of a live lease: %v", err)
	}
}
