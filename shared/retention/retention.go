// Package retention verifies rule RT-3, nothing outlives its TTL: DynamoDB TTL
// and S3 lifecycle rules delete silently and late, so this check counts what
// they missed — a row past expires_at by more than DynamoDB's lag, a row with no
// expires_at (it would live forever), an artifact older than its bucket's expiry
// plus the lifecycle's lag — as metrics an alarm pages on. It reads keys and
// dates only.
//
// The table check is a round of a parallel scan (Segments at once) that may span
// runs: each run scans until its Budget and saves every segment's position and
// the counts (State); the metrics go out when a round completes, a new round
// starts a day after the last began, and every run emits the last complete
// round's age, so a round that stops completing pages. At 10 million items a
// round reads each item once a day, whatever the timeout.
package retention

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/criticizer/criticizer/shared/awserr"
	"github.com/criticizer/criticizer/shared/obs"
	"github.com/criticizer/criticizer/shared/store"
)

// Attribute is the jobs table's TTL attribute (epoch seconds).
const Attribute = "expires_at"

// The lags allowed: DynamoDB deletes expired items "typically within a few
// days", S3 applies lifecycle expiry about daily.
const (
	TableGrace  = 72 * time.Hour
	BucketGrace = 48 * time.Hour
)

// BucketAPI is the part of the S3 client the check uses.
type BucketAPI interface {
	ListObjectsV2(context.Context, *s3.ListObjectsV2Input, ...func(*s3.Options)) (*s3.ListObjectsV2Output, error)
}

// Bucket is an artifact bucket and the expiry of its lifecycle rule.
type Bucket struct {
	Name string
	TTL  time.Duration
}

// Checker verifies the jobs table and the artifact buckets.
type Checker struct {
	Table     store.ScanAPI
	TableName string
	S3        BucketAPI
	Buckets   []Bucket
	Now       func() time.Time
	// UniquenessForever (UNIQUENESS_RETENTION_DAYS 0): the uniqueness records
	// are kept without TTL by design and exempt from the "no TTL" count.
	UniquenessForever bool
	// Segments scanned at once (DefaultSegments when zero).
	Segments int
	// Budget bounds how long one run scans (0: until the round is done).
	Budget time.Duration
	// State keeps a round's progress between runs; nil: every run is a whole
	// round.
	State State
	// Also rides the same scan (the outbox's data scrub), so the table is read
	// once a day.
	Also    Also
	Log     *slog.Logger
	Metrics *obs.Metrics
}

// DefaultSegments is how many segments a run scans in parallel.
const DefaultSegments = 8

// Every is how often a round starts.
const Every = 24 * time.Hour

// State keeps a round's progress (shared/outbox's pass rows).
type State interface {
	Load(ctx context.Context) (string, error)
	Save(ctx context.Context, state string) error
}

// Also is work on the retention scan: items its filter matches are scanned too,
// those it Matches passed to Visit. An interface, so shared/outbox need not
// import this package.
type Also interface {
	// ScanFilter is OR-ed into the scan's filter; project names what Match and
	// Visit read.
	ScanFilter() (filter string, names map[string]string, values map[string]types.AttributeValue, project []string)
	Match(item map[string]types.AttributeValue) bool
	Visit(ctx context.Context, item map[string]types.AttributeValue) error
}

// Report counts what outlived its TTL.
type Report struct {
	RowsOverdue    int `json:"rows_overdue"`     // expires_at passed more than the grace ago
	RowsWithoutTTL int `json:"rows_without_ttl"` // no expires_at: would never expire
	ObjectsOverdue int `json:"objects_overdue"`  // older than the bucket's expiry plus the grace
	// Pending: the round goes on next run (counts so far); Idle: none was due.
	Pending bool `json:"pending,omitempty"`
	Idle    bool `json:"idle,omitempty"`
	Visited int  `json:"visited,omitempty"` // items handed to Also in this round
}

// Clean reports whether nothing outlived its TTL.
func (r Report) Clean() bool { return r.RowsOverdue+r.RowsWithoutTTL+r.ObjectsOverdue == 0 }

