package outbox

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/store"
)

// writes records every UpdateItem and applies none.
type writes struct {
	store.API
	got []*dynamodb.UpdateItemInput
}

func (w *writes) UpdateItem(_ context.Context, in *dynamodb.UpdateItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	w.got = append(w.got, in)
	return &dynamodb.UpdateItemOutput{}, nil
}

var statusIn = regexp.MustCompile(`#s = (:\w+)`)

// Every write that changes a row's state keeps the sparse doubt index in
// step in the same write: a row entering sending, sent (unverified) or
// reconciling carries doubt = that state since the write; a row leaving
// them (pending, failed, verified) loses the pair. A row in doubt without
// the pair would never be reconciled; a settled row with it would be read
// by every pass.
func TestEveryStateWriteKeepsTheDoubtIndex(t *testing.T) {
	ctx := context.Background()
	k := delivery.Key{Changelist: 7, Recipient: "a@x.org", ReviewVersion: 1}
	ref := Email(k)
	for _, tt := range []struct {
		name  string
		write func(o *Outbox) error
		want  string // the doubt state set; "" removed
	}{
		{"begin", func(o *Outbox) error { _, err := o.Begin(ctx, Email(k), "j", t0); return err }, "sending"},
		{"mark sent", func(o *Outbox) error { return o.MarkSent(ctx, Email(k), "nid", t0) }, "sent"},
		{"release, transient", func(o *Outbox) error { return o.Release(ctx, Email(k), "tok", failure.RateLimited, "m", false, t0) }, ""},
		{"release, permanent", func(o *Outbox) error { return o.Release(ctx, Email(k), "tok", failure.NotFound, "m", true, t0) }, ""},
		{"reset", func(o *Outbox) error { return o.Reset(ctx, Email(k), "tok", t0) }, ""},
		{"requeue", func(o *Outbox) error { return o.Requeue(ctx, Email(k), t0) }, ""},
		{"confirm", func(o *Outbox) error { return o.Confirm(ctx, Email(k), "checked", t0) }, "sent"},
		{"mark reconciling", func(o *Outbox) error { _, err := o.MarkReconciling(ctx, ref, Sending, "r", t0); return err }, "reconciling"},
		{"verified", func(o *Outbox) error { return o.Verified(ctx, ref, t0) }, ""},
		{"backfill", func(o *Outbox) error { _, err := o.Backfill(ctx, ref, "e", t0); return err }, ""},
		{"requeue reconciled", func(o *Outbox) error { _, err := o.RequeueReconciled(ctx, ref, t0); return err }, ""},
		{"resolve, not delivered", func(o *Outbox) error { return o.Resolve(ctx, ref, false, "n", t0) }, ""},
		{"resolve, delivered", func(o *Outbox) error { return o.Resolve(ctx, ref, true, "n", t0) }, ""},
		// A sent digest is verified by nothing (the reconciler leaves it
		// to the digest's runs): it leaves the index once sent.
		{"digest mark sent", func(o *Outbox) error { return o.MarkSent(ctx, DigestItem("2026-W48", "0a1b"), "nid", t0) }, ""},
		{"digest confirm", func(o *Outbox) error { return o.Confirm(ctx, DigestItem("2026-W48", "0a1b"), "checked", t0) }, ""},
		{"comment mark sent", func(o *Outbox) error {
			return o.MarkSent(ctx, Item{Channel: ChannelSwarmComments, Thread: 885, ID: "summary/v1"}, "41", t0)
		}, "sent"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			api := &writes{}
			if err := tt.write(New(api, "jobs")); err != nil {
				t.Fatal(err)
			}
			if len(api.got) != 1 {
				t.Fatalf("%d writes, want 1", len(api.got))
			}
			in := api.got[0]
			set, removed, _ := strings.Cut(*in.UpdateExpression, " REMOVE ")
			if tt.want == "" {
				if !strings.Contains(removed, "doubt, doubt_at") || strings.Contains(set, "doubt =") {
					t.Errorf("%q: want the doubt pair removed", *in.UpdateExpression)
				}
				return
			}
			v, _ := in.ExpressionAttributeValues[":doubt"].(*types.AttributeValueMemberS)
			at, _ := in.ExpressionAttributeValues[":doubtat"].(*types.AttributeValueMemberS)
			if !strings.Contains(set, "doubt = :doubt, doubt_at = :doubtat") || v == nil || v.Value != tt.want || at == nil || at.Value != "2026-11-22T12:00:00.000Z" {
				t.Errorf("%q %v: want doubt = %s since the write", *in.UpdateExpression, in.ExpressionAttributeValues, tt.want)
			}
			if m := statusIn.FindStringSubmatch(set); m != nil {
				if s := in.ExpressionAttributeValues[m[1]].(*types.AttributeValueMemberS).Value; s != tt.want {
					t.Errorf("the write sets status %s but doubt %s", s, tt.want)
				}
			}
		})
	}
}
