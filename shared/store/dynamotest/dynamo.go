// Package dynamotest is an in-process DynamoDB for unit tests that evaluates the
// condition, update, key-condition and filter expressions it is sent as DynamoDB
// does (DynamoDB Developer Guide: "Condition and filter expressions", "Update
// expressions", "TransactWriteItems"), so the store's and outbox's own requests
// decide what a test sees; the contract suite (shared/store/storetest) runs the
// same scenarios on the emulator to show the two agree.
package dynamotest

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// Table is the in-process table's name.
const Table = "jobs"

// Dynamo holds one table with the jobs table's key schema and its sweep and
// doubt indexes (infra/stack.go). It answers a failed condition as DynamoDB does
// (ConditionalCheckFailedException with the old item under ALL_OLD; a cancelled
// transaction with a reason per item) and rejects an unused placeholder.
type Dynamo struct {
	mu    sync.Mutex
	items map[[2]string]map[string]types.AttributeValue
}

// New returns an empty table.
func New() *Dynamo { return &Dynamo{items: map[[2]string]map[string]types.AttributeValue{}} }

// indexes are the table's secondary indexes: hash and range attribute.
var indexes = map[string][2]string{"sweep": {"sweep_shard", "sweep_at"}, "doubt": {"doubt", "doubt_at"}}

func keyOf(key map[string]types.AttributeValue) ([2]string, error) {
	pk, ok1 := key["pk"].(*types.AttributeValueMemberS)
	sk, ok2 := key["sk"].(*types.AttributeValueMemberS)
	if !ok1 || !ok2 {
		return [2]string{}, validation("the provided key element does not match the schema")
	}
	return [2]string{pk.Value, sk.Value}, nil
}

func validation(format string, args ...any) error {
	return &smithy.GenericAPIError{Code: "ValidationException", Message: fmt.Sprintf(format, args...)}
}

var placeholders = regexp.MustCompile(`[#:][A-Za-z0-9_]+`)

// unused is DynamoDB's refusal of a name or value no expression uses.
func unused(names map[string]string, values map[string]types.AttributeValue, exprs ...*string) error {
	used := map[string]bool{}
	for _, e := range exprs {
		for _, p := range placeholders.FindAllString(aws.ToString(e), -1) {
			used[p] = true
		}
	}
	for k := range names {
		if !used[k] {
			return validation("Value provided in ExpressionAttributeNames unused in expressions: keys: {%s}", k)
		}
	}
	for k := range values {
		if !used[k] {
			return validation("Value provided in ExpressionAttributeValues unused in expressions: keys: {%s}", k)
		}
	}
	return nil
}

// check evaluates a write's condition on the stored item (nil: none, as
// an empty one).
func check(cond *string, names map[string]string, values map[string]types.AttributeValue, old map[string]types.AttributeValue) (bool, error) {
	if cond == nil {
		return true, nil
	}
	ok, err := condition(*cond, names, values, old)
	if err != nil {
		return false, validation("%v", err)
	}
	return ok, nil
}

func conditionFailed(old map[string]types.AttributeValue, rv types.ReturnValuesOnConditionCheckFailure) error {
	e := &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed")}
	if rv == types.ReturnValuesOnConditionCheckFailureAllOld {
		e.Item = clone(old)
	}
	return e
}

// GetItem reads one item.
func (d *Dynamo) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	k, err := keyOf(in.Key)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return &dynamodb.GetItemOutput{Item: clone(d.items[k])}, nil
}

// PutItem writes a whole item under its condition.
func (d *Dynamo) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	_, err := d.one(types.TransactWriteItem{Put: &types.Put{Item: in.Item, ConditionExpression: in.ConditionExpression, ExpressionAttributeNames: in.ExpressionAttributeNames,
		ExpressionAttributeValues: in.ExpressionAttributeValues, ReturnValuesOnConditionCheckFailure: in.ReturnValuesOnConditionCheckFailure}})
	return &dynamodb.PutItemOutput{}, err
}