// Run checks the table and buckets, emits RetentionRowsOverdue,
// RetentionRowsWithoutTTL and RetentionObjectsOverdue (zeros too) and logs the
// first offending keys.
func (c *Checker) Run(ctx context.Context) (Report, error) {
	now := c.now().UTC()
	r, due, err := c.load(ctx, now)
	if err != nil {
		return Report{}, err
	}
	if !due {
		c.putAge(r, now)
		return Report{Idle: true}, nil
	}
	if err := c.scan(ctx, r, now.Add(-TableGrace), now); err != nil {
		return r.Report, err // progress since the last save is scanned again: nothing counted twice
	}
	if !r.done() {
		r.Report.Pending = true
		c.putAge(r, now)
		return r.Report, c.save(ctx, r)
	}
	// The buckets hold only their lifecycle's window: listed once, at the
	// round's end.
	rep := r.Report
	rep.Pending = false
	for _, b := range c.Buckets {
		if err := c.objects(ctx, b, now.Add(-b.TTL-BucketGrace), &rep); err != nil {
			return rep, err
		}
	}
	c.Metrics.Put("RetentionRowsOverdue", float64(rep.RowsOverdue), obs.Count, nil)
	c.Metrics.Put("RetentionRowsWithoutTTL", float64(rep.RowsWithoutTTL), obs.Count, nil)
	c.Metrics.Put("RetentionObjectsOverdue", float64(rep.ObjectsOverdue), obs.Count, nil)
	done := &round{Last: r.Started}
	c.putAge(done, now)
	return rep, c.save(ctx, done)
}

// putAge emits RetentionRoundAgeHours, the hours since the last complete round
// began (or the current one, before any completed), from every run: a round that
// stops completing raises it past the alarm, and runs that stop leave it
// missing, which the alarm treats as breaching.
func (c *Checker) putAge(r *round, now time.Time) {
	from := cmp.Or(r.Last, r.Started)
	age := 0.0
	if t, err := time.Parse(time.RFC3339, from); err == nil {
		age = now.Sub(t).Hours()
	}
	c.Metrics.Put("RetentionRoundAgeHours", age, "None", nil) // hours: CloudWatch has no hour unit
}

// round is the progress of one scan of the table.
type round struct {
	Last     string    `json:"last,omitempty"`    // when the last complete round started
	Started  string    `json:"started,omitempty"` // the round in progress
	Segments []segment `json:"segments,omitempty"`
	Report   Report    `json:"report"`
}

// segment is one parallel scan segment's position (its LastEvaluatedKey).
type segment struct {
	After map[string]string `json:"after,omitempty"`
	Done  bool              `json:"done,omitempty"`
}

func (r *round) done() bool {
	return !slices.ContainsFunc(r.Segments, func(s segment) bool { return !s.Done })
}

// load returns the round in progress, or a new one when the last began a day
// ago; due is false when none is.
func (c *Checker) load(ctx context.Context, now time.Time) (r *round, due bool, err error) {
	r = &round{}
	if c.State != nil {
		s, err := c.State.Load(ctx)
		if err != nil {
			return nil, false, err
		}
		if s != "" {
			if err := json.Unmarshal([]byte(s), r); err != nil {
				r = &round{} // unreadable: start again rather than never check
			}
		}
	}
	if r.Started != "" {
		return r, true, nil
	}
	if last, err := time.Parse(time.RFC3339, r.Last); err == nil && now.Sub(last) < Every-time.Hour {
		return r, false, nil // a little under a day: an hourly trigger starts it on time
	}
	n := cmp.Or(max(c.Segments, 0), DefaultSegments)
	return &round{Last: r.Last, Started: now.Format(time.RFC3339), Segments: make([]segment, n)}, true, nil
}

func (c *Checker) save(ctx context.Context, r *round) error {
	if c.State == nil {
		return nil
	}
	b, _ := json.Marshal(r) // plain values: cannot fail
	return c.State.Save(ctx, string(b))
}

