package outbox

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/criticizer/criticizer/shared/store"
)

// scrubAPI records the scrub writes.
type scrubAPI struct {
	store.API
	updates []*dynamodb.UpdateItemInput
}

func (s *scrubAPI) UpdateItem(_ context.Context, in *dynamodb.UpdateItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	s.updates = append(s.updates, in)
	return &dynamodb.UpdateItemOutput{}, nil
}

// Rule ID-3: past the data retention a delivery row loses its data fields
// (error text, event history, reconciliation note) and keeps what the
// uniqueness promise needs: its key, status and notified_at. The scrub runs
// on the retention check's scan: it wants only outbox rows created before
// now − retention and not scrubbed yet.
func TestScrubDataKeepsTheUniquenessPart(t *testing.T) {
	day := 24 * time.Hour
	api := &scrubAPI{}
	s := New(api, "jobs").Scrubber(t0.Add(-30*day), t0)
	row := func(r Row, scrubbed bool) map[string]types.AttributeValue {
		item, _ := attributevalue.MarshalMap(r)
		p, k := r.Ref().keys()
		item["pk"], item["sk"] = sv(p), sv(k)
		if scrubbed {
			item["scrubbed_at"] = sv("x")
		}
		return item
	}
	old := Row{Changelist: 42, ReviewVersion: 3, Recipient: "alice@example.com", Status: Sent, NotifiedAt: "x", LastError: "x",
		Events: []RowEvent{{Actor: "operator ann"}}, CreatedAt: "2026-10-01T00:00:00.000Z"}
	recent := old
	recent.CreatedAt = "2026-11-20T00:00:00.000Z"
	for _, tt := range []struct {
		item map[string]types.AttributeValue
		want bool
	}{{row(old, false), true}, {row(recent, false), false}, {row(old, true), false},
		{map[string]types.AttributeValue{"pk": sv("JOB#1"), "created_at": sv("2026-01-01T00:00:00.000Z")}, false}} {
		if got := s.Match(tt.item); got != tt.want {
			t.Errorf("match %v = %v, want %v", tt.item["pk"], got, tt.want)
		}
	}
	if !strings.Contains(s.Filter, "created_at < :scrubcut") || !strings.Contains(s.Filter, "begins_with(pk, :outbox)") ||
		s.Values[":scrubcut"].(*types.AttributeValueMemberS).Value != "2026-10-23T12:00:00.000Z" {
		t.Errorf("filter %q %v: want outbox rows created before now − retention", s.Filter, s.Values)
	}
	if err := s.Visit(context.Background(), row(old, false)); err != nil || len(api.updates) != 1 {
		t.Fatalf("visit: %v, %d writes", err, len(api.updates))
	}
	up := api.updates[0]
	if sk := up.Key["sk"].(*types.AttributeValueMemberS).Value; sk != "RCPT#alice@example.com" {
		t.Errorf("scrubbed row %s", sk)
	}
	expr := *up.UpdateExpression
	_, removed, _ := strings.Cut(expr, " REMOVE ")
	for _, f := range []string{"last_error", "events", "reconcile_reason"} {
		if !strings.Contains(removed, f) {
			t.Errorf("scrub %q keeps %s", expr, f)
		}
	}
	for _, f := range []string{"status", "notified_at", "notification_id", "expires_at"} {
		if strings.Contains(expr, f) {
			t.Errorf("scrub %q touches %s: the uniqueness part must stay", expr, f)
		}
	}
}
