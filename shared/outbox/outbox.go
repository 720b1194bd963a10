// Package outbox owns the delivery log: one row per (changelist_id,
// recipient, review_version), created conditionally so the tuple is unique,
// and the send-then-mark protocol around it. A row moves
//
//	pending → sending → sent                 (send confirmed, marked in one write)
//	pending → sending → pending              (provider refused before accepting: safe to retry)
//	pending → sending → (crash/timeout)      (send may have happened: reconcile before any resend)
//	        → failed                         (permanent: invalid recipient, policy)
//
// notified_at is set only after the provider accepted the message, so a row
// with notified_at is never sent again.
package outbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
)

// Status of a delivery row.
type Status string

const (
	Pending Status = "pending"
	Sending Status = "sending"
	Sent    Status = "sent"
	Failed  Status = "failed"
)

// Key is the outbox identity: the unique intent "recipient has been notified
// for this changelist version". It is the delivery key, so the row and the
// e-mail's deterministic Message-ID derive from the same tuple.
type Key = delivery.Key

func pk(k Key) string { return fmt.Sprintf("OUTBOX#%d#%d", k.Changelist, k.ReviewVersion) }
func sk(k Key) string { return "RCPT#" + strings.ToLower(strings.TrimSpace(k.Recipient)) }

// Row is one delivery.
type Row struct {
	Changelist     int64  `dynamodbav:"changelist_id" json:"-"`
	ReviewVersion  int    `dynamodbav:"review_version" json:"-"`
	Recipient      string `dynamodbav:"recipient" json:"recipient"`
	JobID          string `dynamodbav:"job_id" json:"job_id"`
	Status         Status `dynamodbav:"status" json:"status"`
	NotificationID string `dynamodbav:"notification_id,omitempty" json:"notification_id,omitempty"`
	NotifiedAt     string `dynamodbav:"notified_at,omitempty" json:"notified_at,omitempty"`
	SendStartedAt  string `dynamodbav:"send_started_at,omitempty" json:"send_started_at,omitempty"`
	Attempts       int    `dynamodbav:"attempts" json:"attempts"`
	LastErrorClass string `dynamodbav:"last_error_class,omitempty" json:"last_error_class,omitempty"`
	LastError      string `dynamodbav:"last_error,omitempty" json:"last_error,omitempty"`
	CreatedAt      string `dynamodbav:"created_at" json:"created_at"`
	UpdatedAt      string `dynamodbav:"updated_at" json:"updated_at"`
}

// Key returns the row's identity.
func (r *Row) Key() Key {
	return Key{Changelist: r.Changelist, Recipient: r.Recipient, ReviewVersion: r.ReviewVersion}
}

// API is the part of the DynamoDB client the outbox uses.
type API interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
}

// Outbox reads and writes delivery rows in the jobs table.
type Outbox struct {
	api   API
	table string
}

// New returns an Outbox over the table.
func New(api API, table string) *Outbox { return &Outbox{api: api, table: table} }

// ErrAlreadySent means the row has notified_at: never send again.
var ErrAlreadySent = errors.New("already notified")

// ErrInFlight means a send was started and not confirmed: it may have
// happened, so the row must be reconciled before any resend.
var ErrInFlight = errors.New("send may have happened")

func itemKey(k Key) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk(k)}, "sk": &types.AttributeValueMemberS{Value: sk(k)}}
}

func sv(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

// Ensure creates the row for k if it does not exist and returns the row as
// stored. Creation is conditional, so concurrent workers share one row.
func (o *Outbox) Ensure(ctx context.Context, k Key, jobID string, now time.Time) (*Row, error) {
	at := domain.FormatTime(now)
	row := Row{Changelist: k.Changelist, ReviewVersion: k.ReviewVersion, Recipient: strings.ToLower(strings.TrimSpace(k.Recipient)), JobID: jobID, Status: Pending, CreatedAt: at, UpdatedAt: at}
	item, err := attributevalue.MarshalMap(row)
	if err != nil {
		return nil, failure.Wrap(failure.InternalBug, err)
	}
	item["pk"], item["sk"] = sv(pk(k)), sv(sk(k))
	_, err = o.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &o.table, Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)")})
	var ccf *types.ConditionalCheckFailedException
	switch {
	case err == nil:
		return &row, nil
	case errors.As(err, &ccf):
		return o.Get(ctx, k)
	default:
		return nil, classify("create outbox row", err)
	}
}

// Get reads a row with a strongly consistent read (the re-read before every send).
func (o *Outbox) Get(ctx context.Context, k Key) (*Row, error) {
	out, err := o.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &o.table, Key: itemKey(k), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, classify("get outbox row", err)
	}
	if out.Item == nil {
		return nil, failure.Errorf(failure.NotFound, "outbox row %s/%s missing", pk(k), sk(k))
	}
	var r Row
	if err := attributevalue.UnmarshalMap(out.Item, &r); err != nil {
		return nil, failure.Wrap(failure.InternalBug, err)
	}
	return &r, nil
}

