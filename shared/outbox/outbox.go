// Package outbox owns the delivery rows — one per delivery, keyed by its
// identity (Ref: an e-mail's delivery.Key, or another channel's Item) — and the
// send-then-mark protocol around them. A row moves
//
//	(none) → sending → sent                  (Begin creates and marks it sending in one
//	                                          write; the confirmed send is marked in one)
//	pending → sending → pending              (provider refused before accepting: safe to retry)
//	pending → sending → (crash/timeout)      (send may have happened: settle before any resend)
//	        → failed                         (permanent: invalid recipient, policy)
//
// notified_at is set only after the provider accepted, so such a row is never
// sent again. Every write records a token (last_write): a retried write whose
// first attempt was applied but unanswered finds it and succeeds. Deliver runs
// the protocol for one delivery through its delivery.Channel (deliver.go).
package outbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/criticizer/criticizer/shared/awserr"
	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/store"
)

// Status of a delivery row.
type Status string

const (
	Pending Status = "pending"
	Sending Status = "sending"
	Sent    Status = "sent"
	Failed  Status = "failed"
)

// The row's key derives from the delivery key, recipient canonicalized.
func pk(k delivery.Key) string { return fmt.Sprintf("OUTBOX#%d#%d", k.Changelist, k.ReviewVersion) }
func sk(k delivery.Key) string { return "RCPT#" + k.Canonical().Recipient }

// hashedSK prefixes the sort key of a row keyed by the recipient's keyed
// hash. An address-keyed sort key always holds an '@'; a hashed one never.
const hashedSK = "RCPTH#"

// Row is one delivery.
type Row struct {
	PK             string `dynamodbav:"pk,omitempty" json:"-"`
	SK             string `dynamodbav:"sk,omitempty" json:"-"`
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
	ExpiresAt      int64  `dynamodbav:"expires_at,omitempty" json:"-"` // retention (DynamoDB TTL), epoch seconds
	// DeliveryToken is the keyed token of the Message-ID and SES tag
	// (delivery.Secret.Token): evidence is found by it after the scrub. Empty on
	// an unkeyed row.
	DeliveryToken string `dynamodbav:"delivery_token,omitempty" json:"-"`
	// SendToken names the attempt that marked the row sending, so a release or
	// reset never settles a later one.
	SendToken string `dynamodbav:"send_token,omitempty" json:"-"`
	// LastWrite is the token of the last write applied to the row.
	LastWrite string `dynamodbav:"last_write,omitempty" json:"-"`
	// Events is the row's history: every write that changed it (OB-8).
	Events []RowEvent `dynamodbav:"events,omitempty" json:"events,omitempty"`
	// Channel, Thread and Item identify a non-e-mail row (an Item).
	Channel string `dynamodbav:"delivery_channel,omitempty" json:"channel,omitempty"`
	Thread  int64  `dynamodbav:"channel_thread,omitempty" json:"thread,omitempty"`
	Item    string `dynamodbav:"channel_item,omitempty" json:"item,omitempty"`
	// LookupAfter is a channel id older than the row's first send (a Swarm
	// comment id, Bounded): that send's lookup reads only later ids. 0: reads
	// everything.
	LookupAfter int64 `dynamodbav:"lookup_after,omitempty" json:"lookup_after,omitempty"`
}

// Key returns the row's identity.
func (r *Row) Key() delivery.Key {
	return delivery.Key{Changelist: r.Changelist, Recipient: r.Recipient, ReviewVersion: r.ReviewVersion}
}

// Outbox reads and writes delivery rows in the jobs table.
type Outbox struct {
	api       store.API
	table     string
	retention time.Duration
	actor     string // who writes, for the rows' event history
	secret    *delivery.Secret
}

// WithSecret keys e-mail rows by the keyed hash of their recipient, so none
// holds an address after the scrub (DELIVERY_KEY_SECRET_ID; unit tests key
// by address).
func (o *Outbox) WithSecret(s *delivery.Secret) *Outbox {
	o.secret = s
	return o
}

// MessageID is an e-mail row's Message-ID: from its stored token, else from its
// address.
func (r *Row) MessageID(domain string) string {
	if r.DeliveryToken != "" {
		return delivery.MessageIDOf(r.Changelist, r.ReviewVersion, r.DeliveryToken, domain)
	}
	return r.Key().MessageID(domain)
}

