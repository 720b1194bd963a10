package digest_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/criticizer/criticizer/shared/digest"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/store"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
	"github.com/criticizer/criticizer/shared/weekly"
)

// counting counts the requests and the items read through it.
type counting struct {
	store.API
	requests, read int64
}

func (c *counting) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	out, err := c.API.Query(ctx, in, o...)
	c.requests++
	if out != nil {
		c.read += int64(len(out.Items))
	}
	return out, err
}

// BenchmarkDigestWeek measures what one owner's digest reads — the week's
// entries, the touched reviews' outcomes, the scopes' tallies — over a
// table holding N entries of earlier weeks: the reads follow the week's
// 200 jobs, not the history (docs/benchmarks.md). Its ns/op is the
// in-process table's, which scans its whole map per Query; DynamoDB reads a
// partition by key.
func BenchmarkDigestWeek(b *testing.B) {
	ctx := context.Background()
	week, _ := weekly.ParseWeek("2026-W47")
	owner := digest.Owner{Address: "lead@example.com", Paths: []string{"//depot/engine/..."}}
	for _, history := range []int{0, 3_000, 30_000} {
		b.Run(fmt.Sprintf("history=%d", history), func(b *testing.B) {
			db := dynamotest.New()
			entries := &weekly.Entries{API: db, Table: dynamotest.Table}
			fates := outcome.NewStore(db, dynamotest.Table)
			old := week
			for i := range history {
				if i%1000 == 0 {
					old = old.Previous()
				}
				if err := entries.Record(ctx, old, weekly.Entry{JobID: "old" + strconv.Itoa(i), Dirs: []string{"//depot/engine/a"}}); err != nil {
					b.Fatal(err)
				}
			}
			for i := range 200 {
				rv := int64(1000 + i/4) // four versions per review
				fp := "fp" + strconv.Itoa(i)
				if _, err := fates.Posted(ctx, outcome.Record{Review: rv, Fingerprint: fp, File: "//depot/engine/a/x.cpp", Scope: "//depot/engine/...", Severity: "high", Kind: "k"}); err != nil {
					b.Fatal(err)
				}
				e := weekly.Entry{JobID: "j" + strconv.Itoa(i), Review: rv, Dirs: []string{"//depot/engine/a"},
					Findings: []weekly.Finding{{Fingerprint: fp, File: "//depot/engine/a/x.cpp", Severity: "high"}}, InputTokens: 1000}
				if err := entries.Record(ctx, week, e); err != nil {
					b.Fatal(err)
				}
			}
			c := &counting{API: db}
			read := &weekly.Entries{API: c, Table: dynamotest.Table}
			reader := outcome.NewStore(c, dynamotest.Table)
			for b.Loop() {
				es, err := read.Week(ctx, week)
				if err != nil {
					b.Fatal(err)
				}
				d, err := digest.Build(ctx, reader, outcome.DefaultPolicy(), owner, week, es)
				if err != nil || d.Reviews != 200 {
					b.Fatalf("digest of %d reviews, %v", d.Reviews, err)
				}
			}
			n := float64(b.N)
			b.ReportMetric(float64(c.requests)/n, "ddb-requests")
			b.ReportMetric(float64(c.read)/n, "ddb-items-read")
		})
	}
}
