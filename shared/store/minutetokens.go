package store

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/awserr"
)

// MinuteTokens is the provider's tokens-per-minute limit shared by every review
// (llm.Shared): one item per model and UTC minute, reserved by a conditional ADD
// that holds the total to the limit, so self-pacing instances cannot together
// exceed it. One write per call; items expire after an hour.
type MinuteTokens struct {
	st    *Store
	limit int
}

// MinuteTokens returns the budget of limit tokens a minute over st's table.
func (st *Store) MinuteTokens(limit int) *MinuteTokens { return &MinuteTokens{st: st, limit: limit} }

// Take reserves tokens in model's minute, or says how long until the next; a
// call above the limit takes a minute to itself.
func (m *MinuteTokens) Take(ctx context.Context, model string, tokens int, now time.Time) (time.Duration, error) {
	minute := now.UTC().Truncate(time.Minute)
	take := int64(min(tokens, m.limit))
	_, err := m.st.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:           aws.String(m.st.table),
		Key:                 key(budgetPK+"#minute#"+model, minute.Format("2006-01-02T15:04")),
		UpdateExpression:    aws.String("ADD tokens :n SET expires_at = if_not_exists(expires_at, :exp)"),
		ConditionExpression: aws.String("attribute_not_exists(tokens) OR tokens <= :room"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":n":    n(take),
			":room": n(int64(m.limit) - take),
			":exp":  n(minute.Add(time.Hour).Unix()),
		},
	})
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		return minute.Add(time.Minute).Sub(now), nil
	case err != nil:
		return 0, awserr.Wrap("reserve tokens of the shared minute budget", err)
	}
	return 0, nil
}