// DeleteItem removes an item under its condition.
func (d *Dynamo) DeleteItem(_ context.Context, in *dynamodb.DeleteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	_, err := d.one(types.TransactWriteItem{Delete: &types.Delete{Key: in.Key, ConditionExpression: in.ConditionExpression,
		ExpressionAttributeNames: in.ExpressionAttributeNames, ExpressionAttributeValues: in.ExpressionAttributeValues}})
	return &dynamodb.DeleteItemOutput{}, err
}

// UpdateItem changes (or creates) one item under its condition.
func (d *Dynamo) UpdateItem(_ context.Context, in *dynamodb.UpdateItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	item, err := d.one(types.TransactWriteItem{Update: &types.Update{Key: in.Key, UpdateExpression: in.UpdateExpression, ConditionExpression: in.ConditionExpression,
		ExpressionAttributeNames: in.ExpressionAttributeNames, ExpressionAttributeValues: in.ExpressionAttributeValues,
		ReturnValuesOnConditionCheckFailure: in.ReturnValuesOnConditionCheckFailure}})
	if err != nil {
		return nil, err
	}
	out := &dynamodb.UpdateItemOutput{}
	if in.ReturnValues == types.ReturnValueAllNew || in.ReturnValues == types.ReturnValueUpdatedNew {
		out.Attributes = clone(item) // UPDATED_NEW: the whole item, a superset of what the callers read
	}
	return out, nil
}

// one applies a single write.
func (d *Dynamo) one(w types.TransactWriteItem) (map[string]types.AttributeValue, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, apply, err := d.prepare(w)
	if err != nil {
		return nil, err
	}
	return apply(), nil
}

// prepare is what every write does before changing anything: find the key,
// refuse unused placeholders, check the condition and compute the new item;
// apply stores (or deletes) it.
func (d *Dynamo) prepare(w types.TransactWriteItem) (k [2]string, apply func() map[string]types.AttributeValue, err error) {
	var key map[string]types.AttributeValue
	var cond *string
	var names map[string]string
	var values map[string]types.AttributeValue
	var rv types.ReturnValuesOnConditionCheckFailure
	var upd []*string
	switch {
	case w.Put != nil:
		key, cond, names, values, rv = w.Put.Item, w.Put.ConditionExpression, w.Put.ExpressionAttributeNames, w.Put.ExpressionAttributeValues, w.Put.ReturnValuesOnConditionCheckFailure
	case w.Delete != nil:
		key, cond, names, values, rv = w.Delete.Key, w.Delete.ConditionExpression, w.Delete.ExpressionAttributeNames, w.Delete.ExpressionAttributeValues, w.Delete.ReturnValuesOnConditionCheckFailure
	case w.Update != nil:
		key, cond, names, values, rv = w.Update.Key, w.Update.ConditionExpression, w.Update.ExpressionAttributeNames, w.Update.ExpressionAttributeValues, w.Update.ReturnValuesOnConditionCheckFailure
		upd = []*string{w.Update.UpdateExpression}
	default:
		return k, nil, validation("unsupported transaction item")
	}
	if k, err = keyOf(key); err != nil {
		return k, nil, err
	}
	if err := unused(names, values, append(upd, cond)...); err != nil {
		return k, nil, err
	}
	old := d.items[k]
	ok, err := check(cond, names, values, old)
	if err != nil {
		return k, nil, err
	}
	if !ok {
		return k, nil, conditionFailed(old, rv)
	}
	item := clone(key)
	switch {
	case w.Delete != nil:
		return k, func() map[string]types.AttributeValue { delete(d.items, k); return nil }, nil
	case w.Update != nil:
		if old != nil {
			item = clone(old)
		}
		if err := update(aws.ToString(w.Update.UpdateExpression), names, values, item); err != nil {
			return k, nil, validation("%v", err)
		}
	}
	return k, func() map[string]types.AttributeValue { d.items[k] = item; return item }, nil
}

