package swarmevents

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/awserr"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/store"
)

// A delivery's claim (pk SWARMEVENT#<id>, sk DELIVERY) is written only if absent
// and kept as long as the other uniqueness records, so a retry finds it.
const itemPrefix = "SWARMEVENT#"

// DeliveryAPI is the part of the DynamoDB client the claims use.
type DeliveryAPI interface {
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

// Deliveries records the delivery ids already received.
type Deliveries struct {
	api       DeliveryAPI
	table     string
	retention time.Duration
}

// NewDeliveries returns the claims over the jobs table, kept for retention
// (0: for ever; the store's default uniqueness retention when negative).
func NewDeliveries(api DeliveryAPI, table string, retention time.Duration) *Deliveries {
	if retention < 0 {
		retention = store.DefaultUniquenessRetention
	}
	return &Deliveries{api: api, table: table, retention: retention}
}

func (d *Deliveries) key(id string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: itemPrefix + id}, "sk": &types.AttributeValueMemberS{Value: "DELIVERY"}}
}

// Claim records id; first is false when it was already recorded.
func (d *Deliveries) Claim(ctx context.Context, id string) (first bool, err error) {
	item := d.key(id)
	now := job.Now()
	item["received_at"] = &types.AttributeValueMemberS{Value: job.FormatTime(now)}
	if d.retention > 0 {
		item["expires_at"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(d.retention).Unix(), 10)}
	}
	_, err = d.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &d.table, Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)")})
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		return false, nil
	case err != nil:
		return false, awserr.Wrap("swarm event claim", err)
	}
	return true, nil
}

// Release forgets id, so that a retry of a delivery whose work failed is
// done again rather than taken for a duplicate.
func (d *Deliveries) Release(ctx context.Context, id string) error {
	if _, err := d.api.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &d.table, Key: d.key(id)}); err != nil {
		return awserr.Wrap("swarm event release", err)
	}
	return nil
}
