package ledger

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/awserr"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/store"
)

// An entry is one item of the jobs table, beside the delivery identities:
//
//	pk  LEDGER#<kind>#<id>      (LEDGER#review#885, LEDGER#cl#12345)
//	sk  V#<version, 10 digits>  (V#0000000002: versions sort as numbers)
//
// so Previous is one Query. Files and findings are one gzip-compressed JSON
// attribute ("body"), so thousands of files fit DynamoDB's 400 KB item; one
// that would not fit anyway is stored without its files (Put).
const (
	itemPrefix = "LEDGER#"
	sortPrefix = "V#"
	maxBody    = 350 << 10 // leaves room for the other attributes in 400 KB
)

func partition(t Thread) string  { return itemPrefix + t.Kind + "#" + strconv.FormatInt(t.ID, 10) }
func sortKey(version int) string { return fmt.Sprintf("%s%010d", sortPrefix, version) }

// Store is the ledger in the jobs table. It implements Entries.
type Store struct {
	api       store.LogAPI
	table     string
	retention time.Duration
}

// DefaultRetention is how long an entry is kept when
// UNIQUENESS_RETENTION_DAYS is unset, as for delivery identities.
const DefaultRetention = 365 * 24 * time.Hour

// NewStore returns the ledger over the jobs table.
func NewStore(api store.LogAPI, table string) *Store {
	return &Store{api: api, table: table, retention: DefaultRetention}
}

// WithUniquenessRetention keeps new entries as long as the delivery
// identities beside them (UNIQUENESS_RETENTION_DAYS); 0 forever.
func (s *Store) WithUniquenessRetention(d time.Duration) *Store {
	if d >= 0 {
		s.retention = d
	}
	return s
}

// ErrVersionTaken means the thread's version is already recorded by
// another job; its entry is kept (VersionTakenError names the job).
var ErrVersionTaken = errors.New("version already in the ledger from another job")

// VersionTakenError is ErrVersionTaken with the job that holds the entry.
type VersionTakenError struct{ JobID string }

func (e *VersionTakenError) Error() string {
	return fmt.Sprintf("%v (job %s)", ErrVersionTaken, e.JobID)
}

func (e *VersionTakenError) Unwrap() error { return ErrVersionTaken }

// body is what an entry holds beyond its keys.
type body struct {
	Files    []File    `json:"files"`
	Findings []Finding `json:"findings"`
	// FilesOmitted: the files did not fit the item; readers see none (no
	// file is carried over or counts as reviewed in full).
	FilesOmitted bool `json:"files_omitted,omitempty"`
}

// Put records v, idempotent per job: the same job writing again replaces its
// own entry. The first job to record a version keeps it: another job's Put
// (Swarm re-running an unchanged version) changes nothing and returns a
// *VersionTakenError, so an entry a later version compared against never
// changes under it.
func (s *Store) Put(ctx context.Context, v Version) error {
	if err := validate(v); err != nil {
		return err
	}
	enc, err := encode(body{Files: v.Files, Findings: v.Findings})
	if err != nil {
		return err
	}
	if len(enc) > maxBody {
		if enc, err = encode(body{Findings: v.Findings, FilesOmitted: true}); err != nil {
			return err
		}
		if len(enc) > maxBody {
			return failure.Errorf(failure.InternalBug, "ledger entry %s v%d: %d findings do not fit one item", v.Thread, v.Version, len(v.Findings))
		}
	}
	now := job.Now()
	item := map[string]types.AttributeValue{
		"pk":          sv(partition(v.Thread)),
		"sk":          sv(sortKey(v.Version)),
		"thread_kind": sv(v.Thread.Kind),
		"thread_id":   nv(v.Thread.ID),
		"version":     nv(int64(v.Version)),
		"job_id":      sv(v.JobID),
		"change":      nv(v.Change),
		"written_at":  sv(job.FormatTime(now)),
		"body":        &types.AttributeValueMemberB{Value: enc},
	}
	if s.retention > 0 {
		item["expires_at"] = nv(now.Add(s.retention).Unix())
	}
	_, err = s.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: item,
		ConditionExpression:                 aws.String("attribute_not_exists(pk) OR job_id = :job"),
		ExpressionAttributeValues:           map[string]types.AttributeValue{":job": sv(v.JobID)},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		holder := ""
		if j, ok := ccf.Item["job_id"].(*types.AttributeValueMemberS); ok {
			holder = j.Value
		}
		return &VersionTakenError{JobID: holder}
	case err != nil:
		return awserr.Wrap("ledger put", err)
	}
	return nil
}

// Previous returns the latest entry of t below version (nil when none); one
// past its expires_at counts as gone.
func (s *Store) Previous(ctx context.Context, t Thread, version int) (*Version, error) {
	if version <= 1 {
		return nil, nil
	}
	out, err := s.api.Query(ctx, &dynamodb.QueryInput{TableName: &s.table, ConsistentRead: aws.Bool(true),
		KeyConditionExpression: aws.String("pk = :pk AND sk < :sk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": sv(partition(t)), ":sk": sv(sortKey(version)),
		},
		ScanIndexForward: aws.Bool(false), Limit: aws.Int32(1)})
	if err != nil {
		return nil, awserr.Wrap("ledger previous", err)
	}
	if len(out.Items) == 0 {
		return nil, nil
	}
	return decodeItem(t, out.Items[0], job.Now())
}

func decodeItem(t Thread, item map[string]types.AttributeValue, now time.Time) (*Version, error) {
	if exp, ok := num(item["expires_at"]); ok && exp > 0 && exp <= now.Unix() {
		return nil, nil
	}
	v := &Version{Thread: t}
	ver, ok1 := num(item["version"])
	change, ok2 := num(item["change"])
	jobID, ok3 := item["job_id"].(*types.AttributeValueMemberS)
	raw, ok4 := item["body"].(*types.AttributeValueMemberB)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return nil, failure.Errorf(failure.SchemaInvalid, "ledger entry of %s is malformed", t)
	}
	v.Version, v.Change, v.JobID = int(ver), change, jobID.Value
	b, err := decode(raw.Value)
	if err != nil {
		return nil, failure.Wrap(failure.SchemaInvalid, fmt.Errorf("ledger entry %s v%d: %w", t, v.Version, err))
	}
	v.Files, v.Findings = b.Files, b.Findings
	return v, nil
}

func validate(v Version) error {
	switch {
	case v.Thread.Kind != KindReview && v.Thread.Kind != KindChangelist:
		return failure.Errorf(failure.InternalBug, "ledger: unknown thread kind %q", v.Thread.Kind)
	case v.Thread.ID <= 0 || v.Version <= 0 || v.JobID == "":
		return failure.Errorf(failure.InternalBug, "ledger: entry needs a thread, a version and a job (%s v%d job %q)", v.Thread, v.Version, v.JobID)
	}
	return nil
}

func encode(b body) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := json.NewEncoder(zw).Encode(b); err != nil {
		return nil, failure.Wrap(failure.InternalBug, err)
	}
	if err := zw.Close(); err != nil {
		return nil, failure.Wrap(failure.InternalBug, err)
	}
	return buf.Bytes(), nil
}

func decode(raw []byte) (body, error) {
	var b body
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return b, err
	}
	// An entry is at most maxBody compressed; bound what it may expand to.
	if err := json.NewDecoder(io.LimitReader(zr, 64<<20)).Decode(&b); err != nil {
		return b, err
	}
	return b, nil
}

func sv(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }
func nv(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func num(av types.AttributeValue) (int64, bool) {
	n, ok := av.(*types.AttributeValueMemberN)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(n.Value, 10, 64)
	return v, err == nil
}
