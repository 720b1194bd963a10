package retention

import (
	"bytes"
	"context"
	"fmt"
	"hash/crc32"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/criticizer/criticizer/shared/obs"
)

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// fakeTable evaluates the check's filter the way DynamoDB would, over items
// keyed pk → expires_at (-1: no attribute), two items per page. It knows the
// filter's two clauses, each honoured only when the filter names it, so a
// check that stops asking for rows without a TTL finds none.
type fakeTable struct {
	items map[string]int64
	mu    sync.Mutex // segments are scanned in parallel
	pages int
}

func (f *fakeTable) Scan(_ context.Context, in *dynamodb.ScanInput, _ ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	f.mu.Lock()
	f.pages++
	f.mu.Unlock()
	cutoff, _ := strconv.ParseInt(in.ExpressionAttributeValues[":cutoff"].(*types.AttributeValueMemberN).Value, 10, 64)
	filter := aws.ToString(in.FilterExpression)
	if in.ExpressionAttributeNames["#ttl"] != Attribute {
		filter = ""
	}
	withoutTTL, overdue := strings.Contains(filter, "attribute_not_exists(#ttl)"), strings.Contains(filter, "#ttl < :cutoff")
	var keys []string
	for k := range f.items {
		// A parallel scan's segment holds its share of the keys (by hash, as DynamoDB splits them).
		if in.TotalSegments != nil && int32(crc32.ChecksumIEEE([]byte(k))%uint32(*in.TotalSegments)) != *in.Segment {
			continue
		}
		keys = append(keys, k)
	}
	// Deterministic pages: sorted keys, resuming after ExclusiveStartKey.
	slices.Sort(keys)
	start := 0
	if in.ExclusiveStartKey != nil {
		last := in.ExclusiveStartKey["pk"].(*types.AttributeValueMemberS).Value
		for start < len(keys) && keys[start] <= last {
			start++
		}
	}
	end := min(start+2, len(keys))
	out := &dynamodb.ScanOutput{}
	for _, k := range keys[start:end] {
		exp := f.items[k]
		item := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: k}, "sk": &types.AttributeValueMemberS{Value: "RCPT#someone@example.com"}}
		if exp < 0 && !withoutTTL {
			continue
		}
		if exp >= 0 {
			if exp >= cutoff || !overdue {
				continue
			}
			item[Attribute] = &types.AttributeValueMemberN{Value: strconv.FormatInt(exp, 10)}
		}
		out.Items = append(out.Items, item)
	}
	if end < len(keys) {
		out.LastEvaluatedKey = map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: keys[end-1]}}
	}
	return out, nil
}

type fakeBuckets map[string][]time.Time // bucket → objects' LastModified

func (f fakeBuckets) ListObjectsV2(_ context.Context, in *s3.ListObjectsV2Input, _ ...func(*s3.Options)) (*s3.ListObjectsV2Output, error) {
	out := &s3.ListObjectsV2Output{}
	for i, t := range f[aws.ToString(in.Bucket)] {
		out.Contents = append(out.Contents, s3types.Object{Key: aws.String("jobs/" + strconv.Itoa(i)), LastModified: aws.Time(t)})
	}
	return out, nil
}

