package outbox

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/store"
)

// pagedIndex serves Queries of the doubt index a page (two rows) at a time,
// with the key conditions Suspects uses, as DynamoDB evaluates them: only
// rows carrying the doubt pair are in the index at all.
type pagedIndex struct {
	store.API
	rows  []Suspect
	pages int
	read  int // items returned, the unit DynamoDB bills a Query by
}

func (p *pagedIndex) Query(_ context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	if aws.ToString(in.IndexName) != DoubtIndex {
		panic("query of " + aws.ToString(in.IndexName))
	}
	val := func(k string) string {
		v, _ := in.ExpressionAttributeValues[k].(*types.AttributeValueMemberS)
		if v == nil {
			return ""
		}
		return v.Value
	}
	cond := aws.ToString(in.KeyConditionExpression)
	var match []Suspect
	for _, r := range p.rows {
		state, at := string(r.Status), r.since()
		if r.VerifiedAt != "" || r.Status == Pending || r.Status == Failed {
			continue // settled: not in the sparse index
		}
		if state != val(":state") {
			continue
		}
		switch {
		case strings.Contains(cond, "BETWEEN"):
			if at < val(":at1") || at > val(":at2") {
				continue
			}
		case strings.Contains(cond, "<"):
			if at >= val(":at1") {
				continue
			}
		}
		match = append(match, r)
	}
	start := 0
	if in.ExclusiveStartKey != nil {
		start, _ = strconv.Atoi(in.ExclusiveStartKey["n"].(*types.AttributeValueMemberN).Value)
	}
	p.pages++
	out := &dynamodb.QueryOutput{}
	for _, r := range match[start:min(start+2, len(match))] {
		item, _ := attributevalue.MarshalMap(r)
		out.Items = append(out.Items, item)
		p.read++
	}
	if start+2 < len(match) {
		out.LastEvaluatedKey = map[string]types.AttributeValue{"n": &types.AttributeValueMemberN{Value: strconv.Itoa(start + 2)}}
	}
	return out, nil
}

func suspectRow(cl int64, s Status, at string) Suspect {
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

// A pass's places go to new suspects first: stuck sends, then sends to
// verify, then rows already reconciling, each oldest first, whatever page
// the index returned them on. A backlog left reconciling for an operator
// cannot starve them.
func TestSuspectsRankedBeforeTheLimit(t *testing.T) {
	api := &pagedIndex{rows: []Suspect{
		suspectRow(1, Reconciling, "2026-11-01T00:00:00.000Z"), suspectRow(2, Reconciling, "2026-11-02T00:00:00.000Z"),
		suspectRow(3, Reconciling, "2026-11-03T00:00:00.000Z"), suspectRow(4, Sent, "2026-11-20T00:00:00.000Z"),
		suspectRow(5, Sending, "2026-11-21T00:00:00.000Z"), suspectRow(6, Sending, "2026-11-19T00:00:00.000Z"),
	}}
	o := New(api, "jobs")
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		limit int
		want  []int64
	}{
		{3, []int64{6, 5, 4}},
		{4, []int64{6, 5, 4, 1}},
		{0, []int64{6, 5, 4, 1, 2, 3}},
	} {
		got, err := o.Suspects(context.Background(), now, now.Add(-7*24*time.Hour), now, true, tt.limit)
		if err != nil {
			t.Fatal(err)
		}
		var cls []int64
		for _, s := range got {
			cls = append(cls, s.Changelist)
		}
		if len(cls) != len(tt.want) {
			t.Fatalf("limit %d: %v, want %v", tt.limit, cls, tt.want)
		}
		for i := range cls {
			if cls[i] != tt.want[i] {
				t.Errorf("limit %d: %v, want %v", tt.limit, cls, tt.want)
				break
			}
		}
	}
}

// A pass reads the rows in doubt, not the delivery history: ten thousand
// settled rows (sent and verified, pending, failed) and rows outside the
// windows cost nothing; the suspects are exactly the rows past them.
func TestSuspectsReadOnlyRowsInDoubt(t *testing.T) {
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) string { return job.FormatTime(now.Add(-d)) }
	var rows []Suspect
	for i := range 10000 {
		r := suspectRow(int64(1000+i), Sent, at(30*24*time.Hour))
		r.VerifiedAt = at(29 * 24 * time.Hour)
		if i%3 == 0 {
			r = suspectRow(int64(1000+i), Failed, "")
		}
		rows = append(rows, r)
	}
	rows = append(rows,
		suspectRow(1, Sending, at(time.Hour)),        // stuck
		suspectRow(2, Sending, at(time.Second)),      // inside the window
		suspectRow(3, Sent, at(2*time.Hour)),         // to verify
		suspectRow(4, Sent, at(10*24*time.Hour)),     // older than the lookback
		suspectRow(5, Reconciling, at(48*time.Hour))) // for an operator
	api := &pagedIndex{rows: rows}
	stuck := now.Add(-time.Minute)
	got, err := New(api, "jobs").Suspects(context.Background(), stuck, stuck.Add(-7*24*time.Hour), stuck, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	var cls []int64
	for _, s := range got {
		cls = append(cls, s.Changelist)
	}
	if len(cls) != 3 || cls[0] != 1 || cls[1] != 3 || cls[2] != 5 {
		t.Errorf("suspects %v, want [1 3 5]", cls)
	}
	if api.read > 3 {
		t.Errorf("the pass read %d items for 3 suspects in a table of %d rows", api.read, len(rows))
	}
}