// TransactWriteItems applies every write or none (TransactionCanceledException
// with a reason per item).
func (d *Dynamo) TransactWriteItems(_ context.Context, in *dynamodb.TransactWriteItemsInput, _ ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	reasons := make([]types.CancellationReason, len(in.TransactItems))
	var applies []func() map[string]types.AttributeValue
	cancelled := false
	seen := map[[2]string]bool{}
	for i, it := range in.TransactItems {
		k, apply, err := d.prepare(it)
		// One item, one operation per transaction (API reference,
		// TransactWriteItems: "You can't target the same item with multiple
		// operations within the same transaction").
		if k != ([2]string{}) {
			if seen[k] {
				return nil, validation("Transaction request cannot include multiple operations on one item")
			}
			seen[k] = true
		}
		reasons[i].Code = aws.String("None")
		if ccf, ok := err.(*types.ConditionalCheckFailedException); ok {
			reasons[i] = types.CancellationReason{Code: aws.String("ConditionalCheckFailed"), Message: ccf.Message, Item: ccf.Item}
			cancelled = true
		} else if err != nil {
			return nil, err
		}
		applies = append(applies, apply)
	}
	if cancelled {
		return nil, &types.TransactionCanceledException{Message: aws.String("Transaction cancelled"), CancellationReasons: reasons}
	}
	for _, a := range applies {
		a()
	}
	return &dynamodb.TransactWriteItemsOutput{}, nil
}

// Query reads a key condition's items in range-key order (reversed when
// ScanIndexForward is false), up to Limit, in one page: a request starting after
// a key is refused, not answered from the start.
func (d *Dynamo) Query(_ context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	if in.ExclusiveStartKey != nil {
		return nil, validation("dynamotest answers every query in one page; ExclusiveStartKey is not modelled")
	}
	if err := unused(in.ExpressionAttributeNames, in.ExpressionAttributeValues, in.KeyConditionExpression, in.FilterExpression); err != nil {
		return nil, err
	}
	keys := [2]string{"pk", "sk"}
	if in.IndexName != nil {
		var ok bool
		if keys, ok = indexes[*in.IndexName]; !ok {
			return nil, validation("the table does not have the specified index: %s", *in.IndexName)
		}
	}
	return d.read(in.KeyConditionExpression, in.FilterExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues, keys, aws.ToInt32(in.Limit),
		!aws.ToBool(in.ScanIndexForward) && in.ScanIndexForward != nil)
}

// Scan reads every item the filter admits.
func (d *Dynamo) Scan(_ context.Context, in *dynamodb.ScanInput, _ ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	if err := unused(in.ExpressionAttributeNames, in.ExpressionAttributeValues, in.FilterExpression); err != nil {
		return nil, err
	}
	if in.ExclusiveStartKey != nil || in.Segment != nil {
		return nil, validation("dynamotest answers every scan in one page; ExclusiveStartKey and Segment are not modelled")
	}
	out, err := d.read(nil, in.FilterExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues, [2]string{"pk", "sk"}, aws.ToInt32(in.Limit), false)
	if err != nil {
		return nil, err
	}
	return &dynamodb.ScanOutput{Items: out.Items, Count: out.Count}, nil
}

func (d *Dynamo) read(keyCond, filter *string, names map[string]string, values map[string]types.AttributeValue, keys [2]string, limit int32, descending bool) (*dynamodb.QueryOutput, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var items []map[string]types.AttributeValue
	for _, it := range d.items {
		if it[keys[0]] == nil || it[keys[1]] == nil { // not on the (sparse) index
			continue
		}
		ok, err := check(keyCond, names, values, it)
		if err != nil {
			return nil, err
		}
		if ok {
			items = append(items, it)
		}
	}
	slices.SortFunc(items, func(a, b map[string]types.AttributeValue) int {
		switch {
		case compare("<", a[keys[1]], b[keys[1]]):
			return -1
		case compare(">", a[keys[1]], b[keys[1]]):
			return 1
		}
		return 0
	})
	if descending {
		slices.Reverse(items)
	}
	if limit > 0 && len(items) > int(limit) {
		items = items[:limit] // Limit counts items read, before the filter
	}
	var out []map[string]types.AttributeValue
	for _, it := range items {
		ok, err := check(filter, names, values, it)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, clone(it))
		}
	}
	return &dynamodb.QueryOutput{Items: out, Count: int32(len(out))}, nil
}
