package store

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
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
func after(state job.State, at domain.Stage, rec job.StageRecord, lastWrite string) *jobItem {
	return &jobItem{Job: job.Job{ID: "j1", State: state, Stage: at, Stages: map[domain.Stage]*job.StageRecord{domain.StageFetch: &rec}}, LastWrite: lastWrite}
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
		{"claim", after(job.Running, domain.StageFetch, job.StageRecord{Status: job.StageRunning, Owner: lease.Owner, Attempts: 1}, "x"),
			after(job.Running, domain.StageFetch, job.StageRecord{Status: job.StageRunning, Owner: "msg-2#1", Attempts: 1, LeaseExpiresAt: job.FormatTime(t0.Add(time.Minute))}, "msg-2#1/claim"),
			func(st *Store) error { _, err := st.Claim(ctx, "j1", domain.StageFetch, lease, 5); return err }, job.ErrClaimRefused},
		{"renew", after(job.Running, domain.StageFetch, job.StageRecord{Status: job.StageRunning, Owner: lease.Owner}, lease.Owner+"/renew"),
			after(job.Running, domain.StageFetch, job.StageRecord{Status: job.StageRunning, Owner: "msg-2#1"}, "msg-2#1/claim"),
			func(st *Store) error { return st.Renew(ctx, "j1", domain.StageFetch, lease) }, job.ErrLeaseLost},
		// Complete is recognised by completed_by even after later writes
		// (the sweeper's reschedule) replaced last_write.
		{"complete", after(job.Queued, domain.StageLLM, job.StageRecord{Status: job.StageDone, CompletedBy: lease.Owner}, "sweep/9/x"),
			after(job.Queued, domain.StageLLM, job.StageRecord{Status: job.StageDone, CompletedBy: "msg-2#1"}, "msg-2#1/complete"),
			func(st *Store) error {
				_, err := st.Complete(ctx, "j1", domain.StageFetch, lease, job.Result{}, time.Minute)
				return err
			}, job.ErrLeaseLost},
		{"retry", after(job.RetryWait, domain.StageFetch, job.StageRecord{Status: job.StageRetryWait}, lease.Owner+"/retry"),
			after(job.RetryWait, domain.StageFetch, job.StageRecord{Status: job.StageRetryWait}, "msg-2#1/retry"),
			func(st *Store) error {
				_, err := st.Retry(ctx, "j1", domain.StageFetch, lease, fi, time.Second)
				return err
			}, job.ErrLeaseLost},
		{"dead letter", after(job.Failed, domain.StageFetch, job.StageRecord{Status: job.StageFailed, DeadLetterID: "dl-1"}, "dead_letter/dl-1"),
			after(job.Failed, domain.StageFetch, job.StageRecord{Status: job.StageFailed, DeadLetterID: "dl-0"}, "dead_letter/dl-0"),
			func(st *Store) error {
				_, err := st.DeadLetter(ctx, "j1", domain.StageFetch, lease, fi, "dl-1", "{}")
				return err
			}, job.ErrLeaseLost},
		{"replay", after(job.Queued, domain.StageFetch, job.StageRecord{Status: job.StagePending, ReplayedFrom: "dl-1"}, "replay/dl-1"),
			after(job.Queued, domain.StageFetch, job.StageRecord{Status: job.StagePending, ReplayedFrom: "dl-0"}, "replay/dl-0"),
			func(st *Store) error {
				_, err := st.Replay(ctx, "j1", domain.StageFetch, "dl-1", failure.NotFound, t0, time.Minute)
				return err
			}, job.ErrNotReplayable},
		{"restart", after(job.Queued, domain.StageFetch, job.StageRecord{Status: job.StagePending}, "restart/req-1"),
			after(job.Queued, domain.StageFetch, job.StageRecord{Status: job.StagePending}, "restart/req-0"),
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

// Every write applies exactly in the states job.Transitions lists for its
// operation and moves the job to the operation's target; in every other
// state it is refused and changes nothing — judged by the conditions
// themselves, evaluated by the in-process table.
func TestWritesFollowTransitions(t *testing.T) {
	ctx := context.Background()
	fi := job.FailureInfo{Class: failure.Upstream5xx}
	running := job.StageRecord{Status: job.StageRunning, Owner: lease.Owner, LeaseExpiresAt: lease.Expires()}
	tests := []struct {
		op    job.Op
		stage domain.Stage
		rec   job.StageRecord // the stage record a call of op needs
		call  func(st *Store) error
	}{
		{job.OpClaim, domain.StageFetch, job.StageRecord{Status: job.StagePending},
			func(st *Store) error { _, err := st.Claim(ctx, "j1", domain.StageFetch, lease, 5); return err }},
		{job.OpRenew, domain.StageFetch, running, func(st *Store) error { return st.Renew(ctx, "j1", domain.StageFetch, lease) }},
		{job.OpComplete, domain.StageFetch, running, func(st *Store) error {
			_, err := st.Complete(ctx, "j1", domain.StageFetch, lease, job.Result{}, time.Minute)
			return err
		}},
		{job.OpFinish, domain.StageNotify, running, func(st *Store) error {
			_, err := st.Complete(ctx, "j1", domain.StageNotify, lease, job.Result{}, time.Minute)
			return err
		}},
		{job.OpRetry, domain.StageFetch, running, func(st *Store) error {
			_, err := st.Retry(ctx, "j1", domain.StageFetch, lease, fi, time.Second)
			return err
		}},
		{job.OpDeadLetter, domain.StageFetch, running, func(st *Store) error {
			_, err := st.DeadLetter(ctx, "j1", domain.StageFetch, lease, fi, "dl", "{}")
			return err
		}},
		{job.OpReplay, domain.StageFetch, job.StageRecord{Status: job.StageFailed, DeadLetterID: "dl"}, func(st *Store) error {
			_, err := st.Replay(ctx, "j1", domain.StageFetch, "dl", fi.Class, t0, time.Minute)
			return err
		}},
		{job.OpRestart, domain.StageFetch, job.StageRecord{Status: job.StageFailed}, func(st *Store) error {
			_, err := st.Restart(ctx, "j1", "ops", "r1", t0, time.Minute)
			return err
		}},
	}
	for _, tt := range tests {
		for _, state := range job.States {
			db := dynamotest.New()
			rec := tt.rec
			it, err := attributevalue.MarshalMap(&jobItem{Job: job.Job{ID: "j1", State: state, Stage: tt.stage, Seq: 1, CreatedAt: job.FormatTime(t0), History: []job.Event{{Type: job.EventCreated}},
				Stages: map[domain.Stage]*job.StageRecord{tt.stage: &rec}}})
			if err != nil {
				t.Fatal(err)
			}
			it["pk"], it["sk"] = s(jobPK("j1")), s(skJob)
			if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(dynamotest.Table), Item: it}); err != nil {
				t.Fatal(err)
			}
			st := New(db, dynamotest.Table)
			err = tt.call(st)
			allowed := slices.Contains(job.Expect(tt.op), state)
			if allowed != (err == nil) {
				t.Errorf("%s from %s: %v, want allowed=%v", tt.op, state, err, allowed)
				continue
			}
			j, _ := st.Get(ctx, "j1")
			if allowed && tt.op != job.OpRenew && j.State != job.Target(tt.op) {
				t.Errorf("%s from %s: job %s, want %s", tt.op, state, j.State, job.Target(tt.op))
			}
			if !allowed && (j.State != state || j.Seq != 1) {
				t.Errorf("%s from %s refused but the job changed: %s seq %d", tt.op, state, j.State, j.Seq)
			}
		}
	}
}
