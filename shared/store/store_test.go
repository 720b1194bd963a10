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
