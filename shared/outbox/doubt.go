package outbox

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/awserr"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/store"
)

// The doubt index is a sparse GSI over the rows in doubt: sending, sent and not
// yet verified, reconciling. A row carries DoubtAttr (its status) and
// DoubtAtAttr (since when) only in those states, set and removed by the same
// write that moves it, so the reconciler Queries the rows in doubt instead of
// scanning the history
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-indexes-general-sparse-indexes.html).
const (
	DoubtIndex  = "doubt"
	DoubtAttr   = "doubt"
	DoubtAtAttr = "doubt_at"
)

// inDoubt adds the SET of the row's doubt pair: state since at.
func inDoubt(set string, values map[string]types.AttributeValue, state Status, at string) string {
	values[":doubt"], values[":doubtat"] = sv(string(state)), sv(at)
	return store.AddSet(set, DoubtAttr+" = :doubt, "+DoubtAtAttr+" = :doubtat")
}

// outOfDoubt adds the REMOVE of the doubt pair: the row leaves the index.
func outOfDoubt(update string) string {
	const rm = DoubtAttr + ", " + DoubtAtAttr
	if i := strings.Index(update, " REMOVE "); i >= 0 {
		return update[:i+len(" REMOVE ")] + rm + ", " + update[i+len(" REMOVE "):]
	}
	return update + " REMOVE " + rm
}

// sentDoubt keeps a row marked sent in the index for the reconciler's
// verification — except a digest, which nothing verifies (its runs settle it by
// lookup, rule DG-1): left in, every pass would read and skip it until it
// expired.
func sentDoubt(k Ref, set string, values map[string]types.AttributeValue, at string) string {
	if it, ok := ItemOf(k); ok && it.Channel == ChannelDigest {
		return outOfDoubt(set)
	}
	return inDoubt(set, values, Sent, at)
}

// doubtQuery reads one state of the doubt index whose doubt_at satisfies cond
// (on :at1, :at2; "": all), oldest first.
func (o *Outbox) doubtQuery(ctx context.Context, state Status, cond string, at ...time.Time) ([]Suspect, error) {
	key := "#d = :state"
	values := map[string]types.AttributeValue{":state": sv(string(state))}
	if cond != "" {
		key += " AND " + cond
		for i, t := range at {
			values[fmt.Sprintf(":at%d", i+1)] = sv(job.FormatTime(t))
		}
	}
	in := &dynamodb.QueryInput{TableName: &o.table, IndexName: aws.String(DoubtIndex),
		KeyConditionExpression: aws.String(key), ExpressionAttributeValues: values,
		ExpressionAttributeNames: map[string]string{"#d": DoubtAttr, "#at": DoubtAtAttr}}
	if cond == "" {
		delete(in.ExpressionAttributeNames, "#at")
	}
	rows, err := decodeAll[Suspect](store.QueryAll(ctx, o.api, in, "query the doubt index"))
	if err != nil {
		return nil, err
	}
	// The index is eventually consistent: drop rows that moved on.
	return slices.DeleteFunc(rows, func(r Suspect) bool { return r.Status != state }), nil
}

// Pass is a scheduled pass's saved position (the reconciler's cursor, the
// retention check's round): one item per pass in the outbox's key space (the
// sweeper may read and write OUTBOX# items), with a TTL refreshed by every
// save, so the retention check never counts it as living forever.
type Pass struct {
	o    *Outbox
	name string
}

// Pass returns the named pass's saved position.
func (o *Outbox) Pass(name string) Pass { return Pass{o: o, name: name} }

// passKeep is how long a pass's position outlives its last save (a lost
// position only restarts the pass).
const passKeep = 30 * 24 * time.Hour

func (p Pass) key() map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": sv("OUTBOX#PASS"), "sk": sv(p.name)}
}

// Load reads the position ("" when none).
func (p Pass) Load(ctx context.Context) (string, error) {
	out, err := p.o.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &p.o.table, Key: p.key(), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return "", awserr.Wrap("read pass progress", err)
	}
	var pr struct {
		Cursor string `dynamodbav:"cursor,omitempty"`
	}
	if err := attributevalue.UnmarshalMap(out.Item, &pr); err != nil {
		return "", failure.Wrap(failure.InternalBug, err)
	}
	return pr.Cursor, nil
}

// Save records the position for the pass's next run.
func (p Pass) Save(ctx context.Context, cursor string) error {
	now := job.Now()
	_, err := p.o.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &p.o.table, Key: p.key(),
		UpdateExpression:         aws.String("SET #c = :c, updated_at = :now, expires_at = :exp"),
		ExpressionAttributeNames: map[string]string{"#c": "cursor"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":c": sv(cursor),
			":now": sv(job.FormatTime(now)), ":exp": &types.AttributeValueMemberN{Value: fmt.Sprint(now.Add(passKeep).Unix())}}})
	if err != nil {
		return awserr.Wrap("save pass progress", err)
	}
	return nil
}
