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
	if _, err := o.Begin(ctx, Email(k), "job-1", sentAt); err != nil {
		t.Fatal(err)
	}
	if err := o.MarkSent(ctx, Email(k), "provider-id", sentAt); err != nil {
		t.Fatal(err)
	}
	scrubAll(t, d, o, t0.Add(-30*day), t0)
	if found := mentions(t, d, "alice.smith"); len(found) > 0 {
		t.Fatalf("a year-old delivery row still holds the address: %v", found)
	}

	_, err := o.Begin(ctx, Email(delivery.Key{Changelist: 4711, Recipient: " alice.smith@example.COM ", ReviewVersion: 2}), "job-2", t0)
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
	if err := o.Requeue(ctx, r.Ref(), t0); err == nil {
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

// Rule ID-3 for a row sent again after its data scrub (a requeue a year
// later): the send writes the address again, and the next scan removes it
// again instead of keeping it for the row's life.
func TestRowSentAgainAfterTheScrubIsScrubbedAgain(t *testing.T) {
	ctx := context.Background()
	day := 24 * time.Hour
	d := dynamotest.New()
	o := New(d, dynamotest.Table).WithSecret(testSecret(t, strings.Repeat("r", 32)))
	k := delivery.Key{Changelist: 21, Recipient: "erin@example.com", ReviewVersion: 1}
	s, err := o.Begin(ctx, Email(k), "job", t0.Add(-300*day))
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Release(ctx, Email(k), s.Token, "SMTP_TRANSIENT", "x", false, t0.Add(-300*day)); err != nil {
		t.Fatal(err)
	}
	scrubAll(t, d, o, t0.Add(-30*day), t0)
	if _, err := o.Begin(ctx, Email(k), "job", t0); err != nil {
		t.Fatal(err)
	}
	if err := o.MarkSent(ctx, Email(k), "id", t0); err != nil {
		t.Fatal(err)
	}
	if found := mentions(t, d, "erin"); len(found) != 1 {
		t.Fatalf("the row sent again: %v; want it to name its recipient until the scrub", found)
	}
	scrubAll(t, d, o, t0.Add(-30*day), t0.Add(day))
	if found := mentions(t, d, "erin"); len(found) > 0 {
		t.Errorf("a row sent again after its scrub keeps the address: %v", found)
	}
	if _, err := o.Begin(ctx, Email(k), "job", t0.Add(day)); !errors.Is(err, ErrAlreadySent) {
		t.Errorf("resend: %v, want ErrAlreadySent", err)
	}
}
