package dynamotest

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func sv(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func nv(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }

// The evaluator decides conditions as DynamoDB's reference describes:
// precedence (NOT, AND, OR), IN over nested paths, numbers as numbers,
// a missing attribute or a type mismatch false for every comparator but
// <>, for which it is true.
func TestCondition(t *testing.T) {
	item := map[string]types.AttributeValue{
		"state": sv("running"), "n": nv("9"),
		"stages": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"fetch": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"status": sv("running"), "attempts": nv("2")}}}},
	}
	names := map[string]string{"#stg": "fetch", "#st": "status"}
	values := map[string]types.AttributeValue{":r": sv("running"), ":q": sv("queued"), ":two": nv("2"), ":ten": nv("10"), ":nine": sv("9")}
	for expr, want := range map[string]bool{
		"stages.#stg.#st IN (:q, :r)":                    true,
		"stages.#stg.#st IN (:q)":                        false,
		"stages.#stg.attempts < :two":                    false,
		"stages.#stg.attempts <= :two":                   true,
		"n < :ten":                                       true, // 9 < 10 as numbers, not "9" < "10" as text
		"n = :nine":                                      false,
		"state = :q OR state = :r AND n < :two":          false, // AND binds tighter
		"(state = :q OR state = :r) AND n < :ten":        true,
		"NOT state = :q":                                 true,
		"attribute_not_exists(missing) AND state <> :q":  true,
		"missing < :ten":                                 false,
		"missing = :q":                                   false,
		"missing <> :q":                                  true,
		"n <> :nine":                                     true, // N 9 is not S "9"
		"NOT missing >= :ten":                            true,
		"attribute_exists(stages.#stg.#st)":              true,
		"begins_with(state, :r)":                         true,
		"n BETWEEN :two AND :ten":                        true,
		"attribute_exists(stages.llm) OR state IN (:q)":  false,
		"stages.#stg.#st = :r AND stages.#stg.#st <> :r": false,
		"stages.#stg.#st = :r OR stages.#stg.#st <> :r":  true,
	} {
		got, err := condition(expr, names, values, item)
		if err != nil || got != want {
			t.Errorf("%s = %v, %v; want %v", expr, got, err, want)
		}
	}
}

// Every SET value is computed from the item as it was; REMOVE and SET
// combine in one update; a SET or REMOVE under a missing map is refused.
func TestUpdate(t *testing.T) {
	item := map[string]types.AttributeValue{"a": nv("1"), "b": nv("5"), "x": sv("x"), "m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}}}
	values := map[string]types.AttributeValue{":one": nv("1"), ":ev": &types.AttributeValueMemberL{Value: []types.AttributeValue{sv("e")}}, ":empty": &types.AttributeValueMemberL{}}
	if err := update("SET a = b, b = a + :one, h = list_append(if_not_exists(h, :empty), :ev), m.k = :one REMOVE x", nil, values, item); err != nil {
		t.Fatal(err)
	}
	if item["a"].(*types.AttributeValueMemberN).Value != "5" || item["b"].(*types.AttributeValueMemberN).Value != "2" {
		t.Errorf("a=%v b=%v: want the old values used (5, 2)", item["a"], item["b"])
	}
	if item["x"] != nil || len(item["h"].(*types.AttributeValueMemberL).Value) != 1 || get(item, path{"m", "k"}) == nil {
		t.Errorf("item after update: %v", item)
	}
	if err := update("SET nope.k = :one", nil, values, item); err == nil {
		t.Error("a SET under a missing map was applied")
	}
	if err := update("REMOVE nope.k", nil, nil, item); err == nil {
		t.Error("a REMOVE under a missing map was accepted")
	}
	if err := update("REMOVE m.absent", nil, nil, item); err != nil {
		t.Errorf("a REMOVE of a missing key of a map: %v", err)
	}
}

// A failed condition answers with the old item when asked, a cancelled
// transaction applies none of its writes, and a transaction may not touch
// one item twice.
func TestConditionalWrites(t *testing.T) {
	ctx := context.Background()
	d := New()
	key := map[string]types.AttributeValue{"pk": sv("p"), "sk": sv("s")}
	put := func(cond string) error {
		_, err := d.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(Table), Key: key, UpdateExpression: aws.String("SET v = :v"),
			ConditionExpression: aws.String(cond), ExpressionAttributeValues: map[string]types.AttributeValue{":v": sv("1")},
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
		return err
	}
	if err := put("attribute_not_exists(pk)"); err != nil {
		t.Fatal(err)
	}
	var ccf *types.ConditionalCheckFailedException
	if err := put("attribute_not_exists(pk)"); !errors.As(err, &ccf) || ccf.Item["v"] == nil {
		t.Fatalf("second create: %v, want a failed condition with the old item", err)
	}
	other := map[string]types.AttributeValue{"pk": sv("p2"), "sk": sv("s")}
	_, err := d.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(Table), Item: other}},
		{Put: &types.Put{TableName: aws.String(Table), Item: key, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
	}})
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || aws.ToString(tce.CancellationReasons[1].Code) != "ConditionalCheckFailed" || aws.ToString(tce.CancellationReasons[0].Code) != "None" {
		t.Fatalf("transaction: %v", err)
	}
	if out, _ := d.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(Table), Key: other}); out.Item != nil {
		t.Error("a cancelled transaction applied a write")
	}
	if _, err := d.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(Table), Item: other}},
		{Delete: &types.Delete{TableName: aws.String(Table), Key: other}},
	}}); err == nil || errors.As(err, &tce) {
		t.Errorf("two operations on one item in a transaction: %v, want a validation error", err)
	}
	if _, err := d.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(Table), Key: key, UpdateExpression: aws.String("SET v = :v"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": sv("1"), ":unused": sv("x")}}); err == nil {
		t.Error("an unused expression value was accepted")
	}
}

// A query reads in sort-key order, backwards when ScanIndexForward is
// false, and Limit counts from that end (DynamoDB API reference, Query:
// ScanIndexForward, Limit); a page after a key is refused, not answered
// from the start.
func TestQueryOrder(t *testing.T) {
	ctx := context.Background()
	d := New()
	for _, sk := range []string{"v2", "v1", "v3"} {
		if _, err := d.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(Table), Item: map[string]types.AttributeValue{"pk": sv("t"), "sk": sv(sk)}}); err != nil {
			t.Fatal(err)
		}
	}
	first := func(forward bool) string {
		out, err := d.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(Table), KeyConditionExpression: aws.String("pk = :pk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": sv("t")}, ScanIndexForward: aws.Bool(forward), Limit: aws.Int32(1)})
		if err != nil || len(out.Items) != 1 {
			t.Fatalf("query: %v, %v", out, err)
		}
		return out.Items[0]["sk"].(*types.AttributeValueMemberS).Value
	}
	if got := first(true); got != "v1" {
		t.Errorf("forward first %s, want v1", got)
	}
	if got := first(false); got != "v3" {
		t.Errorf("backward first %s, want v3", got)
	}
	if _, err := d.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(Table), KeyConditionExpression: aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": sv("t")}, ExclusiveStartKey: map[string]types.AttributeValue{"pk": sv("t"), "sk": sv("v1")}}); err == nil {
		t.Error("a query after a page's key was answered")
	}
}
