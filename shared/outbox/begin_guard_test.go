package outbox

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// admits evaluates Begin's condition on an existing row the way DynamoDB
// would. It understands the forms a row condition is written in — clauses
// joined by AND: `#s = :v`, `#s <> :v`, `#s IN (:a, :b)`,
// attribute_exists(a), attribute_not_exists(a) — and fails the test on
// anything else, so a condition rewritten into another shape is looked at.
func admits(t *testing.T, in *dynamodb.UpdateItemInput, row map[string]string) bool {
	t.Helper()
	cond := *in.ConditionExpression
	const create = "attribute_not_exists(pk) OR ("
	if strings.HasPrefix(cond, create) && strings.HasSuffix(cond, ")") {
		cond = cond[len(create) : len(cond)-1] // the row exists: the left side is false
	}
	name := func(s string) string {
		if n, ok := in.ExpressionAttributeNames[s]; ok {
			return n
		}
		return s
	}
	val := func(s string) string { return in.ExpressionAttributeValues[s].(*types.AttributeValueMemberS).Value }
	for _, c := range strings.Split(cond, " AND ") {
		c = strings.TrimSpace(c)
		var ok bool
		switch {
		case strings.HasPrefix(c, "attribute_exists(") && strings.HasSuffix(c, ")"):
			_, ok = row[name(c[len("attribute_exists("):len(c)-1])]
		case strings.HasPrefix(c, "attribute_not_exists(") && strings.HasSuffix(c, ")"):
			_, has := row[name(c[len("attribute_not_exists("):len(c)-1])]
			ok = !has
		case strings.Contains(c, " <> "):
			p := strings.SplitN(c, " <> ", 2)
			ok = row[name(p[0])] != val(p[1])
		case strings.Contains(c, " IN ("):
			p := strings.SplitN(strings.TrimSuffix(c, ")"), " IN (", 2)
			for _, v := range strings.Split(p[1], ",") {
				ok = ok || row[name(p[0])] == val(strings.TrimSpace(v))
			}
		case strings.Contains(c, " = "):
			p := strings.SplitN(c, " = ", 2)
			ok = row[name(p[0])] == val(p[1])
		default:
			t.Fatalf("Begin's condition has a clause this check does not know: %q in %q", c, *in.ConditionExpression)
		}
		if !ok {
			return false
		}
	}
	return true
}

// Rules OB-2 and OB-5: a send begins only from a pending row never
// notified. A row sending (another attempt in flight), sent, failed for good
// or reconciling (delivery in doubt) blocks every send for its key.
func TestBeginStartsOnlyFromAPendingUnnotifiedRow(t *testing.T) {
	{
		api := &oneAnswerAPI{}
		o := New(api, "jobs")
		o.Begin(context.Background(), Email(k), "j1", t0)
		for _, tt := range []struct {
			row  map[string]string
			want bool
		}{
			{map[string]string{"pk": "x", "status": string(Pending)}, true},
			{map[string]string{"pk": "x", "status": string(Pending), "notified_at": "t"}, false},
			{map[string]string{"pk": "x", "status": string(Sending)}, false},
			{map[string]string{"pk": "x", "status": string(Sent), "notified_at": "t"}, false},
			{map[string]string{"pk": "x", "status": string(Sent)}, false},
			{map[string]string{"pk": "x", "status": string(Failed)}, false},
			{map[string]string{"pk": "x", "status": string(Reconciling)}, false},
			{map[string]string{"pk": "x", "status": string(Reconciling), "notified_at": "t"}, false},
		} {
			if got := admits(t, api.last, tt.row); got != tt.want {
				t.Errorf("Begin on row %v admitted=%v, want %v (condition %q)", tt.row, got, tt.want, *api.last.ConditionExpression)
			}
		}
	}
}
