package outbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/store"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
)

func testSecret(t *testing.T, value string) *delivery.Secret {
	t.Helper()
	s, err := delivery.NewSecret(value)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// scrubAll runs the data scrub over the whole in-process table, as the
// retention scan does: every matching row is visited.
func scrubAll(t *testing.T, d *dynamotest.Dynamo, o *Outbox, cutoff, now time.Time) {
	t.Helper()
	out, err := d.Scan(context.Background(), &dynamodb.ScanInput{TableName: new(string)})
	if err != nil {
		t.Fatal(err)
	}
	s := o.Scrubber(cutoff, now)
	for _, item := range out.Items {
		if s.Match(item) {
			if err := s.Visit(context.Background(), item); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// mentions reports the table's items that mention what, in any key or
// attribute (case-insensitively).
func mentions(t *testing.T, d *dynamotest.Dynamo, what string) []string {
	t.Helper()
	out, err := d.Scan(context.Background(), &dynamodb.ScanInput{TableName: new(string)})
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, item := range out.Items {
		if text := fmt.Sprint(flatten(item)); strings.Contains(strings.ToLower(text), strings.ToLower(what)) {
			found = append(found, text)
		}
	}
	return found
}

func flatten(item map[string]types.AttributeValue) map[string]any {
	out := map[string]any{}
	for k, v := range item {
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			out[k] = v.Value
		case *types.AttributeValueMemberN:
			out[k] = v.Value
		case *types.AttributeValueMemberL:
			var l []any
			for _, e := range v.Value {
				if m, ok := e.(*types.AttributeValueMemberM); ok {
					l = append(l, flatten(m.Value))
				}
			}
			out[k] = l
		case *types.AttributeValueMemberM:
			out[k] = flatten(v.Value)
		}
	}
	return out
}

// Rules ID-3 and OB-1 together: a uniqueness record a year old, scrubbed of
// its data at the data retention, holds no address anywhere, yet still
// refuses a resend to the same mailbox, however it is spelled, and still
// names the e-mail's Message-ID (its stored keyed token), by which the
// provider's evidence is found.
func TestYearOldRowWithoutAddressBlocksResend(t *testing.T) {
	ctx := context.Background()
	day := 24 * time.Hour
	d := dynamotest.New()
	key := testSecret(t, "0123456789abcdef0123456789abcdef-delivery-key")
	o := New(d, dynamotest.Table).WithSecret(key)
	k := delivery.Key{Changelist: 4711, Recipient: "Alice.Smith@Example.com", ReviewVersion: 2}
	sentAt := t0.Add(-364 * day)
	if _, err := o.Begin(ctx, k, "job-1", sentAt); err != nil {
		t.Fatal(err)
	}
	if err := o.MarkSent(ctx, k, "provider-id", sentAt); err != nil {
		t.Fatal(err)
	}
	scrubAll(t, d, o, t0.Add(-30*day), t0)
	if found := mentions(t, d, "alice.smith"); len(found) > 0 {
		t.Fatalf("a year-old delivery row still holds the address: %v", found)
	}

	_, err := o.Begin(ctx, delivery.Key{Changelist: 4711, Recipient: " alice.smith@example.COM ", ReviewVersion: 2}, "job-2", t0)
	if !errors.Is(err, ErrAlreadySent) {
		t.Fatalf("resend to the same mailbox a year later: %v, want ErrAlreadySent", err)
	}
	rows, err := o.List(ctx, 4711, 2)
	if err != nil || len(rows) != 1 {
		t.Fatalf("rows %+v, %v: want the one", rows, err)
	}
	r := rows[0]
	if want := delivery.MessageIDOf(4711, 2, key.Token(k), "example.com"); r.Recipient != "" || r.MessageID("example.com") != want {
		t.Errorf("scrubbed row: recipient %q, Message-ID %s; want none and %s", r.Recipient, r.MessageID("example.com"), want)
	}
	if r.Ref().String() != "4711/v2/"+r.Addressee() || !strings.HasPrefix(r.Addressee(), "~") {
		t.Errorf("scrubbed row named %q / %q: want its hashed name", r.Ref(), r.Addressee())
	}
	// The row is still settled by the name it is read with.
	if err := o.RequeueRef(ctx, r.Ref(), t0); err == nil {
		t.Error("a sent row was requeued")
	}
}

// The row key and the token are keyed: another delivery key (another
// deployment, or the key computed without the secret) names another row,
// and the same key names the same one.
func TestRecipientHashIsKeyed(t *testing.T) {
	a := testSecret(t, strings.Repeat("a", 32))
	b := testSecret(t, strings.Repeat("b", 32))
	if a.Recipient("x@example.com") == b.Recipient("x@example.com") || a.Token(delivery.Key{Changelist: 1, Recipient: "x@example.com", ReviewVersion: 1}) == b.Token(delivery.Key{Changelist: 1, Recipient: "x@example.com", ReviewVersion: 1}) {
		t.Error("two delivery keys hash a recipient alike")
	}
	if a.Recipient(" X@Example.com") != a.Recipient("x@example.com") {
		t.Error("two spellings of one mailbox hash differently (OB-1)")
	}
	if _, err := delivery.NewSecret("short"); err == nil {
		t.Error("a 5-byte delivery key was accepted")
	}
}

// Rows written before the outbox had a delivery key (keyed by the address)
// keep working: a keyed outbox finds them, refuses a resend of a sent one,
// sends a pending one under its own row (never a second, keyed row), and
// the scrub removes their recipient attribute at the data retention.
func TestAddressKeyedRowsKeepWorking(t *testing.T) {
	ctx := context.Background()
	day := 24 * time.Hour
	d := dynamotest.New()
	before := New(d, dynamotest.Table)
	sent := delivery.Key{Changelist: 9, Recipient: "bob@example.com", ReviewVersion: 1}
	pending := delivery.Key{Changelist: 9, Recipient: "carol@example.com", ReviewVersion: 1}
	for _, k := range []delivery.Key{sent, pending} {
		s, err := before.Begin(ctx, k, "job", t0.Add(-40*day))
		if err != nil {
			t.Fatal(err)
		}
		if k == sent {
			err = before.MarkSent(ctx, k, "id", t0.Add(-40*day))
		} else {
			err = before.Release(ctx, k, s.Token, "SMTP_TRANSIENT", "x", false, t0.Add(-40*day))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	o := New(d, dynamotest.Table).WithSecret(testSecret(t, strings.Repeat("k", 40)))
	if _, err := o.Begin(ctx, sent, "job-2", t0); !errors.Is(err, ErrAlreadySent) {
		t.Fatalf("resend of an address-keyed sent row: %v, want ErrAlreadySent", err)
	}
	s, err := o.Begin(ctx, pending, "job-2", t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.MarkSent(ctx, pending, "id2", t0); err != nil {
		t.Fatal(err)
	}
	rows, _ := o.List(ctx, 9, 1)
	if len(rows) != 2 || s.Row.Recipient != "carol@example.com" {
		t.Fatalf("rows %+v: want the two address-keyed rows and no new one", rows)
	}
	if r, err := o.Get(ctx, pending); err != nil || r.Status != Sent || r.MessageID("example.com") != pending.MessageID("example.com") {
		t.Errorf("carol's row %+v, %v: want sent, with the Message-ID it was sent under", r, err)
	}
	scrubAll(t, d, o, t0.Add(-30*day), t0)
	rows, _ = o.List(ctx, 9, 1)
	for _, r := range rows {
		if r.Recipient != "" {
			t.Errorf("scrubbed address-keyed row keeps recipient %q", r.Recipient)
		}
		// Still named, and its e-mail still found, by its own key.
		if k := r.Key(); r.Ref().String() != k.String() || r.MessageID("example.com") != k.MessageID("example.com") || (k != sent && k != pending) {
			t.Errorf("scrubbed address-keyed row named %s / %s", r.Ref(), r.MessageID("example.com"))
		}
	}
	if err := o.RequeueRef(ctx, rows[0].Ref(), t0); err == nil {
		t.Error("a sent address-keyed row was requeued")
	}
}

// countingAPI counts the outbox's requests.
type countingAPI struct {
	store.API
	n int
}

func (c *countingAPI) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	c.n++
	return c.API.GetItem(ctx, in, o...)
}
func (c *countingAPI) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	c.n++
	return c.API.UpdateItem(ctx, in, o...)
}
func (c *countingAPI) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	c.n++
	return c.API.Query(ctx, in, o...)
}

// Rule OB-7 with a delivery key: looking for address-keyed rows costs one
// Query per changelist version (not per recipient), and none once no such
// row can remain (the key's creation plus the uniqueness retention).
func TestAddressKeyedLookupIsBounded(t *testing.T) {
	ctx := context.Background()
	key := testSecret(t, strings.Repeat("q", 32))
	for _, tt := range []struct {
		until time.Time
		want  int
	}{{time.Time{}, 1 + 3*2}, {time.Now().Add(time.Hour), 1 + 3*2}, {time.Now().Add(-time.Hour), 3 * 2}} {
		c := &countingAPI{API: dynamotest.New()}
		o := New(c, dynamotest.Table).WithSecret(key).WithAddressKeyedUntil(tt.until)
		for i := 0; i < 3; i++ {
			k := delivery.Key{Changelist: 5, Recipient: fmt.Sprintf("dev%d@example.com", i), ReviewVersion: 1}
			if _, err := o.Begin(ctx, k, "job", t0); err != nil {
				t.Fatal(err)
			}
			if err := o.MarkSent(ctx, k, "id", t0); err != nil {
				t.Fatal(err)
			}
		}
		if c.n != tt.want {
			t.Errorf("until %v: %d requests for 3 deliveries, want %d", tt.until, c.n, tt.want)
		}
	}
}

// Rule ID-3 for rows written before the delivery key: at the data retention
// the scrub moves a settled address-keyed row to its keyed row, so no key
// or attribute names the recipient; a row still in doubt is scrubbed in
// place and moved once settled. A notify stage that knew the old row
// follows it to the keyed one: a sent delivery stays sent, a pending one is
// sent under the keyed row.
func TestAddressKeyedRowsAreMovedAtTheDataRetention(t *testing.T) {
	ctx := context.Background()
	day := 24 * time.Hour
	d := dynamotest.New()
	before := New(d, dynamotest.Table)
	key := func(who string) delivery.Key {
		return delivery.Key{Changelist: 11, Recipient: who + "@example.com", ReviewVersion: 1}
	}
	at := t0.Add(-40 * day)
	var danToken string
	for _, who := range []string{"bob", "carol", "dan"} {
		s, err := before.Begin(ctx, key(who), "job", at)
		if err != nil {
			t.Fatal(err)
		}
		switch who {
		case "bob":
			err = before.MarkSent(ctx, key(who), "<cl11.v1.x@localhost>", at)
			if err == nil {
				err = before.Verified(ctx, Email(key(who)), at)
			}
		case "carol":
			err = before.Release(ctx, key(who), s.Token, "SMTP_TRANSIENT", "x", false, at)
		case "dan":
			danToken = s.Token // in doubt: sending
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	secret := testSecret(t, strings.Repeat("m", 40))
	n := New(d, dynamotest.Table).WithSecret(secret) // a warm notify stage that has seen the old rows
	if _, err := n.Begin(ctx, key("dan"), "job", t0); !errors.Is(err, ErrInFlight) {
		t.Fatalf("dan: %v, want in flight", err)
	}
	o := New(d, dynamotest.Table).WithSecret(secret) // the sweeper's
	scrubAll(t, d, o, t0.Add(-30*day), t0)
	for _, who := range []string{"bob", "carol"} {
		if found := mentions(t, d, who); len(found) > 0 {
			t.Errorf("%s's settled row still names the address after the scrub: %v", who, found)
		}
	}
	if found := mentions(t, d, "dan"); len(found) != 1 || strings.Contains(found[0], "recipient:") {
		t.Errorf("dan's row in doubt: %v; want it in place, without its recipient attribute", found)
	}
	if _, err := n.Begin(ctx, key("Bob"), "job", t0); !errors.Is(err, ErrAlreadySent) {
		t.Errorf("bob after the move: %v, want ErrAlreadySent", err)
	}
	s, err := n.Begin(ctx, key("carol"), "job", t0)
	if err != nil || s.Row.Attempts != 2 || s.Row.DeliveryToken != secret.Token(key("carol")) {
		t.Errorf("carol after the move: %+v, %v; want her moved row sending, attempt 2, with the keyed token", s, err)
	}
	if err := n.Reset(ctx, key("dan"), danToken, t0); err != nil { // settled: the send never happened
		t.Fatal(err)
	}
	scrubAll(t, d, o, t0.Add(-30*day), t0)
	if found := mentions(t, d, "dan"); len(found) > 0 {
		t.Errorf("dan's settled row was not moved on the next scan: %v", found)
	}
	rows, err := o.List(ctx, 11, 1)
	if err != nil || len(rows) != 3 {
		t.Fatalf("rows %+v, %v: want bob's, carol's and dan's, once each", rows, err)
	}
}

// Rule ID-3 for a row sent again after its data scrub (a requeue a year
// later): the send writes the address again, and the next scan removes it
// again instead of keeping it for the row's life.
func TestRowSentAgainAfterTheScrubIsScrubbedAgain(t *testing.T) {
	ctx := context.Background()
	day := 24 * time.Hour
	d := dynamotest.New()
	o := New(d, dynamotest.Table).WithSecret(testSecret(t, strings.Repeat("r", 32)))
	k := delivery.Key{Changelist: 21, Recipient: "erin@example.com", ReviewVersion: 1}
	s, err := o.Begin(ctx, k, "job", t0.Add(-300*day))
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Release(ctx, k, s.Token, "SMTP_TRANSIENT", "x", false, t0.Add(-300*day)); err != nil {
		t.Fatal(err)
	}
	scrubAll(t, d, o, t0.Add(-30*day), t0)
	if _, err := o.Begin(ctx, k, "job", t0); err != nil {
		t.Fatal(err)
	}
	if err := o.MarkSent(ctx, k, "id", t0); err != nil {
		t.Fatal(err)
	}
	if found := mentions(t, d, "erin"); len(found) != 1 {
		t.Fatalf("the row sent again: %v; want it to name its recipient until the scrub", found)
	}
	scrubAll(t, d, o, t0.Add(-30*day), t0.Add(day))
	if found := mentions(t, d, "erin"); len(found) > 0 {
		t.Errorf("a row sent again after its scrub keeps the address: %v", found)
	}
	if _, err := o.Begin(ctx, k, "job", t0.Add(day)); !errors.Is(err, ErrAlreadySent) {
		t.Errorf("resend: %v, want ErrAlreadySent", err)
	}
}
