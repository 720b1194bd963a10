package outbox

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/criticizer/criticizer/shared/failure"
)

// Rule OB-8: every write that changes a delivery row appends an event —
// when, who, which write, from which status to which — in the same
// conditional write, so the history is exactly the row's changes.
func TestRowWritesRecordTheirEvent(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		call func(o *Outbox) error
		want RowEvent
	}{
		{"begin (create and mark sending)", func(o *Outbox) error { _, err := o.Begin(ctx, Email(k), "j1", t0); return err },
			RowEvent{Op: "begin send", From: "new|pending", To: "sending"}},
		{"mark sent", func(o *Outbox) error { return o.MarkSent(ctx, Email(k), "<id@x>", t0) }, RowEvent{Op: "mark sent", From: "unsent", To: "sent"}},
		{"release, permanent", func(o *Outbox) error { return o.Release(ctx, Email(k), "tok", failure.NotFound, "550", true, t0) },
			RowEvent{Op: "release outbox row", From: "sending", To: "failed"}},
		{"reconciler parks a row", func(o *Outbox) error { _, err := o.MarkReconciling(ctx, Email(k), Sent, "no evidence", t0); return err },
			RowEvent{Op: "mark outbox row reconciling", From: "sent", To: "reconciling"}},
		{"operator resolves: not delivered", func(o *Outbox) error { return o.Resolve(ctx, Email(k), false, "checked SES", t0) },
			RowEvent{Op: "resolve outbox row", From: "reconciling", To: "pending"}},
	} {
		api := &oneAnswerAPI{}
		if err := tt.call(New(api, "jobs").WithActor("operator ann")); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		in := api.last
		if !strings.Contains(*in.UpdateExpression, "events = list_append(if_not_exists(events, :noev), :rowev)") {
			t.Errorf("%s: update %q appends no event", tt.name, *in.UpdateExpression)
			continue
		}
		var evs []RowEvent
		if err := attributevalue.Unmarshal(in.ExpressionAttributeValues[":rowev"], &evs); err != nil || len(evs) != 1 {
			t.Fatalf("%s: event %v (%v)", tt.name, in.ExpressionAttributeValues[":rowev"], err)
		}
		want := tt.want
		want.At, want.Actor = "2026-11-22T12:00:00.000Z", "operator ann"
		if evs[0] != want {
			t.Errorf("%s: event %+v, want %+v", tt.name, evs[0], want)
		}
	}
}