// DefaultRetention is a row's expires_at when UNIQUENESS_RETENTION_DAYS is
// unset: a row is a delivery's identity, kept as long as the uniqueness promise.
const DefaultRetention = 365 * 24 * time.Hour

// New returns an Outbox over the table.
func New(api store.API, table string) *Outbox {
	return &Outbox{api: api, table: table, retention: DefaultRetention}
}

// WithUniquenessRetention sets how long new rows live
// (UNIQUENESS_RETENTION_DAYS); 0 keeps them forever.
func (o *Outbox) WithUniquenessRetention(d time.Duration) *Outbox {
	if d >= 0 {
		o.retention = d
	}
	return o
}

// expiresAt is the TTL of a row created at now; 0: none (forever).
func (o *Outbox) expiresAt(now time.Time) int64 {
	if o.retention == 0 {
		return 0
	}
	return now.Add(o.retention).Unix()
}

// ErrAlreadySent means the row has notified_at: never send again.
var ErrAlreadySent = errors.New("already notified")

// ErrFailed is in the chain of Begin's NOT_FOUND error for a row already failed
// for good.
var ErrFailed = errors.New("delivery failed permanently")

// failedRow is that error, naming the class the row failed with.
type failedRow string

func (c failedRow) Error() string {
	return "delivery to this recipient failed permanently: " + string(c)
}
func (failedRow) Is(target error) bool { return target == ErrFailed }

// ErrInFlight means a send was started and not confirmed: it may have
// happened, so the row must be settled before any resend.
var ErrInFlight = errors.New("send may have happened")

// InFlightError is ErrInFlight with the row: when its send started and the token
// a reset must name.
type InFlightError struct{ Row *Row }

func (e *InFlightError) Error() string {
	return "outbox row " + e.Row.Ref().String() + ": " + ErrInFlight.Error()
}

// Unwrap makes errors.Is(err, ErrInFlight) hold.
func (e *InFlightError) Unwrap() error { return ErrInFlight }

func itemKey(id Ref) map[string]types.AttributeValue {
	p, s := id.keys()
	return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: p}, "sk": &types.AttributeValueMemberS{Value: s}}
}

func sv(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

// Get reads a row with a strongly consistent read (the re-read before every send).
func (o *Outbox) Get(ctx context.Context, k Ref) (*Row, error) {
	ref := o.own(k)
	out, err := o.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &o.table, Key: itemKey(ref), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, awserr.Wrap("get outbox row", err)
	}
	if out.Item == nil {
		return nil, failure.Errorf(failure.NotFound, "outbox row %s missing", ref)
	}
	var r Row
	if err := attributevalue.UnmarshalMap(out.Item, &r); err != nil {
		return nil, failure.Wrap(failure.InternalBug, err)
	}
	return &r, nil
}

// List returns every row of a changelist version.
func (o *Outbox) List(ctx context.Context, changelist int64, version int) ([]Row, error) {
	return o.query(ctx, pk(delivery.Key{Changelist: changelist, ReviewVersion: version}))
}

// query reads every page of a partition: a review's thread can outgrow one
// answer (1 MB), and a rerun that missed a row would comment a finding twice.
func (o *Outbox) query(ctx context.Context, partition string) ([]Row, error) {
	return decodeAll[Row](store.Partition(ctx, o.api, o.table, partition, "list outbox rows"))
}

func decodeAll[T any](items []map[string]types.AttributeValue, err error) ([]T, error) {
	var out []T
	if err == nil {
		if err = attributevalue.UnmarshalListOfMaps(items, &out); err != nil {
			return nil, failure.Wrap(failure.InternalBug, err)
		}
	}
	return out, err
}

// transition applies set to an unsent row in one of the from states (any when
// empty), as one owned write recording tok; see write.
func (o *Outbox) transition(ctx context.Context, k Ref, op, tok, set string, from []Status, extra string, values map[string]types.AttributeValue) (old *Row, ok bool, err error) {
	cond := "attribute_exists(pk) AND attribute_not_exists(notified_at)"
	fromNames := []string{"unsent"}
	if len(from) > 0 {
		cond += " AND " + store.In("#s", ":from", from, values)
		fromNames = statusNames(from)
	}
	if extra != "" {
		cond += " AND " + extra
	}
	return o.write(ctx, k, op, tok, set, cond, fromNames, values)
}

