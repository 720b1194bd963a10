package store

import (
	"context"
	"errors"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Rows a stage attempt records (notify's outcome records, digest entry) need not
// cost a request each: put through Deferring under a Defer context, they are
// written in the one transaction that finishes the job (Complete). A failed
// attempt writes them one by one with its retry or dead letter; one whose lease
// was lost writes none (its successor records them again).

type deferKey struct{}

// deferred is one attempt's held puts.
type deferred struct {
	mu   sync.Mutex
	puts []*dynamodb.PutItemInput
}

// Defer returns ctx holding the puts made through Deferring until completion
// (stage.Runtime.Defer).
func Defer(ctx context.Context) context.Context {
	return context.WithValue(ctx, deferKey{}, &deferred{})
}

func deferredPuts(ctx context.Context) []*dynamodb.PutItemInput {
	d, _ := ctx.Value(deferKey{}).(*deferred)
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.puts
}

// Deferring is an API whose PutItem under a Defer context is held and answers at
// once, so its callers must not need its outcome (a taken key is the
// completion's to settle). Without one it writes at once.
type Deferring struct{ API }

// PutItem holds in under a context from Defer, else puts it.
func (d Deferring) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	h, _ := ctx.Value(deferKey{}).(*deferred)
	if h == nil {
		return d.API.PutItem(ctx, in, opts...)
	}
	h.mu.Lock()
	h.puts = append(h.puts, in)
	h.mu.Unlock()
	return &dynamodb.PutItemOutput{}, nil
}

// putDeferred writes a failed attempt's deferred rows one by one, so what it
// recorded before failing stays; a taken key leaves its row.
func (st *Store) putDeferred(ctx context.Context) error {
	for _, p := range deferredPuts(ctx) {
		if _, err := st.api.PutItem(ctx, p); err != nil && !errors.As(err, new(*types.ConditionalCheckFailedException)) {
			return classifyAWS("deferred row", err)
		}
	}
	return nil
}

// maxTransact is DynamoDB's limit of items in one transaction.
const maxTransact = 100

// transact applies the job's update with puts in one transaction. A put whose
// condition fails is dropped and the rest retried, as that PutItem alone would
// fail; a failed job condition returns the old job (ccf) as UpdateItem does.
// Puts past the limit are written first, one by one.
func (st *Store) transact(ctx context.Context, in *dynamodb.UpdateItemInput, puts []*dynamodb.PutItemInput) error {
	if len(puts) > maxTransact-1 {
		if err := st.putDeferred(context.WithValue(ctx, deferKey{}, &deferred{puts: puts[maxTransact-1:]})); err != nil {
			return err
		}
		puts = puts[:maxTransact-1]
	}
	for {
		items := []types.TransactWriteItem{{Update: &types.Update{TableName: in.TableName, Key: in.Key,
			UpdateExpression: in.UpdateExpression, ConditionExpression: in.ConditionExpression,
			ExpressionAttributeNames: in.ExpressionAttributeNames, ExpressionAttributeValues: in.ExpressionAttributeValues,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}}}
		for _, p := range puts {
			items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: p.TableName, Item: p.Item,
				ConditionExpression: p.ConditionExpression, ExpressionAttributeNames: p.ExpressionAttributeNames,
				ExpressionAttributeValues: p.ExpressionAttributeValues}})
		}
		_, err := st.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		var tce *types.TransactionCanceledException
		if !errors.As(err, &tce) || len(tce.CancellationReasons) != len(items) {
			return err
		}
		reasons := tce.CancellationReasons
		if failedCondition(reasons[0]) {
			old := reasons[0].Item
			if old == nil { // an image not returned: read it
				out, gerr := st.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: in.TableName, Key: in.Key, ConsistentRead: aws.Bool(true)})
				if gerr != nil {
					return gerr
				}
				old = out.Item
			}
			return &types.ConditionalCheckFailedException{Message: tce.Message, Item: old}
		}
		kept := make([]*dynamodb.PutItemInput, 0, len(puts))
		for i, p := range puts {
			if !failedCondition(reasons[i+1]) {
				kept = append(kept, p)
			}
		}
		if len(kept) == len(puts) {
			return cancelled("complete stage", err, reasons)
		}
		puts = kept
	}
}

func failedCondition(r types.CancellationReason) bool {
	return aws.ToString(r.Code) == "ConditionalCheckFailed"
}
