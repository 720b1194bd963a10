package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/awserr"
)

// DailyTokens counts the LLM tokens per UTC day (REVIEW_DAILY_TOKEN_BUDGET): one
// item a day, incremented by atomic ADD, so concurrent reviews count into one
// total without reading.
type DailyTokens struct {
	st *Store
}

// DailyTokens returns the counter over st's table.
func (st *Store) DailyTokens() *DailyTokens { return &DailyTokens{st: st} }

// budgetPK's prefix is the item type the llm function's IAM grant names (infra:
// itemBudget).
const budgetPK = "BUDGET#tokens"

func budgetKey(day time.Time) map[string]types.AttributeValue {
	return key(budgetPK, day.UTC().Format("2006-01-02"))
}

// Spent returns the tokens counted on day (UTC) so far.
func (d *DailyTokens) Spent(ctx context.Context, day time.Time) (int64, error) {
	out, err := d.st.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(d.st.table), Key: budgetKey(day), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return 0, awserr.Wrap("read the daily token counter", err)
	}
	return tokensOf(out.Item)
}

// Add counts tokens on day (UTC) atomically and returns the new total.
func (d *DailyTokens) Add(ctx context.Context, day time.Time, tokens int64) (int64, error) {
	out, err := d.st.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:        aws.String(d.st.table),
		Key:              budgetKey(day),
		UpdateExpression: aws.String("ADD tokens :n SET expires_at = if_not_exists(expires_at, :exp)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":n":   n(tokens),
			":exp": n(day.UTC().Add(8 * 24 * time.Hour).Unix()),
		},
		ReturnValues: types.ReturnValueUpdatedNew,
	})
	if err != nil {
		return 0, awserr.Wrap("count tokens on the daily counter", err)
	}
	return tokensOf(out.Attributes)
}

func tokensOf(item map[string]types.AttributeValue) (int64, error) {
	n, ok := item["tokens"].(*types.AttributeValueMemberN)
	if !ok {
		return 0, nil
	}
	v, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("daily token counter holds %q: %w", n.Value, err)
	}
	return v, nil
}
