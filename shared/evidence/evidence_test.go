package evidence

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/obs"
)

// fakeTable is an in-memory table keyed by (pk, sk): PutItem overwrites,
// Query returns one partition in sort-key order.
type fakeTable struct {
	mu    sync.Mutex
	items map[string]map[string]map[string]types.AttributeValue
	err   error
}

func newFakeTable() *fakeTable {
	return &fakeTable{items: map[string]map[string]map[string]types.AttributeValue{}}
}

func s(av types.AttributeValue) string { return av.(*types.AttributeValueMemberS).Value }

func (f *fakeTable) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	pk, sk := s(in.Item["pk"]), s(in.Item["sk"])
	if f.items[pk] == nil {
		f.items[pk] = map[string]map[string]types.AttributeValue{}
	}
	f.items[pk][sk] = in.Item
	return &dynamodb.PutItemOutput{}, nil
}

func (f *fakeTable) Query(_ context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	part := f.items[s(in.ExpressionAttributeValues[":pk"])]
	var sks []string
	for sk := range part {
		sks = append(sks, sk)
	}
	sort.Strings(sks)
	out := &dynamodb.QueryOutput{}
	for _, sk := range sks {
		out.Items = append(out.Items, part[sk])
	}
	return out, nil
}

func (f *fakeTable) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, p := range f.items {
		n += len(p)
	}
	return n
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sns wraps SES events as Lambda receives them from an SNS topic.
func sns(t *testing.T, events ...[]byte) []byte {
	t.Helper()
	var recs []map[string]any
	for i, e := range events {
		recs = append(recs, map[string]any{"EventSource": "aws:sns", "EventVersion": "1.0",
			"EventSubscriptionArn": "arn:aws:sns:us-east-1:123456789012:ses-events:sub",
			"Sns": map[string]any{"Type": "Notification", "MessageId": "sns-" + string(rune('a'+i)),
				"TopicArn": "arn:aws:sns:us-east-1:123456789012:ses-events", "Message": string(e), "Timestamp": "2026-11-22T10:00:03.000Z"}})
	}
	b, _ := json.Marshal(map[string]any{"Records": recs})
	return b
}

// eventBridge wraps one SES event as an EventBridge rule delivers it.
func eventBridge(t *testing.T, detailType string, event []byte) []byte {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"version": "0", "id": "eb-1", "detail-type": detailType, "source": "aws.ses",
		"account": "123456789012", "time": "2026-11-22T10:00:03Z", "region": "us-east-1", "detail": json.RawMessage(event)})
	return b
}

