package digest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/awserr"
	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/store"
)

// Identity is a digest's one identity, (owner, ISO week): its uniqueness
// row, Message-ID and token derive from it, never the address itself.
type Identity struct {
	Week  Week
	Owner string // keyed hash of the canonical address
	Token string // hex; the Message-ID and the X-Criticizer-Key header carry it
}

// Hasher keys an address (delivery.Secret.Recipient); nil: SHA-256.
type Hasher func(addr string) string

// IdentityOf is (owner, week)'s identity under h.
func IdentityOf(owner string, week Week, h Hasher) Identity {
	if h == nil {
		h = func(a string) string {
			sum := sha256.Sum256([]byte("criticizer.digest.v1\x00" + a))
			return hex.EncodeToString(sum[:])
		}
	}
	o := h(delivery.Canonical(owner))
	sum := sha256.Sum256([]byte("criticizer.digest.v1\x00" + week.String() + "\x00" + o))
	return Identity{Week: week, Owner: o, Token: hex.EncodeToString(sum[:])}
}

// MessageID is "<digest.2026-W48.<token prefix>@<from's domain>>".
func (id Identity) MessageID(from string) string {
	domain := "criticizer.invalid"
	if at := strings.LastIndexByte(from, '@'); at >= 0 && at < len(from)-2 {
		domain = strings.TrimSuffix(from[at+1:], ">")
	}
	return "<digest." + id.Week.String() + "." + id.Token[:32] + "@" + domain + ">"
}

// The uniqueness row of a digest (send first, then mark; docs/guarantees.md
// DG-1):
//
//	pk  DIGEST#sent#<2026-W48>
//	sk  OWNER#<keyed hash of the address>
//
// Begin makes it "sending" with an attempt token, conditionally (a row that
// exists is another attempt's); MarkSent makes it "sent" once the provider
// accepted; Release makes it "released" when the send certainly failed, so
// the next run tries again. A row left "sending" (a crash, a lost answer)
// may have been sent: it is sent again only after provider evidence says
// it was not (TakeOver), never on a guess.
const sentPrefix = "DIGEST#sent#"

// Row states.
const (
	StatusSending  = "sending"
	StatusSent     = "sent"
	StatusReleased = "released"
)

// Marks keeps the uniqueness rows in the jobs table.
type Marks struct {
	API   store.API
	Table string
	// Retention is how long a row outlives its week: the uniqueness
	// retention (UNIQUENESS_RETENTION_DAYS); 0 keeps it for ever.
	Retention time.Duration
}

// Mark is a uniqueness row as read.
type Mark struct {
	Status    string
	Attempt   string
	StartedAt time.Time
}

func key(id Identity) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": sv(sentPrefix + id.Week.String()), "sk": sv("OWNER#" + id.Owner)}
}

// Begin records the intent to send id's digest under attempt. begun is
// false when another attempt holds the row (sending or sent): held is it.
func (m *Marks) Begin(ctx context.Context, id Identity, attempt string, now time.Time) (begun bool, held *Mark, err error) {
	values := map[string]types.AttributeValue{":sending": sv(StatusSending), ":att": sv(attempt), ":at": sv(job.FormatTime(now)), ":released": sv(StatusReleased)}
	set := "SET #s = :sending, attempt = :att, started_at = :at"
	if m.Retention > 0 {
		values[":exp"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(id.Week.End().Add(m.Retention).Unix(), 10)}
		set += ", expires_at = :exp"
	}
	_, err = m.API.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &m.Table, Key: key(id),
		UpdateExpression:          aws.String(set),
		ConditionExpression:       aws.String("attribute_not_exists(pk) OR #s = :released"),
		ExpressionAttributeNames:  map[string]string{"#s": "status"},
		ExpressionAttributeValues: values, ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return false, decodeMark(ccf.Item), nil
	}
	if err != nil {
		return false, nil, awserr.Wrap("digest begin", err)
	}
	return true, nil, nil
}

func decodeMark(it map[string]types.AttributeValue) *Mark {
	str := func(k string) string {
		v, _ := it[k].(*types.AttributeValueMemberS)
		if v == nil {
			return ""
		}
		return v.Value
	}
	at, _ := job.ParseTime(str("started_at"))
	return &Mark{Status: str("status"), Attempt: str("attempt"), StartedAt: at}
}

// MarkSent records the provider's acceptance of attempt's send.
func (m *Marks) MarkSent(ctx context.Context, id Identity, attempt, notificationID string, now time.Time) error {
	return m.move(ctx, id, attempt, "SET #s = :to, notified_at = :at, notification_id = :nid",
		map[string]types.AttributeValue{":to": sv(StatusSent), ":at": sv(job.FormatTime(now)), ":nid": sv(notificationID)}, "digest mark sent")
}

// Release records that attempt's send certainly did not happen.
func (m *Marks) Release(ctx context.Context, id Identity, attempt string) error {
	return m.move(ctx, id, attempt, "SET #s = :to", map[string]types.AttributeValue{":to": sv(StatusReleased)}, "digest release")
}

// TakeOver moves a row left sending by attempt to a new attempt, after
// the provider's evidence showed the earlier send did not happen.
func (m *Marks) TakeOver(ctx context.Context, id Identity, attempt, next string, now time.Time) error {
	return m.move(ctx, id, attempt, "SET #s = :to, attempt = :next, started_at = :at",
		map[string]types.AttributeValue{":to": sv(StatusSending), ":next": sv(next), ":at": sv(job.FormatTime(now))}, "digest take over")
}

// move updates the row still sending under attempt; ErrConflict when
// another attempt holds it now.
func (m *Marks) move(ctx context.Context, id Identity, attempt, update string, values map[string]types.AttributeValue, what string) error {
	values[":att"], values[":sending"] = sv(attempt), sv(StatusSending)
	_, err := m.API.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &m.Table, Key: key(id), UpdateExpression: aws.String(update),
		ConditionExpression:      aws.String("attempt = :att AND #s = :sending"),
		ExpressionAttributeNames: map[string]string{"#s": "status"}, ExpressionAttributeValues: values})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return ErrConflict
	}
	if err != nil {
		return awserr.Wrap(what, err)
	}
	return nil
}

// ErrConflict is returned when another attempt holds the row.
var ErrConflict = errors.New("digest: another attempt holds the uniqueness row")
