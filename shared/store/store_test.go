package store

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestUsedKeepsOnlyReferencedPlaceholders(t *testing.T) {
	names := map[string]string{"#state": "state", "#owner": "owner", "#st": "status"}
	values := map[string]types.AttributeValue{":a": &types.AttributeValueMemberS{Value: "x"}, ":ab": &types.AttributeValueMemberS{Value: "y"}, ":unused": &types.AttributeValueMemberS{Value: "z"}}
	n, v := used("SET #state = :ab, stages.#st = :a", names, values)
	if len(n) != 2 || n["#owner"] != "" || len(v) != 2 || v[":unused"] != nil {
		t.Fatalf("names %v values %v", n, v)
	}
	if n, v := used("SET x = y", names, values); n != nil || v != nil {
		t.Fatal("an expression without placeholders must send none (DynamoDB rejects empty maps)")
	}
}

func TestTransitions(t *testing.T) {
	tests := []struct {
		from, to State
		ok       bool
	}{
		{Queued, Running, true}, {Running, Queued, true}, {Running, RetryWait, true}, {RetryWait, Running, true},
		{Running, Succeeded, true}, {Running, Failed, true}, {Failed, Queued, true}, {Running, Running, true},
		{Succeeded, Queued, false}, {Succeeded, Running, false}, {Failed, Running, false}, {Queued, Succeeded, false}, {RetryWait, Queued, false},
	}
	for _, tt := range tests {
		if got := CanTransition(tt.from, tt.to); got != tt.ok {
			t.Errorf("%s → %s: %v, want %v", tt.from, tt.to, got, tt.ok)
		}
	}
}
