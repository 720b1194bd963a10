package outbox

import (
	"context"
	"errors"
	"maps"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/awserr"
	"github.com/criticizer/criticizer/shared/job"
)

// dataFields are what a delivery row holds beyond the uniqueness promise:
// the last error text, the event history (operator names among it), the
// reconciliation note and the recipient's address (a keyed row is named by
// the address's keyed hash and keeps the keyed token: delivery.Secret). They keep the data retention; the row itself — its
// key, status, notified_at, the provider's message id — keeps the
// uniqueness retention, so a delivery is still never repeated.
const dataFields = "last_error, events, reconcile_reason, recipient"

// Scrub is the data scrub as work on the retention check's scan (so the
// table is read once a day for both; it satisfies retention.Also): outbox
// rows created before the cutoff (now − RETENTION_DAYS) and not yet scrubbed
// lose their data fields, once per row (scrubbed_at), each by a conditional
// write that never touches status or notified_at.
type Scrub struct {
	o       *Outbox
	cutoff  string
	now     time.Time
	Filter  string
	Values  map[string]types.AttributeValue
	Project []string
}

// Scrubber is the scrub of rows created before cutoff.
//
// With a delivery key (WithSecret) the scrub also moves a row written
// before the key — keyed by the address, "RCPT#<address>" — to its keyed
// row, so the address leaves its sort key too; a row still in doubt (the
// doubt index: its Message-ID is the unkeyed one the reconciler looks up)
// is scrubbed in place and moved on a later scan, once settled.
func (o *Outbox) Scrubber(cutoff, now time.Time) *Scrub {
	at := job.FormatTime(cutoff)
	s := &Scrub{o: o, cutoff: at, now: now,
		Filter:  "begins_with(pk, :outbox) AND created_at < :scrubcut AND attribute_not_exists(scrubbed_at)",
		Values:  map[string]types.AttributeValue{":outbox": sv("OUTBOX#"), ":scrubcut": sv(at)},
		Project: []string{"created_at", "scrubbed_at"},
	}
	if o.secret != nil {
		s.Filter = "begins_with(pk, :outbox) AND created_at < :scrubcut AND (attribute_not_exists(scrubbed_at) OR begins_with(sk, :addrkey))"
		s.Values[":addrkey"] = sv(addressSK)
	}
	return s
}

// addressSK prefixes the sort key of a row keyed by the address; a keyed
// row's hashedSK ("RCPTH#") does not begin with it.
const addressSK = "RCPT#"

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
	return !scrubbed || (s.o.secret != nil && isAddressKeyed(item))
}

func isAddressKeyed(item map[string]types.AttributeValue) bool {
	sk, _ := item["sk"].(*types.AttributeValueMemberS)
	return sk != nil && strings.HasPrefix(sk.Value, addressSK)
}

// Visit scrubs one matched row, and with a delivery key moves an
// address-keyed one to its keyed row.
func (s *Scrub) Visit(ctx context.Context, item map[string]types.AttributeValue) error {
	key := map[string]types.AttributeValue{"pk": item["pk"], "sk": item["sk"]}
	if err := s.o.scrub(ctx, key, s.cutoff, s.now); err != nil {
		return err
	}
	if s.o.secret != nil && isAddressKeyed(item) {
		return s.o.move(ctx, key, s.now)
	}
	return nil
}

// move replaces a settled address-keyed row by its keyed row, in one
// transaction that requires the row unchanged since it was read and
// still out of doubt. The copy keeps the uniqueness part; the e-mail's
// Message-ID, whose token is the unkeyed hash of the address, is not kept
// (nothing looks a settled row's message up again). A refused move is
// tried again on the next scan.
func (o *Outbox) move(ctx context.Context, key map[string]types.AttributeValue, now time.Time) error {
	out, err := o.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &o.table, Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return awserr.Wrap("read address-keyed outbox row", err)
	}
	old := out.Item
	if old == nil {
		return nil
	}
	if _, inDoubt := old[DoubtAttr]; inDoubt {
		return nil
	}
	sk, _ := old["sk"].(*types.AttributeValueMemberS)
	if sk == nil {
		return nil
	}
	moved := maps.Clone(old)
	for _, f := range strings.Split(dataFields, ", ") {
		delete(moved, f)
	}
	moved["sk"] = sv(hashedSK + o.secret.Recipient(strings.TrimPrefix(sk.Value, addressSK)))
	moved["scrubbed_at"], moved["moved_at"] = sv(job.FormatTime(now)), sv(job.FormatTime(now))
	delete(moved, "notification_id") // an SMTP relay's is the unkeyed Message-ID
	cond, values := "attribute_not_exists(#d) AND attribute_not_exists(last_write)", map[string]types.AttributeValue(nil)
	if lw, ok := old["last_write"]; ok {
		cond, values = "attribute_not_exists(#d) AND last_write = :lw", map[string]types.AttributeValue{":lw": lw}
	}
	_, err = o.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: &o.table, Item: moved, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
		{Delete: &types.Delete{TableName: &o.table, Key: key, ConditionExpression: aws.String(cond),
			ExpressionAttributeNames: map[string]string{"#d": DoubtAttr}, ExpressionAttributeValues: values}},
	}})
	var tce *types.TransactionCanceledException
	if err != nil && !errors.As(err, &tce) {
		return awserr.Wrap("move address-keyed outbox row", err)
	}
	return nil
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
