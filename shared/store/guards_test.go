package store

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
)

func value(t *testing.T, in map[string]types.AttributeValue, k string) string {
	t.Helper()
	switch v := in[k].(type) {
	case *types.AttributeValueMemberS:
		return v.Value
	case *types.AttributeValueMemberN:
		return v.Value
	}
	t.Fatalf("no value %s in %v", k, in)
	return ""
}

// Rule LS-1/LS-3: every write a lease owner makes (renew, complete, finish,
// retry, dead-letter) is conditional on the stage running under that very
// owner, so a worker whose lease was taken over cannot change the job.
func TestOwnerWritesAreGuardedByTheOwner(t *testing.T) {
	ctx := context.Background()
	fi := job.FailureInfo{Class: failure.Upstream5xx}
	other := after(job.Succeeded, domain.StageNotify, stageItem{Status: job.StageDone}, "")
	for name, call := range map[string]func(st *Store){
		"renew":       func(st *Store) { st.Renew(ctx, "j1", domain.StageLLM, lease) },
		"complete":    func(st *Store) { st.Complete(ctx, "j1", domain.StageLLM, lease, job.Result{}, time.Minute) },
		"finish":      func(st *Store) { st.Complete(ctx, "j1", domain.StageNotify, lease, job.Result{}, time.Minute) },
		"retry":       func(st *Store) { st.Retry(ctx, "j1", domain.StageLLM, lease, fi, time.Second) },
		"dead letter": func(st *Store) { st.DeadLetter(ctx, "j1", domain.StageLLM, lease, fi, "dl", "{}") },
	} {
		api := &condFailAPI{old: other}
		call(New(api, "jobs"))
		in := api.last
		cond := *in.ConditionExpression
		if !strings.Contains(cond, "stages.#stg.#owner = :owner") || in.ExpressionAttributeNames["#owner"] != "owner" ||
			value(t, in.ExpressionAttributeValues, ":owner") != lease.Owner {
			t.Errorf("%s: condition %q (names %v) is not guarded by the lease owner %s", name, cond, in.ExpressionAttributeNames, lease.Owner)
		}
		if !strings.Contains(cond, "stages.#stg.#st = :srunning") || value(t, in.ExpressionAttributeValues, ":srunning") != string(job.StageRunning) {
			t.Errorf("%s: condition %q does not require the stage to be running", name, cond)
		}
		if !strings.Contains(cond, "#stage = :s") {
			t.Errorf("%s: condition %q does not require the job at the stage", name, cond)
		}
	}
}

// Rule BU-1: the claim counts and bounds the attempts of the claimed stage
// only; a replay resets that stage's budget only.
func TestBudgetsArePerStage(t *testing.T) {
	ctx := context.Background()
	other := after(job.Succeeded, domain.StageNotify, stageItem{Status: job.StageDone}, "")
	api := &condFailAPI{old: other}
	New(api, "jobs").Claim(ctx, "j1", domain.StageLLM, lease, 5)
	in := api.last
	if in.ExpressionAttributeNames["#stg"] != string(domain.StageLLM) {
		t.Fatalf("claim of llm binds #stg to %q", in.ExpressionAttributeNames["#stg"])
	}
	if !strings.Contains(*in.ConditionExpression, "stages.#stg.attempts < :max") || value(t, in.ExpressionAttributeValues, ":max") != "5" {
		t.Errorf("claim condition %q does not bound the claimed stage's attempts by the budget", *in.ConditionExpression)
	}
	if !strings.Contains(*in.UpdateExpression, "stages.#stg.attempts = stages.#stg.attempts + :one") {
		t.Errorf("claim update %q does not count the claimed stage's attempt", *in.UpdateExpression)
	}
	// A live lease of another owner is not taken over: only one that ended
	// the skew budget ago (rule LS-5).
	if !strings.Contains(*in.ConditionExpression, "stages.#stg.lease_expires_at <= :expired") || value(t, in.ExpressionAttributeValues, ":expired") != lease.ExpiredBefore() {
		t.Errorf("claim condition %q does not respect a live lease within the skew budget", *in.ConditionExpression)
	}
	api = &condFailAPI{old: other}
	New(api, "jobs").Replay(ctx, "j1", domain.StageLLM, "dl", failure.NotFound, t0, time.Minute)
	if upd := *api.last.UpdateExpression; !strings.Contains(upd, "stages.#stg.attempts = :zero") || strings.Count(upd, "attempts =") != 1 ||
		api.last.ExpressionAttributeNames["#stg"] != string(domain.StageLLM) {
		t.Errorf("replay update %q resets more than the replayed stage's budget", upd)
	}
}
