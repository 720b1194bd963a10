package outbox

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/store"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
)

// An e-mail row and a Swarm comment row go through the same Begin; each is
// keyed by its own identity, and only the comment row carries channel
// attributes, so e-mail rows stay exactly as they were.
func TestBeginKeysEachChannelByItsIdentity(t *testing.T) {
	it := Item{Channel: ChannelSwarmComments, Thread: 885, ID: "finding/abc"}
	for _, tc := range []struct {
		name         string
		begin        func(o *Outbox) error
		pk, sk       string
		channelAttrs bool
	}{
		{"email", func(o *Outbox) error { _, err := o.Begin(context.Background(), Email(k), "job-1", t0); return err },
			"OUTBOX#42#3", "RCPT#alice@example.com", false},
		{"swarm comment", func(o *Outbox) error { _, err := o.Begin(context.Background(), it, "job-1", t0); return err },
			"OUTBOX#SWARM#885", "ITEM#finding/abc", true},
		{"weekly digest", func(o *Outbox) error {
			_, err := o.Begin(context.Background(), DigestItem("2026-W48", "0a1b"), "", t0)
			return err
		}, "DIGEST#sent#2026-W48", "OWNER#0a1b", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := &oneAnswerAPI{}
			if err := tc.begin(New(api, "jobs")); err != nil {
				t.Fatal(err)
			}
			if got := api.last.Key["pk"].(*types.AttributeValueMemberS).Value; got != tc.pk {
				t.Errorf("pk = %q, want %q", got, tc.pk)
			}
			if got := api.last.Key["sk"].(*types.AttributeValueMemberS).Value; got != tc.sk {
				t.Errorf("sk = %q, want %q", got, tc.sk)
			}
			upd := *api.last.UpdateExpression
			if has := strings.Contains(upd, "delivery_channel = :ch"); has != tc.channelAttrs {
				t.Errorf("update %q: channel attributes %v, want %v", upd, has, tc.channelAttrs)
			}
			if !strings.Contains(upd, "send_token = :tok") || !strings.Contains(upd, "last_write = :tok") {
				t.Errorf("update %q: no write token", upd)
			}
		})
	}
}

// A digest's row read back names the row it was written as, so an
// operator's requeue or confirm by the row's Ref reaches it.
func TestDigestRowRefRoundTrips(t *testing.T) {
	ctx := context.Background()
	db := dynamotest.New()
	o := New(db, dynamotest.Table)
	it := DigestItem("2026-W48", "0a1b")
	send, err := o.Begin(ctx, it, "", t0)
	if err != nil {
		t.Fatal(err)
	}
	ref := send.Row.Ref()
	if ref.String() != "digest/2026-W48/0a1b" || send.Row.ItemKind() != "digest" {
		t.Fatalf("ref %q, kind %q", ref, send.Row.ItemKind())
	}
	if err := o.Confirm(ctx, ref, "checked by hand", t0); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Begin(ctx, it, "", t0); err != ErrAlreadySent {
		t.Fatalf("begin after confirm: %v, want ErrAlreadySent", err)
	}
}

// A comment row's in-flight error names the comment, not an empty recipient.
func TestInFlightErrorNamesTheItem(t *testing.T) {
	r := &Row{Channel: ChannelSwarmComments, Thread: 885, Item: "summary/v1", Status: Sending}
	if got := (&InFlightError{Row: r}).Error(); !strings.Contains(got, "swarm-comments/reviews/885/summary/v1") {
		t.Errorf("error = %q", got)
	}
}

// pagedQueryAPI answers Query from partitions of rows, pageSize rows per
// answer, so a listing that stops at the first page misses rows.
type pagedQueryAPI struct {
	store.API
	parts    map[string][]Row
	pageSize int
}

func (f *pagedQueryAPI) Query(_ context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	rows := f.parts[in.ExpressionAttributeValues[":pk"].(*types.AttributeValueMemberS).Value]
	start := 0
	if in.ExclusiveStartKey != nil {
		start, _ = strconv.Atoi(in.ExclusiveStartKey["i"].(*types.AttributeValueMemberS).Value)
	}
	end := min(start+f.pageSize, len(rows))
	out := &dynamodb.QueryOutput{}
	for _, r := range rows[start:end] {
		item, _ := attributevalue.MarshalMap(r)
		out.Items = append(out.Items, item)
	}
	if end < len(rows) {
		out.LastEvaluatedKey = map[string]types.AttributeValue{"i": &types.AttributeValueMemberS{Value: strconv.Itoa(end)}}
	}
	return out, nil
}

