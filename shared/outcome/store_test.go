package outcome_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
	"github.com/criticizer/criticizer/shared/swarm"
)

type rows []outbox.Row

func (r rows) ListThread(context.Context, string, int64) ([]outbox.Row, error) { return r, nil }

type comments []swarm.Comment

func (c *comments) List(context.Context, int64) ([]swarm.Comment, error) { return *c, nil }

func posted(fp string, id int64) outbox.Row {
	return outbox.Row{Item: swarm.KindFinding + "/" + fp, NotificationID: strconv.FormatInt(id, 10), NotifiedAt: "2026-11-01T00:00:00Z"}
}

// Reading the same reactions twice records each fate once; a new reaction
// is recorded when it comes; a finding whose comment is missing stays open
// (unknown), never accepted.
func TestReadRecordsEachFateOnce(t *testing.T) {
	ctx := context.Background()
	st := outcome.NewStore(dynamotest.New(), dynamotest.Table)
	for _, fp := range []string{"fpA", "fpB", "fpC", "fpD"} {
		if w, err := st.Posted(ctx, outcome.Record{Review: 7, Fingerprint: fp, Category: "bug", PromptVersion: "1.2"}); err != nil || !w {
			t.Fatalf("posted %s: %v %v", fp, w, err)
		}
	}
	if w, _ := st.Posted(ctx, outcome.Record{Review: 7, Fingerprint: "fpA", Category: "style"}); w {
		t.Fatal("a second Posted of the same finding was written")
	}
	cs := &comments{
		{ID: 1, User: "svc", TaskState: swarm.TaskAddressed},
		{ID: 2, User: "svc", TaskState: swarm.TaskComment},
		{ID: 3, User: "svc", TaskState: swarm.TaskOpen},
		{ID: 4, User: "bob", Body: "false positive", ReplyTo: 2},
	}
	rd := &outcome.Reader{Store: st, Rows: rows{posted("fpA", 1), posted("fpB", 2), posted("fpC", 3)}, Comments: cs}
	first, err := rd.Read(ctx, 7, nil)
	if err != nil {
		t.Fatal(err)
	}
	if first != (outcome.Tally{Read: 4, FatesChanged: 2, Unknown: 1}) {
		t.Fatalf("first read = %+v, want 4 read, 2 judged (addressed, dismissed), 1 unknown", first)
	}
	again, err := rd.Read(ctx, 7, nil)
	if err != nil || again.FatesChanged != 0 {
		t.Fatalf("second read = %+v, %v: want nothing written", again, err)
	}
	// fpC resolved by a later version, then the sweeper reads a listing
	// where nothing says so: it stays resolved.
	if got, _ := rd.Read(ctx, 7, []string{"fpC"}); got.FatesChanged != 1 {
		t.Fatalf("resolved read = %+v, want 1 judged", got)
	}
	if got, _ := rd.Read(ctx, 7, nil); got.FatesChanged != 0 {
		t.Fatalf("later read = %+v, want the resolved fate kept", got)
	}
	recs, err := st.Review(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]outcome.Fate{"fpA": outcome.Addressed, "fpB": outcome.Dismissed, "fpC": outcome.Resolved, "fpD": outcome.Open}
	for _, r := range recs {
		if r.Fate != want[r.Fingerprint] {
			t.Errorf("%s = %s, want %s", r.Fingerprint, r.Fate, want[r.Fingerprint])
		}
		if r.Fingerprint == "fpA" && r.Category != "bug" {
			t.Errorf("fpA category = %q: the first Posted must keep its attributes", r.Category)
		}
	}
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d", len(recs), len(want))
	}
}

// ChangeFate never creates a record for a fingerprint that was not posted.
func TestChangeFateNeedsAPostedFinding(t *testing.T) {
	st := outcome.NewStore(dynamotest.New(), dynamotest.Table)
	if w, err := st.ChangeFate(context.Background(), outcome.Record{Review: 7, Fingerprint: "never", Fate: outcome.Open}, outcome.Addressed, nil); err != nil || w {
		t.Fatalf("judge of an unposted finding = %v, %v", w, err)
	}
	if recs, _ := st.Review(context.Background(), 7); len(recs) != 0 {
		t.Fatalf("records = %+v", recs)
	}
}

// Records live as long as delivery identities.
func TestRetention(t *testing.T) {
	db := dynamotest.New()
	st := outcome.NewStore(db, dynamotest.Table).WithUniquenessRetention(48 * time.Hour)
	if _, err := st.Posted(context.Background(), outcome.Record{Review: 7, Fingerprint: "fp"}); err != nil {
		t.Fatal(err)
	}
	out, err := db.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(dynamotest.Table)})
	if err != nil || len(out.Items) != 1 || out.Items[0]["expires_at"] == nil {
		t.Fatalf("record without expires_at: %v %v", out, err)
	}
}

// Standing is who was on the review when it was first fetched: a later
// fetch, whose participants include whoever replied meanwhile (Swarm makes
// every commenter one), changes nothing, and a review nothing recorded
// gives nobody but the configured deciders a say.
func TestStandingIsTheReviewAsFirstFetched(t *testing.T) {
	ctx := context.Background()
	st := outcome.NewStore(dynamotest.New(), dynamotest.Table)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.FirstFetched(ctx, swarm.Review{ID: 7, Author: "bob", Participants: []string{"bob", "carol"}}))
	must(st.FirstFetched(ctx, swarm.Review{ID: 7, Author: "bob", Participants: []string{"bob", "carol", "eve"}}))
	list := comments{}
	var posts rows
	for i, who := range []string{"bob", "carol", "eve", "lead"} {
		id := int64(100 + i)
		list = append(list, swarm.Comment{ID: id, User: "criticizer", Context: &swarm.CommentContext{File: "//depot/a.go", RightLine: i + 1}},
			swarm.Comment{ID: id + 50, User: who, Body: "false positive", ReplyTo: id})
		for _, rv := range []int64{7, 8} {
			_, err := st.Posted(ctx, outcome.Record{Review: rv, Fingerprint: who, Category: "bug"})
			must(err)
		}
		posts = append(posts, posted(who, id))
	}
	pol := outcome.DefaultPolicy()
	pol.Deciders = []string{"lead"}
	rd := &outcome.Reader{Store: st, Rows: posts, Comments: &list, Reviews: noAccounts{}, Policy: pol}
	for review, stands := range map[int64][]string{7: {"bob", "carol", "lead"}, 8: {"lead"}} {
		_, err := rd.Read(ctx, review, nil)
		must(err)
		recs, err := st.Review(ctx, review)
		must(err)
		if len(recs) != 4 {
			t.Fatalf("review %d: %d records, want 4 (the first-fetched item is no record): %+v", review, len(recs), recs)
		}
		for _, r := range recs {
			if want := slices.Contains(stands, r.Fingerprint); (len(r.By) == 1) != want || r.Fate != outcome.Dismissed {
				t.Errorf("review %d: %s dismissed %s by %v; want standing %v", review, r.Fingerprint, r.Fate, r.By, want)
			}
		}
	}
}
