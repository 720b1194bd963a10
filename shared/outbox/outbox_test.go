package outbox

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/store"
)

// oneAnswerAPI answers UpdateItem with a scripted outcome, recording the
// request. old builds the row DynamoDB returns with a failed condition from
// the request (so a test can play "this very write was applied").
type oneAnswerAPI struct {
	store.API
	err  error
	old  func(in *dynamodb.UpdateItemInput) *Row
	last *dynamodb.UpdateItemInput
}

func (f *oneAnswerAPI) UpdateItem(_ context.Context, in *dynamodb.UpdateItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	f.last = in
	if f.err != nil {
		return nil, f.err
	}
	if f.old != nil {
		item, _ := attributevalue.MarshalMap(f.old(in))
		return nil, &types.ConditionalCheckFailedException{Message: new(string), Item: item}
	}
	out := &dynamodb.UpdateItemOutput{}
	out.Attributes, _ = attributevalue.MarshalMap(Row{Status: Sending})
	return out, nil
}

func tokenOf(in *dynamodb.UpdateItemInput, name string) string {
	return in.ExpressionAttributeValues[name].(*types.AttributeValueMemberS).Value
}

var (
	t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	k  = delivery.Key{Changelist: 42, Recipient: " Alice@Example.COM", ReviewVersion: 3}
)

func TestBegin(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		old   func(in *dynamodb.UpdateItemInput) *Row
		want  error
		class failure.Class
	}{
		{name: "new row: created and marked sending in one write"},
		{name: "answer lost, the retry meets its own write: success",
			old: func(in *dynamodb.UpdateItemInput) *Row { return &Row{Status: Sending, LastWrite: tokenOf(in, ":tok")} }},
		{name: "notified: never again", old: func(*dynamodb.UpdateItemInput) *Row { return &Row{Status: Sent, NotifiedAt: "x"} }, want: ErrAlreadySent},
		{name: "another send in flight: reconcile first", old: func(*dynamodb.UpdateItemInput) *Row { return &Row{Status: Sending, LastWrite: "other"} }, want: ErrInFlight},
		{name: "failed for good", old: func(*dynamodb.UpdateItemInput) *Row { return &Row{Status: Failed} }, class: failure.NotFound, want: ErrFailed},
		{name: "reconciling: no send until settled", old: func(*dynamodb.UpdateItemInput) *Row { return &Row{Status: Reconciling} }, class: failure.Conflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := &oneAnswerAPI{old: tt.old}
			s, err := New(api, "jobs").WithUniquenessRetention(24*time.Hour).Begin(ctx, Email(k), "j1", t0)
			if tt.class != "" && failure.Classify(err) != tt.class {
				t.Fatalf("err %v, want class %s", err, tt.class)
			}
			switch {
			case tt.want != nil:
				if !errors.Is(err, tt.want) {
					t.Fatalf("err %v, want %v", err, tt.want)
				}
			case tt.class != "":
			case err != nil || s == nil || s.Token == "":
				t.Fatalf("send %+v, err %v: want a send with its token", s, err)
			}
			in := api.last
			if sk := in.Key["sk"].(*types.AttributeValueMemberS).Value; sk != "RCPT#alice@example.com" {
				t.Errorf("row key %s: want the canonical recipient", sk)
			}
			if !strings.HasPrefix(*in.ConditionExpression, "attribute_not_exists(pk) OR") || !strings.Contains(*in.UpdateExpression, "expires_at = if_not_exists(expires_at, :exp)") {
				t.Errorf("begin %q / %q: want create-or-mark in one write with a TTL", *in.ConditionExpression, *in.UpdateExpression)
			}
			if exp := in.ExpressionAttributeValues[":exp"].(*types.AttributeValueMemberN).Value; exp != "1795435200" {
				t.Errorf("expires_at %s, want now + retention", exp)
			}
		})
	}
}