func TestRun(t *testing.T) {
	day := 24 * time.Hour
	for _, tt := range []struct {
		name    string
		rows    map[string]int64
		objects fakeBuckets
		want    Report
		forever bool // UNIQUENESS_RETENTION_DAYS=0
	}{
		{"all within their TTL", map[string]int64{"JOB#a": now.Add(day).Unix(), "JOB#b": now.Add(-time.Hour).Unix()},
			fakeBuckets{"raw": {now.Add(-6 * day)}, "redacted": {now.Add(-29 * day)}}, Report{}, false},
		{"expired but within DynamoDB's deletion lag", map[string]int64{"JOB#a": now.Add(-2 * day).Unix()}, nil, Report{}, false},
		{"expired past the lag", map[string]int64{"JOB#a": now.Add(-4 * day).Unix(), "JOB#b": now.Add(-10 * day).Unix(), "JOB#c": now.Unix()},
			nil, Report{RowsOverdue: 2}, false},
		{"a row without TTL lives forever", map[string]int64{"OUTBOX#1#1": -1, "JOB#a": now.Unix(), "CL#1": -1}, nil, Report{RowsWithoutTTL: 2}, false},
		// Uniqueness kept forever: its records carry no TTL by design, but
		// a job (data) without one is still a violation.
		{"uniqueness kept forever: only data rows need a TTL", map[string]int64{"OUTBOX#1#1": -1, "IDEM#k": -1, "CL#1": -1, "LEDGER#review#1": -1, "OUTCOME#review#1": -1, "OUTCOME#kind#//depot/a/...": -1, "JOB#a": -1}, nil, Report{RowsWithoutTTL: 1}, true},
		{"a raw artifact past 7 days plus the lifecycle lag", nil,
			fakeBuckets{"raw": {now.Add(-8 * day), now.Add(-10 * day)}, "redacted": {now.Add(-10 * day)}}, Report{ObjectsOverdue: 1}, false},
		{"a redacted artifact past 30 days plus the lag", nil, fakeBuckets{"redacted": {now.Add(-33 * day)}}, Report{ObjectsOverdue: 1}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var metrics, logs bytes.Buffer
			c := &Checker{Table: &fakeTable{items: tt.rows}, TableName: "jobs", S3: tt.objects, UniquenessForever: tt.forever,
				Buckets: []Bucket{{"raw", 7 * day}, {"redacted", 30 * day}},
				Now:     func() time.Time { return now }, Metrics: obs.NewMetrics(&metrics, "test"),
				Log: slog.New(slog.NewJSONHandler(&logs, nil))}
			got, err := c.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("report %+v, want %+v", got, tt.want)
			}
			if got.Clean() != (tt.want == Report{}) {
				t.Errorf("Clean() = %v", got.Clean())
			}
			for _, m := range []string{"RetentionRowsOverdue", "RetentionRowsWithoutTTL", "RetentionObjectsOverdue"} {
				if !strings.Contains(metrics.String(), m) {
					t.Errorf("metric %s not emitted: %s", m, metrics.String())
				}
			}
			if strings.Contains(logs.String(), "someone@example.com") {
				t.Errorf("a recipient address reached the log: %s", logs.String())
			}
		})
	}
}

// Every page of the scan is read: an overdue row on the last page counts.
func TestRunReadsEveryPage(t *testing.T) {
	rows := map[string]int64{}
	for i := range 7 {
		rows["JOB#"+strconv.Itoa(i)] = now.Unix()
	}
	rows["JOB#9"] = now.Add(-30 * 24 * time.Hour).Unix()
	table := &fakeTable{items: rows}
	c := &Checker{Table: table, TableName: "jobs", S3: fakeBuckets{}, Now: func() time.Time { return now }}
	got, err := c.Run(context.Background())
	if err != nil || got.RowsOverdue != 1 {
		t.Fatalf("report %+v, %v; want 1 overdue row", got, err)
	}
	if table.pages < 4 {
		t.Errorf("%d pages read, want all 4", table.pages)
	}
}

// memState is the pass row that keeps a round between runs.
type memState struct{ s string }

func (m *memState) Load(context.Context) (string, error) { return m.s, nil }
func (m *memState) Save(_ context.Context, s string) error {
	m.s = s
	return nil
}

