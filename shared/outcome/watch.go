package outcome

import (
	"context"
	"errors"
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

// The watch list says which reviews the sweeper still reads reactions of, and
// when: one item per (review, next read),
//
//	pk  OUTCOME#watch
//	sk  <next read, RFC 3339 UTC>#<review>
//
// with its window's end (until). A pass takes the entries due, oldest first, so
// it costs what is due, not what is watched; one partition is far below
// DynamoDB's per-partition rate.
//
// A review's current entry is named by its pointer (sk review#<review>, after
// every timestamp, never due), which each Watch moves: a superseded entry is
// read once more and dropped, so a review costs one read per interval however
// many versions it had.
const watchPartition = "OUTCOME#watch"

// DefaultWindow: how long after a review's last notified version its reactions
// are read; DefaultInterval: how often.
const (
	DefaultWindow   = 14 * 24 * time.Hour
	DefaultInterval = 24 * time.Hour
)

func watchKey(at time.Time, review int64) string {
	return job.FormatTime(at.UTC()) + "#" + strconv.FormatInt(review, 10)
}

// pointerKey is the key of review's pointer to its current entry.
func pointerKey(review int64) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": sv(watchPartition), "sk": sv("review#" + strconv.FormatInt(review, 10))}
}

// entry is a watch entry's item and its review's pointer moved to it.
func entry(sk string, review int64, until time.Time) (item map[string]types.AttributeValue, pointer map[string]types.AttributeValue) {
	expires := nv(until.Add(DefaultInterval).Unix())
	item = map[string]types.AttributeValue{"pk": sv(watchPartition), "sk": sv(sk), "review": nv(review), "until": nv(until.Unix()), "expires_at": expires}
	pointer = pointerKey(review)
	pointer["at"], pointer["expires_at"] = sv(sk), expires
	return item, pointer
}

// Watch schedules review's reads at next and every interval until until; each
// version's notify extends the window and supersedes earlier entries.
func (s *Store) Watch(ctx context.Context, review int64, next, until time.Time) error {
	item, pointer := entry(watchKey(next, review), review, until)
	if _, err := s.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: &s.table, Item: item}}, {Put: &types.Put{TableName: &s.table, Item: pointer}},
	}}); err != nil {
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

// Done moves a read entry to its next read, if still in its window and current
// (its pointer names it), else drops it.
func (s *Store) Done(ctx context.Context, d Due, next time.Time) error {
	drop := types.TransactWriteItem{Delete: &types.Delete{TableName: &s.table,
		Key: map[string]types.AttributeValue{"pk": sv(watchPartition), "sk": sv(d.sk)}}}
	items := []types.TransactWriteItem{drop}
	if !next.After(d.Until) {
		sk := watchKey(next, d.Review)
		item, pointer := entry(sk, d.Review, d.Until)
		items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: &s.table, Item: item}},
			types.TransactWriteItem{Put: &types.Put{TableName: &s.table, Item: pointer,
				ConditionExpression:       aws.String("#at = :was"),
				ExpressionAttributeNames:  map[string]string{"#at": "at"},
				ExpressionAttributeValues: map[string]types.AttributeValue{":was": sv(d.sk)}}})
	}
	_, err := s.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	var cancelled *types.TransactionCanceledException
	if len(items) > 2 && errors.As(err, &cancelled) && len(cancelled.CancellationReasons) == len(items) &&
		aws.ToString(cancelled.CancellationReasons[2].Code) == "ConditionalCheckFailed" {
		// superseded by a later Watch: only dropped
		_, err = s.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items[:1]})
	}
	if err != nil {
		return awserr.Wrap("outcome watch done", err)
	}
	return nil
}