func TestReleaseAndResetSettleOnlyTheirOwnSend(t *testing.T) {
	ctx := context.Background()
	ob := func(old func(in *dynamodb.UpdateItemInput) *Row) (*Outbox, *oneAnswerAPI) {
		api := &oneAnswerAPI{old: old}
		return New(api, "jobs"), api
	}
	o, api := ob(func(*dynamodb.UpdateItemInput) *Row { return &Row{Status: Sending, SendToken: "later"} })
	if err := o.Release(ctx, Email(k), "mine", failure.Upstream5xx, "451", false, t0); !errors.Is(err, ErrConflict) {
		t.Errorf("releasing another attempt's send: %v, want ErrConflict", err)
	}
	if !strings.Contains(*api.last.ConditionExpression, "send_token = :stok") {
		t.Errorf("release condition %q does not name the send", *api.last.ConditionExpression)
	}
	o, _ = ob(func(in *dynamodb.UpdateItemInput) *Row {
		return &Row{Status: Pending, SendToken: "mine", LastWrite: tokenOf(in, ":wtoken")}
	})
	if err := o.Release(ctx, Email(k), "mine", failure.Upstream5xx, "451", false, t0); err != nil {
		t.Errorf("a release whose answer was lost: %v, want success", err)
	}
	o, _ = ob(func(in *dynamodb.UpdateItemInput) *Row {
		return &Row{Status: Pending, LastWrite: tokenOf(in, ":wtoken")}
	})
	if err := o.Reset(ctx, Email(k), "mine", t0); err != nil {
		t.Errorf("a reset whose answer was lost: %v, want success", err)
	}
	o, _ = ob(func(*dynamodb.UpdateItemInput) *Row { return &Row{Status: Sent, NotifiedAt: "x"} })
	if err := o.MarkSent(ctx, Email(k), "<id>", t0); err != nil {
		t.Errorf("marking a row already marked: %v, want success", err)
	}
}

func TestThrottlingIsRateLimited(t *testing.T) {
	api := &oneAnswerAPI{err: &smithy.GenericAPIError{Code: "ProvisionedThroughputExceededException"}}
	_, err := New(api, "jobs").Begin(context.Background(), Email(k), "j1", t0)
	if failure.Classify(err) != failure.RateLimited {
		t.Fatalf("%v: want RATE_LIMITED, as the store classifies it", err)
	}
}

// TestReconcilerWritesKnowTheirOwnLostAnswer: a reconciler's write applied
// whose answer was lost meets a failed condition on the SDK's retry; the
// row's last_write names the write, so it is reported done (the violation
// counted, the repair made), while a row another writer moved is not ours.
func TestReconcilerWritesKnowTheirOwnLostAnswer(t *testing.T) {
	ref := Item{Channel: ChannelSwarmComments, Thread: 7, ID: "finding/abc"}
	writes := map[string]func(o *Outbox) (bool, error){
		"mark reconciling": func(o *Outbox) (bool, error) {
			return o.MarkReconciling(context.Background(), ref, Sent, "no evidence", t0)
		},
		"backfill": func(o *Outbox) (bool, error) { return o.Backfill(context.Background(), ref, "1234", t0) },
		"requeue":  func(o *Outbox) (bool, error) { return o.RequeueReconciled(context.Background(), ref, t0) },
	}
	for name, write := range writes {
		for _, tc := range []struct {
			own  bool
			want bool
		}{{own: true, want: true}, {own: false, want: false}} {
			api := &oneAnswerAPI{old: func(in *dynamodb.UpdateItemInput) *Row {
				r := &Row{Status: Reconciling, LastWrite: "reconcile/someone-else"}
				if tc.own {
					r.LastWrite = tokenOf(in, ":wtoken")
				}
				return r
			}}
			ok, err := write(New(api, "t"))
			if err != nil || ok != tc.want {
				t.Errorf("%s, condition failed on a row last written by this write=%v: ok %v (%v), want %v", name, tc.own, ok, err, tc.want)
			}
		}
	}
}
