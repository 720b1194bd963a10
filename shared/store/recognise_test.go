package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
)

// condFailAPI answers every UpdateItem with ConditionalCheckFailed and the
// given item as the old image (what DynamoDB returns on a retry of a write
// that was applied but whose answer was lost), recording the request.
type condFailAPI struct {
	API
	old  *jobItem
	last *dynamodb.UpdateItemInput
}

func (f *condFailAPI) UpdateItem(_ context.Context, in *dynamodb.UpdateItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	f.last = in
	item, err := attributevalue.MarshalMap(f.old)
	if err != nil {
		return nil, err
	}
	return nil, &types.ConditionalCheckFailedException{Message: new(string), Item: item}
}

var (
	t0    = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	lease = job.Lease{Owner: "msg-1#1", Now: t0, TTL: time.Minute, Skew: 2 * time.Second}
)

// after returns the item as op by lease.Owner left it.
func after(state job.State, at domain.Stage, rec stageItem, lastWrite string) *jobItem {
	return &jobItem{ID: "j1", State: state, Stage: at, Stages: map[domain.Stage]*stageItem{domain.StageFetch: &rec}, LastWrite: lastWrite}
}

func TestAppliedButUnansweredWritesAreRecognised(t *testing.T) {
	ctx := context.Background()
	fi := job.FailureInfo{Class: failure.Upstream5xx, Message: "x"}
	ops := []struct {
		name  string
		mine  *jobItem // the item after this very write
		other *jobItem // the item after someone else's write
		call  func(st *Store) error
		want  error // the refusal when it was not ours
	}{
		{"claim", after(job.Running, domain.StageFetch, stageItem{Status: job.StageRunning, Owner: lease.Owner, Attempts: 1}, "x"),
			after(job.Running, domain.StageFetch, stageItem{Status: job.StageRunning, Owner: "msg-2#1", Attempts: 1, LeaseExpiresAt: job.FormatTime(t0.Add(time.Minute))}, "msg-2#1/claim"),
			func(st *Store) error { _, err := st.Claim(ctx, "j1", domain.StageFetch, lease, 5); return err }, job.ErrClaimRefused},
		{"renew", after(job.Running, domain.StageFetch, stageItem{Status: job.StageRunning, Owner: lease.Owner}, lease.Owner+"/renew"),
			after(job.Running, domain.StageFetch, stageItem{Status: job.StageRunning, Owner: "msg-2#1"}, "msg-2#1/claim"),
			func(st *Store) error { return st.Renew(ctx, "j1", domain.StageFetch, lease) }, job.ErrLeaseLost},
		// Complete is recognised by completed_by even after later writes
		// (the sweeper's reschedule) replaced last_write.
		{"complete", after(job.Queued, domain.StageLLM, stageItem{Status: job.StageDone, CompletedBy: lease.Owner}, "sweep/9/x"),
			after(job.Queued, domain.StageLLM, stageItem{Status: job.StageDone, CompletedBy: "msg-2#1"}, "msg-2#1/complete"),
			func(st *Store) error {
				_, err := st.Complete(ctx, "j1", domain.StageFetch, lease, job.Result{}, time.Minute)
				return err
			}, job.ErrLeaseLost},
		{"retry", after(job.RetryWait, domain.StageFetch, stageItem{Status: job.StageRetryWait}, lease.Owner+"/retry"),
			after(job.RetryWait, domain.StageFetch, stageItem{Status: job.StageRetryWait}, "msg-2#1/retry"),
			func(st *Store) error {
				_, err := st.Retry(ctx, "j1", domain.StageFetch, lease, fi, time.Second)
				return err
			}, job.ErrLeaseLost},
		{"dead letter", after(job.Failed, domain.StageFetch, stageItem{Status: job.StageFailed, DeadLetterID: "dl-1"}, "dead_letter/dl-1"),
			after(job.Failed, domain.StageFetch, stageItem{Status: job.StageFailed, DeadLetterID: "dl-0"}, "dead_letter/dl-0"),
			func(st *Store) error {
				_, err := st.DeadLetter(ctx, "j1", domain.StageFetch, lease, fi, "dl-1", "{}")
				return err
			}, job.ErrLeaseLost},
		{"replay", after(job.Queued, domain.StageFetch, stageItem{Status: job.StagePending, ReplayedFrom: "dl-1"}, "replay/dl-1"),
			after(job.Queued, domain.StageFetch, stageItem{Status: job.StagePending, ReplayedFrom: "dl-0"}, "replay/dl-0"),
			func(st *Store) error {
				_, err := st.Replay(ctx, "j1", domain.StageFetch, "dl-1", failure.NotFound, t0, time.Minute)
				return err
			}, job.ErrNotReplayable},
		{"restart", after(job.Queued, domain.StageFetch, stageItem{Status: job.StagePending}, "restart/req-1"),
			after(job.Queued, domain.StageFetch, stageItem{Status: job.StagePending}, "restart/req-0"),
			func(st *Store) error {
				_, err := st.Restart(ctx, "j1", "ops", "req-1", t0, time.Minute)
				return err
			}, job.ErrNotReplayable},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			if err := op.call(New(&condFailAPI{old: op.mine}, "jobs")); err != nil {
				t.Errorf("retry meeting its own applied write: %v, want success", err)
			}
			if err := op.call(New(&condFailAPI{old: op.other}, "jobs")); !errors.Is(err, op.want) {
				t.Errorf("meeting another writer's change: %v, want %v", err, op.want)
			}
		})
	}
}

