package outbox

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/awserr"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
)

// dataFields are what a delivery row holds beyond the uniqueness promise:
// the last error text, the event history (operator names among it) and the
// reconciliation note. They keep the data retention; the row itself — its
// key, status, notified_at, the provider's message id — keeps the
// uniqueness retention, so a delivery is still never repeated.
const dataFields = "last_error, events, reconcile_reason"

// ScrubData drops the data fields of up to limit rows created before cutoff
// (now − RETENTION_DAYS), once per row (scrubbed_at), and reports how many
// it scrubbed. The scan reads the outbox rows; each scrub is a conditional
// write that never touches status or notified_at.
func (o *Outbox) ScrubData(ctx context.Context, cutoff, now time.Time, limit int) (int, error) {
	scanner, ok := o.api.(ScanAPI)
	if !ok {
		return 0, failure.Errorf(failure.InternalBug, "outbox: the DynamoDB client cannot scan")
	}
	at := sv(job.FormatTime(cutoff))
	in := &dynamodb.ScanInput{TableName: &o.table,
		FilterExpression:          aws.String("begins_with(pk, :outbox) AND created_at < :cutoff AND attribute_not_exists(scrubbed_at)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":outbox": sv("OUTBOX#"), ":cutoff": at}}
	n := 0
	for {
		page, err := scanner.Scan(ctx, in)
		if err != nil {
			return n, awserr.Wrap("scan outbox for data past retention", err)
		}
		var rows []Row
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &rows); err != nil {
			return n, failure.Wrap(failure.InternalBug, err)
		}
		for _, r := range rows {
			if n == limit {
				return n, nil
			}
			_, err := o.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &o.table, Key: itemKey(r.Ref()),
				UpdateExpression:          aws.String("SET scrubbed_at = :now REMOVE " + dataFields),
				ConditionExpression:       aws.String("attribute_exists(pk) AND created_at < :cutoff"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":now": sv(job.FormatTime(now)), ":cutoff": at}})
			var ccf *types.ConditionalCheckFailedException
			if err != nil && !errors.As(err, &ccf) {
				return n, awserr.Wrap("scrub outbox row", err)
			}
			if err == nil {
				n++
			}
		}
		if len(page.LastEvaluatedKey) == 0 {
			return n, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}