// A job's rows are its e-mails and the comment rows it began on its review,
// read across every page; rows of the review's other jobs are theirs.
func TestJobRows(t *testing.T) {
	var thread []Row
	for i := range 5 {
		thread = append(thread, Row{JobID: "v1-job", Channel: ChannelSwarmComments, Thread: 885, Item: fmt.Sprintf("finding/old%d", i), Status: Sent})
	}
	thread = append(thread,
		Row{JobID: "v2-job", Channel: ChannelSwarmComments, Thread: 885, Item: "finding/new", Status: Sent, NotificationID: "17"},
		Row{JobID: "v2-job", Channel: ChannelSwarmComments, Thread: 885, Item: "summary/v2", Status: Failed, LastErrorClass: "AUTH_DENIED"})
	api := &pagedQueryAPI{pageSize: 2, parts: map[string][]Row{
		"OUTBOX#42#2":      {{JobID: "v2-job", Recipient: "alice@example.com", Status: Sent}},
		"OUTBOX#SWARM#885": thread,
	}}
	o := New(api, "jobs")
	for _, tc := range []struct {
		name         string
		j            *job.Job
		emails       int
		commentItems []string
	}{
		{"swarm job", &job.Job{ID: "v2-job", Changelist: 42, ReviewVersion: 2, Swarm: &job.SwarmRun{Review: 885}}, 1, []string{"finding/new", "summary/v2"}},
		{"trigger job", &job.Job{ID: "v2-job", Changelist: 42, ReviewVersion: 2}, 1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			emails, comments, err := o.JobRows(context.Background(), tc.j)
			if err != nil {
				t.Fatal(err)
			}
			var items []string
			for _, c := range comments {
				items = append(items, c.Item)
			}
			if len(emails) != tc.emails || !slices.Equal(items, tc.commentItems) {
				t.Errorf("emails %d, comments %v; want %d, %v", len(emails), items, tc.emails, tc.commentItems)
			}
		})
	}
}

func TestItemKind(t *testing.T) {
	for item, want := range map[string]string{"finding/ab": "finding", "summary/v3": "summary", "resolved/ab": "resolved note", "addressed/ab": "task addressed"} {
		r := Row{Channel: ChannelSwarmComments, Thread: 1, Item: item}
		if got := r.ItemKind(); got != want {
			t.Errorf("%s: kind %q, want %q", item, got, want)
		}
	}
	if got := (&Row{Recipient: "a@example.com"}).ItemKind(); got != "" {
		t.Errorf("e-mail row: kind %q, want none", got)
	}
}

// A comment row keeps the lookup bound of its first send: a later Begin
// (after a release, or a reset once the first send was proven absent) never
// raises it past a comment that first send may have made.
func TestBeginItemAfterKeepsTheFirstBound(t *testing.T) {
	ctx := context.Background()
	o := New(dynamotest.New(), dynamotest.Table)
	it := Item{Channel: ChannelSwarmComments, Thread: 885, ID: "summary/v1"}
	send, err := o.Begin(ctx, Bounded(it, 500), "job-1", t0)
	if err != nil {
		t.Fatal(err)
	}
	if send.Row.LookupAfter != 500 {
		t.Fatalf("first Begin: LookupAfter = %d, want 500", send.Row.LookupAfter)
	}
	if err := o.Release(ctx, it, send.Token, "RATE_LIMITED", "429", false, t0); err != nil {
		t.Fatal(err)
	}
	again, err := o.Begin(ctx, Bounded(it, 650), "job-1", t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := o.ListThread(ctx, ChannelSwarmComments, 885)
	if err != nil || len(rows) != 1 {
		t.Fatalf("ListThread = %v, %v", rows, err)
	}
	if again.Row.LookupAfter != 500 || rows[0].LookupAfter != 500 {
		t.Errorf("second Begin: LookupAfter %d (stored %d), want the first send's 500", again.Row.LookupAfter, rows[0].LookupAfter)
	}
	// No bound known: the row has none, and its lookup reads everything.
	other := Item{Channel: ChannelSwarmComments, Thread: 885, ID: "finding/abc"}
	if s, err := o.Begin(ctx, Bounded(other, 0), "job-1", t0); err != nil || s.Row.LookupAfter != 0 {
		t.Fatalf("Begin without a bound: %+v, %v", s, err)
	}
}
