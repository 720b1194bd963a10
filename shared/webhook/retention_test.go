package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/envelope"
	"github.com/criticizer/criticizer/shared/store"
)

// ttlTable is the jobs table for the requests a job's creation makes
// (store.Create's transaction and reads), with DynamoDB's TTL applied at
// once: an item whose expires_at passed is gone. It answers conditions the
// way DynamoDB does for those requests: attribute_not_exists(pk) on the
// puts, the version gate's comparison on the changelist update.
type ttlTable struct {
	store.API
	mu    sync.Mutex
	now   func() time.Time
	items map[string]map[string]types.AttributeValue // pk|sk → item
}

func itemID(item map[string]types.AttributeValue) string {
	return item["pk"].(*types.AttributeValueMemberS).Value + "|" + item["sk"].(*types.AttributeValueMemberS).Value
}

func num(v types.AttributeValue) int64 {
	n, _ := strconv.ParseInt(v.(*types.AttributeValueMemberN).Value, 10, 64)
	return n
}

// live returns the item under id unless its TTL passed.
func (t *ttlTable) live(id string) map[string]types.AttributeValue {
	it := t.items[id]
	if exp, ok := it["expires_at"]; ok && num(exp) < t.now().Unix() {
		delete(t.items, id) // TTL deletion
		return nil
	}
	return it
}

func (t *ttlTable) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return &dynamodb.GetItemOutput{Item: t.live(itemID(in.Key))}, nil
}

func (t *ttlTable) TransactWriteItems(_ context.Context, in *dynamodb.TransactWriteItemsInput, _ ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	reasons := make([]types.CancellationReason, len(in.TransactItems))
	writes := map[string]map[string]types.AttributeValue{}
	cancelled := false
	for i, w := range in.TransactItems {
		reasons[i].Code = aws.String("None")
		switch {
		case w.Put != nil && aws.ToString(w.Put.ConditionExpression) == "attribute_not_exists(pk)":
			id := itemID(w.Put.Item)
			if old := t.live(id); old != nil {
				reasons[i] = types.CancellationReason{Code: aws.String("ConditionalCheckFailed"), Item: old}
				cancelled = true
				continue
			}
			writes[id] = w.Put.Item
		case w.Update != nil && aws.ToString(w.Update.ConditionExpression) == "attribute_not_exists(latest_version) OR latest_version < :v":
			id := itemID(w.Update.Key)
			old := t.live(id)
			if v, ok := old["latest_version"]; ok && num(v) >= num(w.Update.ExpressionAttributeValues[":v"]) {
				reasons[i] = types.CancellationReason{Code: aws.String("ConditionalCheckFailed"), Item: old}
				cancelled = true
				continue
			}
			writes[id] = applySetRemove(old, w.Update)
		default:
			return nil, fmt.Errorf("ttlTable: request it does not model: %+v", w)
		}
	}
	if cancelled {
		return nil, &types.TransactionCanceledException{Message: aws.String("cancelled"), CancellationReasons: reasons}
	}
	for id, it := range writes {
		t.items[id] = it
	}
	return &dynamodb.TransactWriteItemsOutput{}, nil
}

// applySetRemove applies "SET a = :x, b = :y [REMOVE c, d]" to a copy of old.
func applySetRemove(old map[string]types.AttributeValue, u *types.Update) map[string]types.AttributeValue {
	out := map[string]types.AttributeValue{}
	for k, v := range old {
		out[k] = v
	}
	for k, v := range u.Key {
		out[k] = v
	}
	expr := strings.TrimPrefix(aws.ToString(u.UpdateExpression), "SET ")
	set, remove, _ := strings.Cut(expr, " REMOVE ")
	for _, a := range strings.Split(set, ",") {
		name, val, _ := strings.Cut(strings.TrimSpace(a), " = ")
		out[name] = u.ExpressionAttributeValues[val]
	}
	if remove != "" {
		for _, r := range strings.Split(remove, ",") {
			delete(out, strings.TrimSpace(r))
		}
	}
	return out
}

type recordingQueue struct{ sent []envelope.Envelope }

func (q *recordingQueue) Send(_ context.Context, e envelope.Envelope) error {
	q.sent = append(q.sent, e)
	return nil
}