// List returns every row of a changelist version.
func (o *Outbox) List(ctx context.Context, changelist int64, version int) ([]Row, error) {
	k := Key{Changelist: changelist, ReviewVersion: version}
	out, err := o.api.Query(ctx, &dynamodb.QueryInput{TableName: &o.table, ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": sv(pk(k))}})
	if err != nil {
		return nil, classify("list outbox rows", err)
	}
	var rows []Row
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &rows); err != nil {
		return nil, failure.Wrap(failure.InternalBug, err)
	}
	return rows, nil
}

// transition applies set to a row that is unsent (no notified_at) and in one
// of the from states (any state when from is empty), as one conditional
// write. ok is false when the condition did not hold; old is then the row as
// it was (nil if missing).
func (o *Outbox) transition(ctx context.Context, k Key, op, set string, from []Status, values map[string]types.AttributeValue) (old *Row, ok bool, err error) {
	cond := "attribute_exists(pk) AND attribute_not_exists(notified_at)"
	if len(from) > 0 {
		cond += " AND #s IN ("
		for i, s := range from {
			ph := fmt.Sprintf(":from%d", i)
			values[ph] = sv(string(s))
			if i > 0 {
				cond += ", "
			}
			cond += ph
		}
		cond += ")"
	}
	_, err = o.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &o.table, Key: itemKey(k),
		UpdateExpression: aws.String(set), ConditionExpression: aws.String(cond),
		ExpressionAttributeNames: map[string]string{"#s": "status"}, ExpressionAttributeValues: values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		if ccf.Item == nil {
			return nil, false, nil
		}
		var r Row
		if err := attributevalue.UnmarshalMap(ccf.Item, &r); err != nil {
			return nil, false, failure.Wrap(failure.InternalBug, err)
		}
		return &r, false, nil
	case err != nil:
		return nil, false, classify(op, err)
	}
	return nil, true, nil
}

// BeginSend records the intent to send, only if the row is not sent and no
// other send is in flight. It returns ErrAlreadySent or ErrInFlight otherwise.
func (o *Outbox) BeginSend(ctx context.Context, k Key, now time.Time) error {
	old, ok, err := o.transition(ctx, k, "begin send",
		"SET #s = :sending, send_started_at = :now, updated_at = :now, attempts = attempts + :one", []Status{Pending},
		map[string]types.AttributeValue{":sending": sv(string(Sending)), ":now": sv(domain.FormatTime(now)), ":one": &types.AttributeValueMemberN{Value: "1"}})
	switch {
	case err != nil || ok:
		return err
	case old == nil:
		return failure.Errorf(failure.InternalBug, "outbox row %s missing", k)
	case old.NotifiedAt != "":
		return ErrAlreadySent
	case old.Status == Sending:
		return ErrInFlight
	case old.Status == Failed:
		return failure.Errorf(failure.NotFound, "delivery to this recipient failed permanently: %s", old.LastErrorClass)
	}
	return failure.Errorf(failure.Conflict, "outbox row in unexpected state %q", old.Status)
}

// MarkSent records the provider's acceptance in a single write: notification
// id, notified_at and status together. A row already marked stays as it is.
func (o *Outbox) MarkSent(ctx context.Context, k Key, notificationID string, now time.Time) error {
	_, _, err := o.transition(ctx, k, "mark sent",
		"SET #s = :sent, notification_id = :nid, notified_at = :now, updated_at = :now REMOVE last_error, last_error_class", nil,
		map[string]types.AttributeValue{":sent": sv(string(Sent)), ":nid": sv(notificationID), ":now": sv(domain.FormatTime(now))})
	return err
}

// Release records a send that certainly did not happen (the provider refused
// it): permanent failures end the row, transient ones make it pending again.
func (o *Outbox) Release(ctx context.Context, k Key, class failure.Class, msg string, permanent bool, now time.Time) error {
	to := Pending
	if permanent {
		to = Failed
	}
	_, _, err := o.transition(ctx, k, "release outbox row",
		"SET #s = :to, last_error_class = :c, last_error = :m, updated_at = :now", []Status{Sending},
		map[string]types.AttributeValue{":to": sv(string(to)), ":c": sv(string(class)), ":m": sv(msg), ":now": sv(domain.FormatTime(now))})
	return err
}

// Reset returns an in-flight row to pending after reconciliation proved the
// earlier send did not happen.
func (o *Outbox) Reset(ctx context.Context, k Key, now time.Time) error {
	_, _, err := o.toPending(ctx, k, "reset outbox row", []Status{Sending}, now)
	return err
}

// Requeue makes an unsent row pending again: the operator's "this was not
// delivered, send it" after checking the provider (an uncertain send) or
// after fixing the recipient (a permanent failure). A sent row is never
// requeued: that would e-mail twice.
func (o *Outbox) Requeue(ctx context.Context, k Key, now time.Time) error {
	_, ok, err := o.toPending(ctx, k, "requeue outbox row", []Status{Sending, Failed}, now)
	if err == nil && !ok {
		return fmt.Errorf("requeue %s: the row is sent, pending already, or missing", k)
	}
	return err
}

func (o *Outbox) toPending(ctx context.Context, k Key, op string, from []Status, now time.Time) (*Row, bool, error) {
	return o.transition(ctx, k, op, "SET #s = :pending, updated_at = :now", from,
		map[string]types.AttributeValue{":pending": sv(string(Pending)), ":now": sv(domain.FormatTime(now))})
}

// Confirm marks an unsent row sent on an operator's word that the provider
// delivered it (an uncertain send checked by hand), so it is never resent.
func (o *Outbox) Confirm(ctx context.Context, k Key, evidence string, now time.Time) error {
	_, ok, err := o.transition(ctx, k, "confirm outbox row",
		"SET #s = :sent, notification_id = :nid, notified_at = :now, updated_at = :now", []Status{Sending},
		map[string]types.AttributeValue{":sent": sv(string(Sent)), ":nid": sv("operator-confirmed: " + evidence), ":now": sv(domain.FormatTime(now))})
	if err == nil && !ok {
		return fmt.Errorf("confirm %s: only a row whose send may have happened (status sending) can be confirmed", k)
	}
	return err
}

func classify(op string, err error) error {
	if failure.Classify(err) == failure.NetworkTimeout {
		return fmt.Errorf("%s: %w", op, err)
	}
	return failure.Wrap(failure.Upstream5xx, fmt.Errorf("%s: %w", op, err))
}
