package outcome

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/awserr"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
)

// The watch list says which reviews the sweeper still reads reactions of,
// and when next: one item per (review, next read),
//
//	pk  OUTCOME#watch
//	sk  <next read, RFC 3339 UTC>#<review>
//
// with the end of its window (until). A pass takes the entries due (sk <=
// now, oldest first, at most a limit), so it costs what is due, not what is
// watched. Reads are rare (one per review per interval), so the one
// partition stays far below DynamoDB's per-partition rate.
const watchPartition = "OUTCOME#watch"

// DefaultWindow is how long after a review's last notified version the
// sweeper keeps reading its reactions; DefaultInterval how often.
const (
	DefaultWindow   = 14 * 24 * time.Hour
	DefaultInterval = 24 * time.Hour
)

func watchKey(at time.Time, review int64) string {
	return job.FormatTime(at.UTC()) + "#" + strconv.FormatInt(review, 10)
}

// Watch schedules review's reactions to be read at next and then every
// interval until until. Called at each version's notify, it extends the
// window from that version; entries of earlier versions expire at their
// own until (reading twice writes nothing).
func (s *Store) Watch(ctx context.Context, review int64, next, until time.Time) error {
	item := map[string]types.AttributeValue{
		"pk": sv(watchPartition), "sk": sv(watchKey(next, review)),
		"review": nv(review), "until": nv(until.Unix()),
		"expires_at": nv(until.Add(DefaultInterval).Unix()),
	}
	if _, err := s.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: item}); err != nil {
		return awserr.Wrap("outcome watch", err)
	}
	return nil
}

// Due is one watch entry whose read is due.
type Due struct {
	Review int64
	Until  time.Time
	sk     string
}

// Due returns up to limit entries due at now, oldest first.
func (s *Store) Due(ctx context.Context, now time.Time, limit int32) ([]Due, error) {
	out, err := s.api.Query(ctx, &dynamodb.QueryInput{TableName: &s.table, ConsistentRead: aws.Bool(true),
		KeyConditionExpression: aws.String("pk = :pk AND sk <= :now"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": sv(watchPartition), ":now": sv(job.FormatTime(now.UTC()) + "#~"),
		},
		Limit: aws.Int32(limit)})
	if err != nil {
		return nil, awserr.Wrap("outcome due", err)
	}
	var due []Due
	for _, it := range out.Items {
		review, ok1 := num(it["review"])
		until, ok2 := num(it["until"])
		sk := str(it["sk"])
		if !ok1 || !ok2 || !strings.HasSuffix(sk, "#"+strconv.FormatInt(review, 10)) {
			return nil, failure.Errorf(failure.SchemaInvalid, "outcome watch entry %q is malformed", sk)
		}
		due = append(due, Due{Review: review, Until: time.Unix(until, 0), sk: sk})
	}
	return due, nil
}

// Done moves a read entry on: to its next read when that is still inside
// its window, else off the list.
func (s *Store) Done(ctx context.Context, d Due, next time.Time) error {
	var items []types.TransactWriteItem
	items = append(items, types.TransactWriteItem{Delete: &types.Delete{TableName: &s.table,
		Key: map[string]types.AttributeValue{"pk": sv(watchPartition), "sk": sv(d.sk)}}})
	if !next.After(d.Until) {
		items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: &s.table, Item: map[string]types.AttributeValue{
			"pk": sv(watchPartition), "sk": sv(watchKey(next, d.Review)),
			"review": nv(d.Review), "until": nv(d.Until.Unix()), "expires_at": nv(d.Until.Add(DefaultInterval).Unix()),
		}}})
	}
	if _, err := s.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items}); err != nil {
		return awserr.Wrap("outcome watch done", err)
	}
	return nil
}