// A round too large for one run goes on over several: each run scans every
// segment until its budget, saves where each stopped, and the next run
// continues; the round's counts (each row once) are emitted when it
// completes, and the next round starts a day after this one began.
func TestRoundResumesAcrossRuns(t *testing.T) {
	rows := map[string]int64{}
	for i := range 40 {
		rows[fmt.Sprintf("JOB#%02d", i)] = now.Add(24 * time.Hour).Unix()
	}
	for _, k := range []string{"JOB#05", "JOB#17", "JOB#33"} {
		rows[k] = now.Add(-10 * 24 * time.Hour).Unix()
	}
	rows["CL#9"] = -1
	var mu sync.Mutex
	clock := now
	tick := func() time.Time { // every read moves the clock on a second
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(time.Second)
		return clock
	}
	var metrics bytes.Buffer
	state := &memState{}
	c := &Checker{Table: &fakeTable{items: rows}, TableName: "jobs", S3: fakeBuckets{}, Segments: 4, Budget: time.Second, State: state,
		Now: tick, Metrics: obs.NewMetrics(&metrics, "test")}
	runs := 0
	var got Report
	for got = (Report{Pending: true}); got.Pending; runs++ {
		if runs > 20 {
			t.Fatal("the round never completed")
		}
		var err error
		if got, err = c.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got.Pending && strings.Contains(metrics.String(), "RetentionRowsOverdue") {
			t.Fatalf("run %d: metrics emitted before the round completed: %s", runs, metrics.String())
		}
	}
	if runs < 3 {
		t.Errorf("the round took %d runs: the budget did not bound them", runs)
	}
	if got.RowsOverdue != 3 || got.RowsWithoutTTL != 1 {
		t.Errorf("round report %+v, want each of the 3 overdue rows and the row without TTL counted once", got)
	}
	if !strings.Contains(metrics.String(), `"RetentionRowsOverdue":3`) {
		t.Errorf("metrics %s, want RetentionRowsOverdue 3", metrics.String())
	}
	if next, _ := c.Run(context.Background()); !next.Idle {
		t.Errorf("a run within the day after a round: %+v, want idle", next)
	}
	clock = clock.Add(Every)
	if next, _ := c.Run(context.Background()); next.Idle {
		t.Errorf("a run a day later: %+v, want a new round", next)
	}
}

// lastAge is the last RetentionRoundAgeHours the metrics hold (-1: none).
func lastAge(t *testing.T, metrics *bytes.Buffer) float64 {
	t.Helper()
	mm := regexp.MustCompile(`"RetentionRoundAgeHours":([0-9.e+-]+)`).FindAllStringSubmatch(metrics.String(), -1)
	if len(mm) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(mm[len(mm)-1][1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestRoundAgeRisesWhenRoundsStopCompleting: every run says how long ago the
// last complete round began, so a round that never completes pages (the
// RetentionRoundAgeHours alarm, 48 hours) instead of going quiet.
func TestRoundAgeRisesWhenRoundsStopCompleting(t *testing.T) {
	small := map[string]int64{"JOB#1": now.Add(time.Hour).Unix()}
	big := map[string]int64{}
	for i := range 400 {
		big[fmt.Sprintf("JOB#%03d", i)] = now.Add(time.Hour).Unix()
	}
	var metrics bytes.Buffer
	state := &memState{}
	clock, step := now, time.Duration(0)
	tick := func() time.Time { // each read moves the clock on by step
		clock = clock.Add(step)
		return clock
	}
	c := &Checker{Table: &fakeTable{items: small}, TableName: "jobs", S3: fakeBuckets{}, Segments: 1, State: state,
		Now: tick, Metrics: obs.NewMetrics(&metrics, "test")}
	run := func(at time.Time) Report {
		t.Helper()
		clock = at
		rep, err := c.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	if rep := run(now); rep.Pending || lastAge(t, &metrics) != 0 {
		t.Fatalf("a first round that completed: %+v, age %v, want 0", rep, lastAge(t, &metrics))
	}
	if rep := run(now.Add(5 * time.Hour)); !rep.Idle || lastAge(t, &metrics) != 5 {
		t.Fatalf("an idle run 5 h later: %+v, age %v, want 5", rep, lastAge(t, &metrics))
	}
	// From the next day the table is large and each run reads one page
	// before its budget ends: the round goes on and on without completing.
	c.Table, c.Budget, step = &fakeTable{items: big}, time.Second, time.Second
	at := now.Add(Every)
	for range 40 {
		at = at.Add(time.Hour)
		if rep := run(at); !rep.Pending {
			t.Fatalf("run at %v: %+v, want the round still pending", at, rep)
		}
	}
	if age, want := lastAge(t, &metrics), at.Sub(now).Hours(); age < 48 || age < want || age > want+0.01 {
		t.Errorf("after 40 runs of a round that never completes, age %v h, want %v (since the last complete round began, past 48)", age, want)
	}
}
