package ledger_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/ledger"
	"github.com/criticizer/criticizer/shared/ledger/ledgertest"
)

// fakeTable is the part of DynamoDB the ledger uses: PutItem with the
// ledger's one condition, Query on pk with sk <, descending, limit.
type fakeTable struct {
	mu    sync.Mutex
	items map[string]map[string]types.AttributeValue // pk \x00 sk
	puts  []*dynamodb.PutItemInput
}

func s(av types.AttributeValue) string {
	if v, ok := av.(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func (f *fakeTable) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.items == nil {
		f.items = map[string]map[string]types.AttributeValue{}
	}
	f.puts = append(f.puts, in)
	k := s(in.Item["pk"]) + "\x00" + s(in.Item["sk"])
	if *in.ConditionExpression != "attribute_not_exists(pk) OR job_id = :job" {
		return nil, fmt.Errorf("unexpected condition %q", *in.ConditionExpression)
	}
	if old, ok := f.items[k]; ok && s(old["job_id"]) != s(in.ExpressionAttributeValues[":job"]) {
		return nil, &types.ConditionalCheckFailedException{Item: old}
	}
	f.items[k] = in.Item
	return &dynamodb.PutItemOutput{}, nil
}

func (f *fakeTable) Query(_ context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if *in.KeyConditionExpression != "pk = :pk AND sk < :sk" || *in.ScanIndexForward || *in.Limit != 1 {
		return nil, fmt.Errorf("unexpected query %q", *in.KeyConditionExpression)
	}
	pk, below := s(in.ExpressionAttributeValues[":pk"]), s(in.ExpressionAttributeValues[":sk"])
	var keys []string
	for k := range f.items {
		p, sk, _ := strings.Cut(k, "\x00")
		if p == pk && sk < below {
			keys = append(keys, k)
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(keys)))
	out := &dynamodb.QueryOutput{}
	if len(keys) > 0 {
		out.Items = append(out.Items, f.items[keys[0]])
	}
	return out, nil
}

func TestStoreContract(t *testing.T) {
	var n int64
	ledgertest.Contract(t, ledger.NewStore(&fakeTable{}, "jobs"), func(kind string) ledger.Thread { n++; return ledger.Thread{Kind: kind, ID: n} })
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
			ft := &fakeTable{}
			st := ledger.NewStore(ft, "jobs").WithUniquenessRetention(tt.retention)
			if err := st.Put(context.Background(), ledger.Version{Thread: tt.thread, Version: tt.version, JobID: "j"}); err != nil {
				t.Fatal(err)
			}
			it := ft.puts[0].Item
			if s(it["pk"]) != tt.pk || s(it["sk"]) != tt.sk {
				t.Errorf("keys %q %q, want %q %q", s(it["pk"]), s(it["sk"]), tt.pk, tt.sk)
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
			ft := &fakeTable{}
			st := ledger.NewStore(ft, "jobs")
			v := ledger.Version{Thread: th, Version: 1, JobID: "j", Findings: []ledger.Finding{{Fingerprint: "fp", File: "//depot/x.c", Line: 1, Severity: "low"}}}
			for i := range tt.files {
				sum := md5.Sum([]byte(fmt.Sprint(i)))
				v.Files = append(v.Files, ledger.File{Path: fmt.Sprintf("//depot/projectA/gen/dir%03d/file%05d.go", i/100, i), Action: "edit",
					Digest: strings.ToUpper(hex.EncodeToString(sum[:])), FullyReviewed: true, Rev: 3, Type: "text"})
			}
			if err := st.Put(context.Background(), v); err != nil {
				t.Fatal(err)
			}
			if b := len(ft.puts[0].Item["body"].(*types.AttributeValueMemberB).Value); b > 350<<10 {
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
	st := ledger.NewStore(&fakeTable{}, "jobs").WithUniquenessRetention(time.Nanosecond)
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
		ft := &fakeTable{}
		if err := ledger.NewStore(ft, "jobs").Put(context.Background(), v); failure.Classify(err) != failure.InternalBug || len(ft.puts) != 0 {
			t.Errorf("Put(%+v) = %v (%d writes), want INTERNAL_BUG and no write", v, err, len(ft.puts))
		}
	}
}