// Every conditional write's expected states are the ones job.Transitions
// lists for its operation.
func TestWritesExpectTheStatesOfTransitions(t *testing.T) {
	ctx := context.Background()
	fi := job.FailureInfo{Class: failure.Upstream5xx}
	other := after(job.Succeeded, domain.StageNotify, stageItem{Status: job.StageDone}, "")
	tests := []struct {
		op   job.Op
		call func(st *Store)
	}{
		{job.OpClaim, func(st *Store) { st.Claim(ctx, "j1", domain.StageFetch, lease, 5) }},
		{job.OpRenew, func(st *Store) { st.Renew(ctx, "j1", domain.StageFetch, lease) }},
		{job.OpComplete, func(st *Store) { st.Complete(ctx, "j1", domain.StageFetch, lease, job.Result{}, time.Minute) }},
		{job.OpFinish, func(st *Store) { st.Complete(ctx, "j1", domain.StageNotify, lease, job.Result{}, time.Minute) }},
		{job.OpRetry, func(st *Store) { st.Retry(ctx, "j1", domain.StageFetch, lease, fi, time.Second) }},
		{job.OpDeadLetter, func(st *Store) { st.DeadLetter(ctx, "j1", domain.StageFetch, job.Lease{Now: t0}, fi, "dl", "{}") }},
		{job.OpReplay, func(st *Store) { st.Replay(ctx, "j1", domain.StageFetch, "dl", fi.Class, t0, time.Minute) }},
		{job.OpRestart, func(st *Store) { st.Restart(ctx, "j1", "ops", "r", t0, time.Minute) }},
	}
	for _, tt := range tests {
		api := &condFailAPI{old: other}
		tt.call(New(api, "jobs"))
		var got []string
		for k, v := range api.last.ExpressionAttributeValues {
			if strings.HasPrefix(k, ":from_"+string(tt.op)+"_") {
				got = append(got, v.(*types.AttributeValueMemberS).Value)
			}
		}
		want := job.Expect(tt.op)
		if len(got) != len(want) {
			t.Errorf("%s expects states %v, want %v (from job.Transitions)", tt.op, got, want)
			continue
		}
		for _, w := range want {
			if !strings.Contains(strings.Join(got, ","), string(w)) {
				t.Errorf("%s expects states %v, want %v (from job.Transitions)", tt.op, got, want)
			}
		}
		if !strings.Contains(*api.last.UpdateExpression, "last_write = :wtoken") {
			t.Errorf("%s does not record its write token", tt.op)
		}
	}
}
