package job

import (
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/domain"
)

func TestTransitions(t *testing.T) {
	tests := []struct {
		from, to State
		ok       bool
	}{
		{Queued, Running, true}, {Running, Queued, true}, {Running, RetryWait, true}, {RetryWait, Running, true},
		{Running, Succeeded, true}, {Running, Failed, true}, {Failed, Queued, true}, {Running, Running, true},
		{Queued, Failed, true}, {RetryWait, Failed, true},
		{Succeeded, Queued, false}, {Succeeded, Running, false}, {Failed, Running, false}, {Queued, Succeeded, false}, {RetryWait, Queued, false},
	}
	for _, tt := range tests {
		if got := CanTransition(tt.from, tt.to); got != tt.ok {
			t.Errorf("%s → %s: %v, want %v", tt.from, tt.to, got, tt.ok)
		}
	}
}

func TestEveryOpLeadsToAKnownState(t *testing.T) {
	for op, tr := range Transitions {
		if len(tr.From) == 0 {
			t.Errorf("%s applies to no state", op)
		}
		for _, s := range append(tr.From, tr.To) {
			found := false
			for _, k := range States {
				found = found || k == s
			}
			if !found {
				t.Errorf("%s names unknown state %q", op, s)
			}
		}
	}
	if got := Expect(OpComplete); len(got) != 1 || got[0] != Running {
		t.Errorf("complete expects %v, want only running", got)
	}
}

func TestRefuse(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	l := Lease{Owner: "m#1", Now: now, TTL: time.Minute, Skew: 2 * time.Second}
	at := func(d time.Duration) string { return FormatTime(now.Add(d)) }
	mk := func(state State, stage domain.Stage, rec StageRecord) *Job {
		return &Job{State: state, Stage: stage, Stages: map[domain.Stage]*StageRecord{domain.StageLLM: &rec}}
	}
	tests := []struct {
		name string
		j    *Job
		want Refusal
	}{
		{"job succeeded", mk(Succeeded, domain.StageNotify, StageRecord{Status: StageDone}), RefusedSucceeded},
		{"stage done, job moved on", mk(Queued, domain.StageNotify, StageRecord{Status: StageDone}), RefusedStageDone},
		{"job at another stage", mk(Queued, domain.StageFetch, StageRecord{Status: StagePending}), RefusedStaleStage},
		{"stage dead-lettered", mk(Failed, domain.StageLLM, StageRecord{Status: StageFailed}), RefusedDeadLettered},
		{"live lease", mk(Running, domain.StageLLM, StageRecord{Status: StageRunning, Attempts: 1, LeaseExpiresAt: at(30 * time.Second)}), RefusedLeaseHeld},
		// Within the skew budget the other host may still hold it.
		{"lease ended 1s ago", mk(Running, domain.StageLLM, StageRecord{Status: StageRunning, Attempts: 1, LeaseExpiresAt: at(-time.Second)}), RefusedLeaseHeld},
		{"budget used", mk(RetryWait, domain.StageLLM, StageRecord{Status: StageRetryWait, Attempts: 5}), RefusedBudget},
		{"expired lease, budget used", mk(Running, domain.StageLLM, StageRecord{Status: StageRunning, Attempts: 5, LeaseExpiresAt: at(-3 * time.Second)}), RefusedBudget},
		{"nothing explains it", mk(Queued, domain.StageLLM, StageRecord{Status: StagePending}), RefusedUnexpected},
	}
	for _, tt := range tests {
		if got := Refuse(tt.j, domain.StageLLM, l, 5); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestLeaseSkew(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	rec := &StageRecord{Status: StageRunning, LeaseExpiresAt: FormatTime(now.Add(-time.Second))}
	if !Live(rec, now, 2*time.Second) {
		t.Error("a lease that ended 1s ago is live within a 2s skew budget")
	}
	if Live(rec, now, 0) {
		t.Error("without a skew budget a lease that ended is not live")
	}
	if got := (Clock(func() time.Time { return now.Add(1500 * time.Microsecond) })).Now(); !got.Equal(now.Add(time.Millisecond)) {
		t.Errorf("clock %v: want UTC truncated to ms", got)
	}
}
