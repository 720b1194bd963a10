package outbox

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/criticizer/criticizer/shared/store"
)

// scanTable serves a table scan two rows a page, keyed by pk/sk as
// DynamoDB's LastEvaluatedKey is, and keeps the pass row and the rows given
// their doubt pair.
type scanTable struct {
	store.API
	rows    []Suspect
	scans   int
	pass    map[string]types.AttributeValue
	indexed []int64
}

func (f *scanTable) Scan(_ context.Context, in *dynamodb.ScanInput, _ ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	f.scans++
	start := 0
	if k := in.ExclusiveStartKey; k != nil {
		for i, r := range f.rows {
			p, s := r.Ref().keys()
			if p == k["pk"].(*types.AttributeValueMemberS).Value && s == k["sk"].(*types.AttributeValueMemberS).Value {
				start = i + 1
			}
		}
	}
	out := &dynamodb.ScanOutput{}
	for _, r := range f.rows[start:min(start+2, len(f.rows))] {
		item, _ := attributevalue.MarshalMap(r)
		p, s := r.Ref().keys()
		item["pk"], item["sk"] = sv(p), sv(s)
		out.Items = append(out.Items, item)
		out.LastEvaluatedKey = map[string]types.AttributeValue{"pk": sv(p), "sk": sv(s)}
	}
	if start+2 >= len(f.rows) {
		out.LastEvaluatedKey = nil
	}
	return out, nil
}

func (f *scanTable) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return &dynamodb.GetItemOutput{Item: f.pass}, nil
}

func (f *scanTable) UpdateItem(_ context.Context, in *dynamodb.UpdateItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	if in.Key["pk"].(*types.AttributeValueMemberS).Value == "OUTBOX#PASS" {
		f.pass = map[string]types.AttributeValue{"cursor": in.ExpressionAttributeValues[":c"], "done": in.ExpressionAttributeValues[":d"]}
		return &dynamodb.UpdateItemOutput{}, nil
	}
	var cl int64
	fmt.Sscanf(in.Key["pk"].(*types.AttributeValueMemberS).Value, "OUTBOX#%d#", &cl)
	if aws.ToString(in.ConditionExpression) == "" || in.ExpressionAttributeValues[":doubt"] == nil {
		panic("indexing write without its condition or doubt pair")
	}
	f.indexed = append(f.indexed, cl)
	return &dynamodb.UpdateItemOutput{}, nil
}

// The one-off indexing of older rows stops at its deadline (after at least
// one page), saves where it stopped, and the next run continues there: no
// row is indexed twice, none is skipped, and once it has finished a run is
// one read, no scan.
func TestIndexExistingResumesWhereItStopped(t *testing.T) {
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	f := &scanTable{}
	for i := range 5 {
		f.rows = append(f.rows, suspectRow(int64(i+1), Sending, "2026-11-21T00:00:00.000Z"))
	}
	o := New(f, "jobs")
	past := now.Add(-time.Second) // every run stops after its first page
	for run, want := range []IndexReport{{Read: 2, Indexed: 2}, {Read: 2, Indexed: 2}, {Read: 1, Indexed: 1, Done: true}, {Done: true}} {
		rep, err := o.IndexExisting(context.Background(), now.Add(-time.Hour), past, now)
		if err != nil {
			t.Fatal(err)
		}
		if rep != want {
			t.Errorf("run %d: %+v, want %+v", run, rep, want)
		}
	}
	if fmt.Sprint(f.indexed) != "[1 2 3 4 5]" || f.scans != 3 {
		t.Errorf("indexed %v in %d scan pages, want [1 2 3 4 5] in 3", f.indexed, f.scans)
	}
}
