package ledger_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/ledger"
	"github.com/criticizer/criticizer/shared/ledger/ledgertest"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
)

// item reads the table's item at pk, sk (nil when none).
func item(t *testing.T, d *dynamotest.Dynamo, pk, sk string) map[string]types.AttributeValue {
	t.Helper()
	out, err := d.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(dynamotest.Table),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk}}})
	if err != nil {
		t.Fatal(err)
	}
	return out.Item
}

func TestStoreContract(t *testing.T) {
	var n int64
	ledgertest.Contract(t, ledger.NewStore(dynamotest.New(), dynamotest.Table), func(kind string) ledger.Thread { n++; return ledger.Thread{Kind: kind, ID: n} })
}

// TestStoreItem: the item's keys and retention, as the IAM grants
// (LEDGER#) and the retention check (uniqueness records) expect them.
func TestStoreItem(t *testing.T) {
	for _, tt := range []struct {
		name      string
		retention time.Duration
		thread    ledger.Thread
		version   int
		pk, sk    string
		expires   bool
	}{
		{"a review's version", 30 * 24 * time.Hour, ledger.Thread{Kind: ledger.KindReview, ID: 885}, 2, "LEDGER#review#885", "V#0000000002", true},
		{"a changelist's version", time.Hour, ledger.Thread{Kind: ledger.KindChangelist, ID: 12345}, 10, "LEDGER#cl#12345", "V#0000000010", true},
		{"kept forever", 0, ledger.Thread{Kind: ledger.KindReview, ID: 1}, 1, "LEDGER#review#1", "V#0000000001", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := dynamotest.New()
			st := ledger.NewStore(d, dynamotest.Table).WithUniquenessRetention(tt.retention)
			if err := st.Put(context.Background(), ledger.Version{Thread: tt.thread, Version: tt.version, JobID: "j"}); err != nil {
				t.Fatal(err)
			}
			it := item(t, d, tt.pk, tt.sk)
			if it == nil {
				t.Fatalf("no item at keys %q %q", tt.pk, tt.sk)
			}
			exp, ok := it["expires_at"].(*types.AttributeValueMemberN)
			if ok != tt.expires {
				t.Fatalf("expires_at %v, want set %v", it["expires_at"], tt.expires)
			}
			if ok {
				want := time.Now().Add(tt.retention).Unix()
				var got int64
				fmt.Sscan(exp.Value, &got)
				if got < want-5 || got > want+5 {
					t.Errorf("expires_at %d, want about %d", got, want)
				}
			}
		})
	}
}

// TestStoreLargeEntry: a changelist of many thousands of files fits one
// item; one too large for any item keeps its findings and drops its files
// (no file then counts as reviewed in full: nothing is carried over).
func TestStoreLargeEntry(t *testing.T) {
	th := ledger.Thread{Kind: ledger.KindChangelist, ID: 7}
	for _, tt := range []struct {
		files     int
		wantFiles bool
	}{{5000, true}, {40000, false}} {
		t.Run(fmt.Sprint(tt.files), func(t *testing.T) {
			d := dynamotest.New()
			st := ledger.NewStore(d, dynamotest.Table)
			v := ledger.Version{Thread: th, Version: 1, JobID: "j", Findings: []ledger.Finding{{Fingerprint: "fp", File: "//depot/x.c", Line: 1, Severity: "low"}}}
			for i := range tt.files {
				sum := md5.Sum([]byte(fmt.Sprint(i)))
				v.Files = append(v.Files, ledger.File{Path: fmt.Sprintf("//depot/projectA/gen/dir%03d/file%05d.go", i/100, i), Action: "edit",
					Digest: strings.ToUpper(hex.EncodeToString(sum[:])), FullyReviewed: true, Rev: 3, Type: "text"})
			}
			if err := st.Put(context.Background(), v); err != nil {
				t.Fatal(err)
			}
			if b := len(item(t, d, "LEDGER#cl#7", "V#0000000001")["body"].(*types.AttributeValueMemberB).Value); b > 350<<10 {
				t.Errorf("body of %d bytes: over the item limit", b)
			}
			got, err := st.Previous(context.Background(), th, 2)
			if err != nil || got == nil {
				t.Fatalf("previous: %v %v", got, err)
			}
			if (len(got.Files) == tt.files) != tt.wantFiles || (!tt.wantFiles && len(got.Files) != 0) || len(got.Findings) != 1 {
				t.Errorf("read back %d files, %d findings; want files kept %v and the finding", len(got.Files), len(got.Findings), tt.wantFiles)
			}
		})
	}
}

// TestStoreExpired: an entry past its expires_at that DynamoDB has not yet
// deleted is gone for readers, as its TTL says.
func TestStoreExpired(t *testing.T) {
	th := ledger.Thread{Kind: ledger.KindReview, ID: 3}
	st := ledger.NewStore(dynamotest.New(), dynamotest.Table).WithUniquenessRetention(time.Nanosecond)
	if err := st.Put(context.Background(), ledger.Version{Thread: th, Version: 1, JobID: "j"}); err != nil {
		t.Fatal(err)
	}
	if got, err := st.Previous(context.Background(), th, 2); err != nil || got != nil {
		t.Errorf("expired entry read back: %+v %v", got, err)
	}
}

// TestStorePutRejectsIncomplete: an entry without thread, version or job
// is a bug, never written.
func TestStorePutRejectsIncomplete(t *testing.T) {
	for _, v := range []ledger.Version{
		{Thread: ledger.Thread{Kind: "x", ID: 1}, Version: 1, JobID: "j"},
		{Thread: ledger.Thread{Kind: ledger.KindReview}, Version: 1, JobID: "j"},
		{Thread: ledger.Thread{Kind: ledger.KindReview, ID: 1}, JobID: "j"},
		{Thread: ledger.Thread{Kind: ledger.KindReview, ID: 1}, Version: 1},
	} {
		d := dynamotest.New()
		err := ledger.NewStore(d, dynamotest.Table).Put(context.Background(), v)
		written, serr := d.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(dynamotest.Table)})
		if serr != nil {
			t.Fatal(serr)
		}
		if failure.Classify(err) != failure.InternalBug || len(written.Items) != 0 {
			t.Errorf("Put(%+v) = %v (%d writes), want INTERNAL_BUG and no write", v, err, len(written.Items))
		}
	}
}
