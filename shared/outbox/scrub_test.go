package outbox

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// scrubAPI serves one scan page of rows and records the scrub writes.
type scrubAPI struct {
	API
	rows    []Row
	scan    *dynamodb.ScanInput
	updates []*dynamodb.UpdateItemInput
}

func (s *scrubAPI) Scan(_ context.Context, in *dynamodb.ScanInput, _ ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	s.scan = in
	out := &dynamodb.ScanOutput{}
	for _, r := range s.rows {
		item, _ := attributevalue.MarshalMap(r)
		out.Items = append(out.Items, item)
	}
	return out, nil
}

func (s *scrubAPI) UpdateItem(_ context.Context, in *dynamodb.UpdateItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	s.updates = append(s.updates, in)
	return &dynamodb.UpdateItemOutput{}, nil
}

// Rule ID-3: past the data retention a delivery row loses its data fields
// (error text, event history, reconciliation note) and keeps what the
// uniqueness promise needs: its key, status and notified_at.
func TestScrubDataKeepsTheUniquenessPart(t *testing.T) {
	day := 24 * time.Hour
	api := &scrubAPI{rows: []Row{{Changelist: 42, ReviewVersion: 3, Recipient: "alice@example.com", Status: Sent, NotifiedAt: "x", LastError: "x",
		Events: []RowEvent{{Actor: "operator ann"}}}}}
	n, err := New(api, "jobs").ScrubData(context.Background(), t0.Add(-30*day), t0, 100)
	if err != nil || n != 1 || len(api.updates) != 1 {
		t.Fatalf("scrubbed %d (%v), %d writes", n, err, len(api.updates))
	}
	if f := *api.scan.FilterExpression; !strings.Contains(f, "created_at < :cutoff") || !strings.Contains(f, "begins_with(pk, :outbox)") ||
		api.scan.ExpressionAttributeValues[":cutoff"].(*types.AttributeValueMemberS).Value != "2026-10-23T12:00:00.000Z" {
		t.Errorf("scan %q %v: want outbox rows created before now − retention", f, api.scan.ExpressionAttributeValues)
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