// Rule ID-3: uniqueness outlives the data. A webhook re-sent after the job
// and its data expired (a trigger replayed from a backup, a Swarm test
// re-run on an old review) is answered with the original job and its saved
// response and creates nothing: no job, no message, so no e-mail; another
// key for the same changelist version is refused by the version gate. The
// promise lasts as long as uniquenessRetentionDays (default a year), or
// forever with 0.
func TestResentAfterDataRetentionGetsTheOriginalJob(t *testing.T) {
	const day = 24 * time.Hour
	key := []byte("unit-test-key-0123456789")
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name       string
		uniqueness time.Duration // 0: forever
		after      time.Duration
		original   bool // the re-sent webhook gets the original job
	}{
		{"31 days: the job expired, its uniqueness did not", store.DefaultUniquenessRetention, 31 * day, true},
		{"364 days: still within the uniqueness retention", store.DefaultUniquenessRetention, 364 * day, true},
		{"366 days: the promise ended with its retention", store.DefaultUniquenessRetention, 366 * day, false},
		{"ten years with uniqueness kept forever", 0, 3650 * day, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			now := t0
			table := &ttlTable{now: func() time.Time { return now }, items: map[string]map[string]types.AttributeValue{}}
			q := &recordingQueue{}
			h := &Handler{Jobs: store.New(table, "jobs").WithRetention(30 * day).WithUniquenessRetention(tt.uniqueness), Queue: q,
				Log: slog.New(slog.NewTextHandler(io.Discard, nil)), ReplayWindow: time.Minute, SweepAfter: time.Minute,
				Keys: func(context.Context, bool) ([][]byte, error) { return [][]byte{key}, nil }, Now: func() time.Time { return now }}
			post := func(body string) events.APIGatewayProxyResponse {
				t.Helper()
				req := events.APIGatewayProxyRequest{HTTPMethod: "POST", Resource: "/webhooks/changelist", Body: body,
					Headers: map[string]string{HeaderTimestamp: strconv.FormatInt(now.Unix(), 10), HeaderSignature: Sign(key, now.Unix(), "POST", "/webhooks/changelist", []byte(body))}}
				resp, err := h.Handle(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				return resp
			}
			body := `{"changelist_id":4711,"review_version":2,"idempotency_key":"trigger-4711-2"}`
			first := post(body)
			if first.StatusCode != 202 || len(q.sent) != 1 {
				t.Fatalf("first webhook: %d %s, %d messages", first.StatusCode, first.Body, len(q.sent))
			}
			var orig struct {
				JobID string `json:"job_id"`
			}
			_ = json.Unmarshal([]byte(first.Body), &orig)

			now = t0.Add(tt.after)
			if _, err := h.Jobs.Get(context.Background(), orig.JobID); err == nil {
				t.Fatalf("the job item outlived its data retention")
			}
			again := post(body)
			if !tt.original {
				if again.StatusCode != 202 || strings.Contains(again.Body, orig.JobID) || len(q.sent) != 2 {
					t.Fatalf("after the uniqueness retention: %d %s, %d messages; want a new job", again.StatusCode, again.Body, len(q.sent))
				}
				return
			}
			if again.StatusCode != first.StatusCode || again.Body != first.Body || again.Headers["Location"] != first.Headers["Location"] {
				t.Errorf("re-sent webhook answered %d %s %v, want the saved response %d %s %v",
					again.StatusCode, again.Body, again.Headers, first.StatusCode, first.Body, first.Headers)
			}
			other := post(`{"changelist_id":4711,"review_version":2,"idempotency_key":"swarm-rerun-7"}`)
			if other.StatusCode != 200 || !strings.Contains(other.Body, `"job_id":"`+orig.JobID+`"`) || !strings.Contains(other.Body, `"rerun":false`) {
				t.Errorf("another key for the reviewed version: %d %s, want 200 naming the original job, no rerun (the version gate)", other.StatusCode, other.Body)
			}
			if len(q.sent) != 1 {
				t.Errorf("%d stage messages sent, want only the original's: a re-sent webhook must send nothing", len(q.sent))
			}
			jobs := 0
			for id, it := range table.items {
				if strings.HasPrefix(id, "JOB#") {
					jobs++
				}
				if strings.HasPrefix(id, "IDEM#") {
					for _, data := range []string{"recipients", "findings", "artifacts", "history"} {
						if _, ok := it[data]; ok {
							t.Errorf("idempotency record holds %s: uniqueness records hold no data", data)
						}
					}
				}
			}
			if jobs != 0 {
				t.Errorf("%d job items: a re-sent webhook must create none", jobs)
			}
		})
	}
}