func TestTag(t *testing.T) {
	tests := []struct{ in, want string }{
		{"<cl4242.v1.0123456789abcdef0123456789abcdef@example.com>", "cl4242_v1_0123456789abcdef0123456789abcdef"},
		{" cl7.v2.ab@criticizer.invalid ", "cl7_v2_ab"},
		{"<a+b=c@x>", "a_b_c"},
	}
	for _, tt := range tests {
		if got := Tag(tt.in); got != tt.want {
			t.Errorf("Tag(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseSES(t *testing.T) {
	send, bounce, reject, untagged := fixture(t, "ses-send.json"), fixture(t, "ses-bounce.json"), fixture(t, "ses-reject.json"), fixture(t, "ses-untagged.json")
	tests := []struct {
		name         string
		payload      []byte
		want         []EventType
		wantUntagged int
		wantErr      bool
	}{
		{"SNS with several records", sns(t, send, bounce, untagged), []EventType{Send, Bounce}, 1, false},
		{"EventBridge", eventBridge(t, "Email Rejected", reject), []EventType{Reject}, 0, false},
		{"bare event", send, []EventType{Send}, 0, false},
		{"SES notification format", []byte(`{"notificationType":"Delivery","mail":{"messageId":"m1","tags":{"criticizer-outbox":["cl1_v1_aa"]}}}`), []EventType{Delivery}, 0, false},
		{"not JSON", []byte(`<xml/>`), nil, 0, true},
		{"SNS record that is not JSON", sns(t, []byte("not json")), nil, 0, true},
		{"no message id", []byte(`{"eventType":"Send","mail":{}}`), nil, 0, true},
		{"EventBridge from another source", []byte(`{"source":"aws.s3","detail":{"eventType":"Send"}}`), nil, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events, n, err := ParseSES(tt.payload)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if err != nil && failure.Classify(err) != failure.SchemaInvalid {
				t.Errorf("class = %s, want SCHEMA_INVALID", failure.Classify(err))
			}
			var got []EventType
			for _, e := range events {
				got = append(got, e.Type)
			}
			if len(got) != len(tt.want) || n != tt.wantUntagged {
				t.Fatalf("events %v (untagged %d), want %v (untagged %d)", got, n, tt.want, tt.wantUntagged)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("event %d = %s, want %s", i, got[i], tt.want[i])
				}
			}
		})
	}
	events, _, _ := ParseSES(bounce)
	if e := events[0]; e.Tag != "cl4242_v1_fedcba9876543210fedcba9876543210" || e.ProviderMessageID != "0100019a-ses-bounce-0001" || e.BounceType != "Permanent" || e.At != "2026-11-22T10:00:00.500Z" {
		t.Errorf("bounce parsed as %+v", e)
	}
}

const sentID = "<cl4242.v1.0123456789abcdef0123456789abcdef@example.com>"

// The notify stage's lookup answers from the SES events recorded through
// the sesevents function's path: a Send event proves acceptance, a Reject
// does not, and nothing recorded means no evidence.
func TestDeliveredFromSESEvents(t *testing.T) {
	ctx := context.Background()
	table := newFakeTable()
	l := New(table, "jobs", 0)
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	var metrics bytes.Buffer
	m := obs.NewMetrics(&metrics, "test")

	if ok, err := l.Delivered(ctx, sentID); err != nil || ok {
		t.Fatalf("before any event: Delivered = %v, %v; want false", ok, err)
	}
	rep, err := l.HandleSES(ctx, sns(t, fixture(t, "ses-send.json"), fixture(t, "ses-reject.json"), fixture(t, "ses-untagged.json")), log, m)
	if err != nil || rep.Recorded != 2 || rep.Untagged != 1 {
		t.Fatalf("HandleSES = %+v, %v; want 2 recorded, 1 untagged", rep, err)
	}
	if ok, err := l.Delivered(ctx, sentID); err != nil || !ok {
		t.Errorf("after its Send event: Delivered = %v, %v; want true", ok, err)
	}
	if ok, _ := l.Delivered(ctx, "<cl4242.v1.00000000000000000000000000000000@example.com>"); ok {
		t.Error("a rejected message counts as delivered: a resend would be refused as well, but it was never sent")
	}
	// SNS delivers at least once: the same event again is one record.
	if _, err := l.HandleSES(ctx, sns(t, fixture(t, "ses-send.json")), log, m); err != nil {
		t.Fatal(err)
	}
	if n := table.count(); n != 2 {
		t.Errorf("%d records after a redelivered event, want 2", n)
	}
	events, _ := l.Events(ctx, sentID)
	if len(events) != 1 || events[0].ExpiresAt < time.Now().Add(29*24*time.Hour).Unix() {
		t.Errorf("events = %+v: want one, expiring after the retention", events)
	}
	if !strings.Contains(metrics.String(), `"DeliveryEvents":1`) {
		t.Errorf("no DeliveryEvents metric: %s", metrics.String())
	}
	if strings.Contains(logs.String(), "alice@example.com") {
		t.Errorf("a recipient address reached the log: %s", logs.String())
	}
}

func TestHandleSESFailures(t *testing.T) {
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	var metrics bytes.Buffer

	// Malformed: dropped with a metric, not retried forever.
	l := New(newFakeTable(), "jobs", 0)
	rep, err := l.HandleSES(ctx, []byte("garbage"), quiet, obs.NewMetrics(&metrics, "test"))
	if err != nil || rep.Recorded != 0 || !strings.Contains(metrics.String(), "DeliveryEventsMalformed") {
		t.Errorf("malformed: %+v, %v, metrics %s", rep, err, metrics.String())
	}

	// A throttled write is returned, so the event source retries.
	table := newFakeTable()
	table.err = &smithy.GenericAPIError{Code: "ProvisionedThroughputExceededException", Message: "slow down"}
	l = New(table, "jobs", 0)
	_, err = l.HandleSES(ctx, fixture(t, "ses-send.json"), quiet, nil)
	if err == nil || failure.Classify(err) != failure.RateLimited {
		t.Errorf("throttled write: err = %v (class %s), want RATE_LIMITED", err, failure.Classify(err))
	}
	if _, err := l.Delivered(ctx, sentID); err == nil || !errors.As(err, new(smithy.APIError)) {
		t.Errorf("throttled lookup: err = %v, want the API error in the chain", err)
	}
}