// write applies set under cond as one conditional write recording tok
// (last_write) and the row event op. ok is false when cond did not hold; old is
// then the row (nil if missing). A row whose last_write is tok was written by an
// unanswered earlier attempt of this write: ok. Every owned write of the outbox
// comes through here.
func (o *Outbox) write(ctx context.Context, k Ref, op, tok, set, cond string, from []string, values map[string]types.AttributeValue) (old *Row, ok bool, err error) {
	k = o.own(k)
	set = store.AddSet(set, "last_write = :wtoken")
	values[":wtoken"] = sv(tok)
	set = o.withEvent(set, values, op, from)
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
		return &r, r.LastWrite == tok, nil
	case err != nil:
		return nil, false, awserr.Wrap(op, err)
	}
	return nil, true, nil
}

// Send is a send attempt recorded by Begin.
type Send struct {
	Token string // names this attempt in Release and Reset
	Row   *Row   // the row as Begin left it (sending)
}

// Begin records the intent to send — creating the row if needed and marking it
// sending, in one conditional write — only if it is unsent with no send in
// flight. It returns ErrAlreadySent, an *InFlightError, or NOT_FOUND for a row
// failed for good. It is the only way a row comes to exist.
func (o *Outbox) Begin(ctx context.Context, k Ref, jobID string, now time.Time) (*Send, error) {
	k = o.own(k)
	tok := uuid.NewString()
	values := map[string]types.AttributeValue{":sending": sv(string(Sending)), ":pending": sv(string(Pending)), ":now": sv(job.FormatTime(now)),
		":one": &types.AttributeValueMemberN{Value: "1"}, ":zero": &types.AttributeValueMemberN{Value: "0"}, ":tok": sv(tok)}
	set := "SET #s = :sending, send_started_at = :now, updated_at = :now, attempts = if_not_exists(attempts, :zero) + :one," +
		" send_token = :tok, last_write = :tok"
	set = store.AddSet(k.created(set, values), "job_id = if_not_exists(job_id, :job), created_at = if_not_exists(created_at, :now)")
	values[":job"] = sv(jobID)
	if exp := o.expiresAt(now); exp != 0 {
		set = store.AddSet(set, "expires_at = if_not_exists(expires_at, :exp)")
		values[":exp"] = &types.AttributeValueMemberN{Value: fmt.Sprint(exp)}
	}
	cond := "attribute_not_exists(pk) OR (#s = :pending AND attribute_not_exists(notified_at))"
	set = inDoubt(set, values, Sending, job.FormatTime(now)) // in flight: in the doubt index until settled
	set = o.withEvent(set, values, "begin send", []string{"new", string(Pending)})
	out, err := o.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &o.table, Key: itemKey(k),
		UpdateExpression: aws.String(set), ConditionExpression: aws.String(cond),
		ExpressionAttributeNames: map[string]string{"#s": "status"}, ExpressionAttributeValues: values,
		ReturnValues: types.ReturnValueAllNew, ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	switch {
	case err == nil:
		var r Row
		if err := attributevalue.UnmarshalMap(out.Attributes, &r); err != nil {
			return nil, failure.Wrap(failure.InternalBug, err)
		}
		return &Send{Token: tok, Row: &r}, nil
	case !errors.As(err, &ccf):
		return nil, awserr.Wrap("begin send", err)
	case ccf.Item == nil:
		return nil, failure.Errorf(failure.InternalBug, "outbox row %s missing", k)
	}
	var old Row
	if err := attributevalue.UnmarshalMap(ccf.Item, &old); err != nil {
		return nil, failure.Wrap(failure.InternalBug, err)
	}
	switch {
	case old.LastWrite == tok:
		// This very write was applied and its answer lost.
		return &Send{Token: tok, Row: &old}, nil
	case old.NotifiedAt != "":
		return nil, ErrAlreadySent
	case old.Status == Sending:
		return nil, &InFlightError{Row: &old}
	case old.Status == Failed:
		return nil, failure.Wrap(failure.NotFound, failedRow(old.LastErrorClass))
	case old.Status == Reconciling:
		return nil, failure.Errorf(failure.Conflict, "outbox row is being reconciled: no send until it is settled")
	}
	return nil, failure.Errorf(failure.Conflict, "outbox row in unexpected state %q", old.Status)
}

