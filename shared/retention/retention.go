// Package retention owns the periodic verification of rule RT-3: nothing
// outlives its TTL. DynamoDB TTL and S3 lifecycle rules delete on their own,
// but silently and late; this check looks for what they missed — a row whose
// expires_at passed longer ago than DynamoDB's deletion lag, a row with no
// expires_at at all (it would live forever), an artifact older than its
// bucket's expiry plus the lifecycle's lag — and reports counts as metrics an
// alarm pages on. It reads keys and dates only, never item or object content.
package retention

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/criticizer/criticizer/shared/awserr"
	"github.com/criticizer/criticizer/shared/obs"
)

// Attribute is the jobs table's TTL attribute (epoch seconds).
const Attribute = "expires_at"

// Default lags: DynamoDB deletes expired items "typically within a few days"
// and S3 applies lifecycle expiry about once a day, so only what is older
// than these past its expiry is overdue.
const (
	DefaultTableGrace  = 72 * time.Hour
	DefaultBucketGrace = 48 * time.Hour
)

// TableAPI is the part of the DynamoDB client the check uses.
type TableAPI interface {
	Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

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
	Table       TableAPI
	TableName   string
	S3          BucketAPI
	Buckets     []Bucket
	TableGrace  time.Duration // default DefaultTableGrace
	BucketGrace time.Duration // default DefaultBucketGrace
	Now         func() time.Time
	// UniquenessForever is set when UNIQUENESS_RETENTION_DAYS is 0: the
	// records that make a promise unique (idempotency records, changelist
	// gates, delivery rows) are then kept without a TTL by design, and
	// only they are exempt from the "no TTL" count.
	UniquenessForever bool
	Log               *slog.Logger
	Metrics           *obs.Metrics
}

// Report counts what outlived its TTL.
type Report struct {
	RowsOverdue    int `json:"rows_overdue"`     // expires_at passed more than the grace ago
	RowsWithoutTTL int `json:"rows_without_ttl"` // no expires_at: would never expire
	ObjectsOverdue int `json:"objects_overdue"`  // older than the bucket's expiry plus the grace
}

// Clean reports whether nothing outlived its TTL.
func (r Report) Clean() bool { return r.RowsOverdue+r.RowsWithoutTTL+r.ObjectsOverdue == 0 }

// Run checks the table and every bucket, emits the counts as the metrics
// RetentionRowsOverdue, RetentionRowsWithoutTTL and RetentionObjectsOverdue
// (zeros too, so the alarm sees data), and logs the first offending keys.
func (c *Checker) Run(ctx context.Context) (Report, error) {
	now := time.Now().UTC()
	if c.Now != nil {
		now = c.Now().UTC()
	}
	tableGrace, bucketGrace := c.TableGrace, c.BucketGrace
	if tableGrace <= 0 {
		tableGrace = DefaultTableGrace
	}
	if bucketGrace <= 0 {
		bucketGrace = DefaultBucketGrace
	}
	var rep Report
	if err := c.rows(ctx, now.Add(-tableGrace), &rep); err != nil {
		return rep, err
	}
	for _, b := range c.Buckets {
		if err := c.objects(ctx, b, now.Add(-b.TTL-bucketGrace), &rep); err != nil {
			return rep, err
		}
	}
	c.Metrics.Put("RetentionRowsOverdue", float64(rep.RowsOverdue), obs.Count, nil)
	c.Metrics.Put("RetentionRowsWithoutTTL", float64(rep.RowsWithoutTTL), obs.Count, nil)
	c.Metrics.Put("RetentionObjectsOverdue", float64(rep.ObjectsOverdue), obs.Count, nil)
	return rep, nil
}

// rows scans for items whose expires_at is missing or before cutoff.
func (c *Checker) rows(ctx context.Context, cutoff time.Time, rep *Report) error {
	in := &dynamodb.ScanInput{
		TableName:                aws.String(c.TableName),
		FilterExpression:         aws.String("attribute_not_exists(#ttl) OR #ttl < :cutoff"),
		ProjectionExpression:     aws.String("pk, sk, #ttl"),
		ExpressionAttributeNames: map[string]string{"#ttl": Attribute},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":cutoff": &types.AttributeValueMemberN{Value: strconv.FormatInt(cutoff.Unix(), 10)},
		},
	}
	for {
		out, err := c.Table.Scan(ctx, in)
		if err != nil {
			return awserr.Wrap("retention scan", err)
		}
		for _, item := range out.Items {
			key := itemKey(item)
			if _, ok := item[Attribute]; ok {
				rep.RowsOverdue++
				c.report(ctx, "row outlived its TTL", key, rep.RowsOverdue)
			} else if !c.UniquenessForever || !uniquenessRecord(item) {
				rep.RowsWithoutTTL++
				c.report(ctx, "row has no TTL", key, rep.RowsWithoutTTL)
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
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

// report logs the first few offenders by key: enough to start from, not a
// flood when a rule is missing altogether.
func (c *Checker) report(ctx context.Context, msg, key string, n int) {
	if n <= 5 && c.Log != nil {
		c.Log.WarnContext(ctx, msg, "key", key, "event", "retention_violation")
	}
}

// uniquenessPrefixes are the partition-key prefixes of the records that
// make a promise unique: idempotency records, changelist version gates and
// outbox rows (delivery identities), and the rerun ledger kept beside them.
var uniquenessPrefixes = []string{"IDEM#", "CL#", "OUTBOX#", "LEDGER#"}

func uniquenessRecord(item map[string]types.AttributeValue) bool {
	v, ok := item["pk"].(*types.AttributeValueMemberS)
	if !ok {
		return false
	}
	for _, p := range uniquenessPrefixes {
		if strings.HasPrefix(v.Value, p) {
			return true
		}
	}
	return false
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