// scan runs the unfinished segments in parallel until they end or the budget
// does.
func (c *Checker) scan(ctx context.Context, r *round, cutoff, now time.Time) error {
	var deadline time.Time
	if c.Budget > 0 {
		deadline = now.Add(c.Budget)
	}
	var mu sync.Mutex
	errs := make([]error, len(r.Segments))
	var wg sync.WaitGroup
	for i := range r.Segments {
		if r.Segments[i].Done {
			continue
		}
		wg.Go(func() { errs[i] = c.segment(ctx, i, r, cutoff, deadline, &mu) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// segment scans one segment from its saved position, counting and visiting.
func (c *Checker) segment(ctx context.Context, i int, r *round, cutoff, deadline time.Time, mu *sync.Mutex) error {
	in := c.scanInput(cutoff)
	in.Segment, in.TotalSegments = aws.Int32(int32(i)), aws.Int32(int32(len(r.Segments)))
	mu.Lock()
	if after := r.Segments[i].After; len(after) > 0 {
		in.ExclusiveStartKey, _ = attributevalue.MarshalMap(after) // strings: cannot fail
	}
	mu.Unlock()
	for pages := dynamodb.NewScanPaginator(c.Table, in); pages.HasMorePages(); {
		out, err := pages.NextPage(ctx)
		if err != nil {
			return awserr.Wrap("retention scan", err)
		}
		for _, item := range out.Items {
			if err := c.item(ctx, item, cutoff, r, mu); err != nil {
				return err
			}
		}
		var after map[string]string
		_ = attributevalue.UnmarshalMap(out.LastEvaluatedKey, &after) // the table's keys are strings
		mu.Lock()
		r.Segments[i].After, r.Segments[i].Done = after, len(after) == 0
		mu.Unlock()
		if !deadline.IsZero() && !c.now().Before(deadline) {
			return nil
		}
	}
	return nil
}

// item counts one scanned item and hands it to Also when it wants it.
func (c *Checker) item(ctx context.Context, item map[string]types.AttributeValue, cutoff time.Time, r *round, mu *sync.Mutex) error {
	if c.Also != nil && c.Also.Match(item) {
		if err := c.Also.Visit(ctx, item); err != nil {
			return err
		}
		mu.Lock()
		r.Report.Visited++
		mu.Unlock()
	}
	exp, has := item[Attribute].(*types.AttributeValueMemberN)
	mu.Lock()
	defer mu.Unlock()
	key := itemKey(item)
	switch {
	case has:
		if v, _ := strconv.ParseInt(exp.Value, 10, 64); v < cutoff.Unix() {
			r.Report.RowsOverdue++
			c.report(ctx, "row outlived its TTL", key, r.Report.RowsOverdue)
		}
	case !c.UniquenessForever || !uniquenessRecord(item):
		r.Report.RowsWithoutTTL++
		c.report(ctx, "row has no TTL", key, r.Report.RowsWithoutTTL)
	}
	return nil
}

// scanInput filters for rows whose expires_at is missing or before cutoff, and
// Also's; it projects keys and dates only.
func (c *Checker) scanInput(cutoff time.Time) *dynamodb.ScanInput {
	in := &dynamodb.ScanInput{
		TableName:                aws.String(c.TableName),
		FilterExpression:         aws.String("attribute_not_exists(#ttl) OR #ttl < :cutoff"),
		ProjectionExpression:     aws.String("pk, sk, #ttl"),
		ExpressionAttributeNames: map[string]string{"#ttl": Attribute},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":cutoff": &types.AttributeValueMemberN{Value: strconv.FormatInt(cutoff.Unix(), 10)},
		},
	}
	if c.Also != nil {
		filter, names, values, project := c.Also.ScanFilter()
		in.FilterExpression = aws.String(*in.FilterExpression + " OR (" + filter + ")")
		in.ProjectionExpression = aws.String(*in.ProjectionExpression + ", " + strings.Join(project, ", "))
		maps.Copy(in.ExpressionAttributeNames, names)
		maps.Copy(in.ExpressionAttributeValues, values)
	}
	return in
}

func (c *Checker) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// objects lists the bucket for objects last modified before cutoff.
func (c *Checker) objects(ctx context.Context, b Bucket, cutoff time.Time, rep *Report) error {
	p := s3.NewListObjectsV2Paginator(c.S3, &s3.ListObjectsV2Input{Bucket: aws.String(b.Name)})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("retention list %s: %w", b.Name, err)
		}
		for _, o := range out.Contents {
			if o.LastModified != nil && o.LastModified.Before(cutoff) {
				rep.ObjectsOverdue++
				c.report(ctx, "artifact outlived its bucket's expiry", b.Name+"/"+aws.ToString(o.Key), rep.ObjectsOverdue)
			}
		}
	}
	return nil
}

// report logs the first few offenders: enough to start from, not a flood.
func (c *Checker) report(ctx context.Context, msg, key string, n int) {
	if n <= 5 && c.Log != nil {
		c.Log.WarnContext(ctx, msg, "key", key, "event", "retention_violation")
	}
}

// uniquenessPrefixes are the pk prefixes of the records that make a promise
// unique: idempotency records, version gates, delivery rows, and beside them the
// rerun ledger, outcomes and tallies (shared/outcome), received webhook
// deliveries (shared/swarmevents) and the weekly digest's rows (shared/digest).
var uniquenessPrefixes = []string{"IDEM#", "CL#", "OUTBOX#", "LEDGER#", "OUTCOME#review#", "OUTCOME#cl#", "OUTCOME#kind#", "SWARMEVENT#", "DIGEST#sent#"}

func uniquenessRecord(item map[string]types.AttributeValue) bool {
	v, ok := item["pk"].(*types.AttributeValueMemberS)
	if !ok {
		return false
	}
	return slices.ContainsFunc(uniquenessPrefixes, func(p string) bool { return strings.HasPrefix(v.Value, p) })
}

func itemKey(item map[string]types.AttributeValue) string {
	var pk, sk string
	if v, ok := item["pk"].(*types.AttributeValueMemberS); ok {
		pk = v.Value
	}
	if v, ok := item["sk"].(*types.AttributeValueMemberS); ok {
		sk = v.Value
	}
	// The sort key of a delivery row names its recipient: only its kind is logged.
	if i := strings.IndexByte(sk, '#'); i >= 0 {
		sk = sk[:i+1] + "…"
	}
	return pk + " / " + sk
}