// MarkSent records the provider's acceptance (notification id, notified_at,
// status) in one write; a row already marked stays as it is.
func (o *Outbox) MarkSent(ctx context.Context, k Ref, notificationID string, now time.Time) error {
	values := map[string]types.AttributeValue{":sent": sv(string(Sent)), ":nid": sv(notificationID), ":now": sv(job.FormatTime(now))}
	// Sent, awaiting the reconciler's verification: still in the doubt index.
	set := sentDoubt(k, "SET #s = :sent, notification_id = :nid, notified_at = :now, updated_at = :now REMOVE last_error, last_error_class",
		values, job.FormatTime(now))
	old, ok, err := o.transition(ctx, k, "mark sent", "sent/"+notificationID, set, nil, "", values)
	switch {
	case err != nil || ok:
		return err
	case old == nil:
		return failure.Errorf(failure.InternalBug, "mark sent: outbox row %s missing", k)
	}
	return nil // notified already: the row says sent, which is the point
}

// Release records that the attempt named by sendToken certainly did not happen:
// permanent failures end the row, transient ones make it pending.
func (o *Outbox) Release(ctx context.Context, k Ref, sendToken string, class failure.Class, msg string, permanent bool, now time.Time) error {
	to := Pending
	if permanent {
		to = Failed
	}
	old, ok, err := o.transition(ctx, k, "release outbox row", sendToken+"/release",
		outOfDoubt("SET #s = :to, last_error_class = :c, last_error = :m, updated_at = :now"), []Status{Sending}, "send_token = :stok",
		map[string]types.AttributeValue{":to": sv(string(to)), ":c": sv(string(class)), ":m": sv(msg), ":now": sv(job.FormatTime(now)), ":stok": sv(sendToken)})
	if err == nil && !ok {
		return fmt.Errorf("release %s: the row moved on (%s): %w", k, statusOf(old), ErrConflict)
	}
	return err
}

// Reset returns an in-flight row to pending after settling proved the
// earlier send (named by its token) did not happen.
func (o *Outbox) Reset(ctx context.Context, k Ref, sendToken string, now time.Time) error {
	old, ok, err := o.transition(ctx, k, "reset outbox row", sendToken+"/reset", outOfDoubt("SET #s = :pending, updated_at = :now"), []Status{Sending}, "send_token = :stok",
		map[string]types.AttributeValue{":pending": sv(string(Pending)), ":now": sv(job.FormatTime(now)), ":stok": sv(sendToken)})
	if err == nil && !ok {
		return fmt.Errorf("reset %s: the row moved on (%s): %w", k, statusOf(old), ErrConflict)
	}
	return err
}

// ErrConflict means a row was not in the state a write expected.
var ErrConflict = errors.New("outbox row moved on")

func statusOf(r *Row) string {
	if r == nil {
		return "missing"
	}
	if r.NotifiedAt != "" {
		return "notified"
	}
	return string(r.Status)
}

// Requeue makes an unsent row pending again: the operator's "send it" after
// checking the provider or fixing the recipient, for any channel. A sent row is
// never requeued: that would deliver twice.
func (o *Outbox) Requeue(ctx context.Context, k Ref, now time.Time) error {
	_, ok, err := o.transition(ctx, k, "requeue outbox row", "requeue/"+uuid.NewString(), outOfDoubt("SET #s = :pending, updated_at = :now"),
		[]Status{Sending, Failed}, "", map[string]types.AttributeValue{":pending": sv(string(Pending)), ":now": sv(job.FormatTime(now))})
	if err == nil && !ok {
		return fmt.Errorf("requeue %s: the row is sent, pending already, or missing", k)
	}
	return err
}

// Confirm marks a sending row sent on an operator's word that the provider
// delivered it, so it is never resent.
func (o *Outbox) Confirm(ctx context.Context, k Ref, evidence string, now time.Time) error {
	values := map[string]types.AttributeValue{":sent": sv(string(Sent)), ":nid": sv("operator-confirmed: " + evidence), ":now": sv(job.FormatTime(now))}
	set := sentDoubt(k, "SET #s = :sent, notification_id = :nid, notified_at = :now, updated_at = :now", values, job.FormatTime(now))
	_, ok, err := o.transition(ctx, k, "confirm outbox row", "confirm/"+uuid.NewString(), set, []Status{Sending}, "", values)
	if err == nil && !ok {
		return fmt.Errorf("confirm %s: only a row whose send may have happened (status sending) can be confirmed", k)
	}
	return err
}
