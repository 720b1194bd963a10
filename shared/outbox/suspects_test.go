package outbox

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// pagedScan serves rows a page at a time, two rows a page.
type pagedScan struct {
	API
	rows  []Suspect
	pages int
}

func (p *pagedScan) Scan(_ context.Context, in *dynamodb.ScanInput, _ ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	start := 0
	if in.ExclusiveStartKey != nil {
		start, _ = strconv.Atoi(in.ExclusiveStartKey["n"].(*types.AttributeValueMemberN).Value)
	}
	p.pages++
	out := &dynamodb.ScanOutput{}
	for _, r := range p.rows[start:min(start+2, len(p.rows))] {
		item, _ := attributevalue.MarshalMap(r)
		out.Items = append(out.Items, item)
	}
	if start+2 < len(p.rows) {
		out.LastEvaluatedKey = map[string]types.AttributeValue{"n": &types.AttributeValueMemberN{Value: strconv.Itoa(start + 2)}}
	}
	return out, nil
}

// A pass's places go to new suspects first: stuck sends, then sends to
// verify, then rows already reconciling, each oldest first, whatever page
// the scan found them on. A backlog left reconciling for an operator
// cannot starve them.
func TestSuspectsRankedBeforeTheLimit(t *testing.T) {
	row := func(cl int64, s Status, at string) Suspect {
		r := Suspect{Row: Row{Changelist: cl, Status: s}}
		switch s {
		case Sending:
			r.SendStartedAt = at
		case Sent:
			r.NotifiedAt = at
		default:
			r.Since = at
		}
		return r
	}
	api := &pagedScan{rows: []Suspect{
		row(1, Reconciling, "2026-11-01T00:00:00.000Z"), row(2, Reconciling, "2026-11-02T00:00:00.000Z"),
		row(3, Reconciling, "2026-11-03T00:00:00.000Z"), row(4, Sent, "2026-11-20T00:00:00.000Z"),
		row(5, Sending, "2026-11-21T00:00:00.000Z"), row(6, Sending, "2026-11-19T00:00:00.000Z"),
	}}
	o := New(api, "jobs")
	for _, tt := range []struct {
		limit int
		want  []int64
	}{
		{3, []int64{6, 5, 4}},
		{4, []int64{6, 5, 4, 1}},
		{0, []int64{6, 5, 4, 1, 2, 3}},
	} {
		api.pages = 0
		got, err := o.Suspects(context.Background(), time.Now(), time.Now().Add(-time.Hour), time.Now(), true, tt.limit)
		if err != nil {
			t.Fatal(err)
		}
		var cls []int64
		for _, s := range got {
			cls = append(cls, s.Changelist)
		}
		if len(cls) != len(tt.want) || api.pages != 3 {
			t.Fatalf("limit %d: %v after %d pages, want %v after every page (3)", tt.limit, cls, api.pages, tt.want)
		}
		for i := range cls {
			if cls[i] != tt.want[i] {
				t.Errorf("limit %d: %v, want %v", tt.limit, cls, tt.want)
				break
			}
		}
	}
}
