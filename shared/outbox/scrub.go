package outbox

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/awserr"
	"github.com/criticizer/criticizer/shared/job"
)

// dataFields are what a row holds beyond the uniqueness promise — error text,
// history, reconcile note, address — and keep the data retention; the key,
// status, notified_at and message id keep the uniqueness retention, so a
// delivery is never repeated.
const dataFields = "last_error, events, reconcile_reason, recipient"

// Scrub is the data scrub riding the retention scan (retention.Also), so the
// table is read once a day: rows created before the cutoff lose their data
// fields once (scrubbed_at), by a conditional write that never touches status or
// notified_at.
type Scrub struct {
	o       *Outbox
	cutoff  string
	now     time.Time
	Filter  string
	Values  map[string]types.AttributeValue
	Project []string
}

// Scrubber is the scrub of rows created before cutoff.
func (o *Outbox) Scrubber(cutoff, now time.Time) *Scrub {
	at := job.FormatTime(cutoff)
	return &Scrub{o: o, cutoff: at, now: now,
		Filter:  "begins_with(pk, :outbox) AND created_at < :scrubcut AND attribute_not_exists(scrubbed_at)",
		Values:  map[string]types.AttributeValue{":outbox": sv("OUTBOX#"), ":scrubcut": sv(at)},
		Project: []string{"created_at", "scrubbed_at"},
	}
}

// ScanFilter is what the retention scan adds to its filter for the scrub.
func (s *Scrub) ScanFilter() (string, map[string]string, map[string]types.AttributeValue, []string) {
	return s.Filter, nil, s.Values, s.Project
}

// Match reports whether a scanned item is a delivery row the scrub wants.
func (s *Scrub) Match(item map[string]types.AttributeValue) bool {
	pk, _ := item["pk"].(*types.AttributeValueMemberS)
	created, _ := item["created_at"].(*types.AttributeValueMemberS)
	_, scrubbed := item["scrubbed_at"]
	if pk == nil || !strings.HasPrefix(pk.Value, "OUTBOX#") || created == nil || created.Value >= s.cutoff {
		return false
	}
	return !scrubbed
}

// Visit scrubs one matched row.
func (s *Scrub) Visit(ctx context.Context, item map[string]types.AttributeValue) error {
	key := map[string]types.AttributeValue{"pk": item["pk"], "sk": item["sk"]}
	return s.o.scrub(ctx, key, s.cutoff, s.now)
}

func (o *Outbox) scrub(ctx context.Context, key map[string]types.AttributeValue, cutoff string, now time.Time) error {
	_, err := o.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &o.table, Key: key,
		UpdateExpression:          aws.String("SET scrubbed_at = :now REMOVE " + dataFields),
		ConditionExpression:       aws.String("attribute_exists(pk) AND created_at < :cutoff"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":now": sv(job.FormatTime(now)), ":cutoff": sv(cutoff)}})
	var ccf *types.ConditionalCheckFailedException
	if err != nil && !errors.As(err, &ccf) {
		return awserr.Wrap("scrub outbox row", err)
	}
	return nil
}
