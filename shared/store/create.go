package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
)

// SavedResponse is the creating request's HTTP response; duplicates get it back
// byte for byte.
type SavedResponse struct {
	Status  int               `dynamodbav:"status" json:"status"`
	Headers map[string]string `dynamodbav:"headers" json:"headers"`
	Body    string            `dynamodbav:"body" json:"body"`
}

// Idempotency is the record that makes idempotency_key unique.
type Idempotency struct {
	Key         string        `dynamodbav:"idempotency_key"`
	RequestHash string        `dynamodbav:"request_hash"` // SHA-256 of the canonical request
	JobID       string        `dynamodbav:"job_id"`
	Response    SavedResponse `dynamodbav:"response"`
	CreatedAt   string        `dynamodbav:"created_at"`
	ExpiresAt   int64         `dynamodbav:"expires_at,omitempty"` // DynamoDB TTL, epoch seconds (uniqueness retention); none: kept forever
}

// Changelist gates versioned reruns: a job for a changelist needs a
// review_version strictly higher than LatestVersion.
type Changelist struct {
	Changelist    int64  `dynamodbav:"changelist_id"`
	LatestVersion int    `dynamodbav:"latest_version"`
	LatestJobID   string `dynamodbav:"latest_job_id"`
	UpdatedAt     string `dynamodbav:"updated_at"`
}

// DuplicateKeyError carries the record that already holds the key.
type DuplicateKeyError struct{ Existing *Idempotency }

func (e *DuplicateKeyError) Error() string {
	return "idempotency key already used by job " + e.Existing.JobID
}
func (e *DuplicateKeyError) Unwrap() error { return ErrDuplicateKey }

// StaleVersionError carries the changelist record that blocked the job.
type StaleVersionError struct{ Current *Changelist }

func (e *StaleVersionError) Error() string {
	return fmt.Sprintf("review_version must be higher than %d (job %s)", e.Current.LatestVersion, e.Current.LatestJobID)
}
func (e *StaleVersionError) Unwrap() error { return ErrStaleVersion }

// Create writes a new job, its idempotency record and the changelist's new
// latest version in one transaction. It fails with *DuplicateKeyError when the
// key exists (the caller compares hashes) and *StaleVersionError when
// review_version is not above the latest.
func (st *Store) Create(ctx context.Context, j *job.Job, idem *Idempotency) error {
	now, err := job.ParseTime(j.CreatedAt)
	if err != nil {
		return failure.Wrap(failure.InternalBug, fmt.Errorf("job created_at: %w", err))
	}
	if j.ExpiresAt == 0 {
		j.ExpiresAt = st.ExpiresAt(now)
	}
	if idem.ExpiresAt == 0 {
		idem.ExpiresAt = st.UniquenessExpiresAt(now)
	}
	// The version gate lives as long as the idempotency record: both are
	// uniqueness, not data.
	gate := "SET changelist_id = :cl, latest_version = :v, latest_job_id = :id, updated_at = :now, expires_at = :exp"
	gateValues := map[string]types.AttributeValue{":cl": n(j.Changelist), ":v": n(int64(j.ReviewVersion)), ":id": s(j.ID), ":now": s(j.CreatedAt), ":exp": n(idem.ExpiresAt)}
	if idem.ExpiresAt == 0 {
		gate = "SET changelist_id = :cl, latest_version = :v, latest_job_id = :id, updated_at = :now REMOVE expires_at"
		delete(gateValues, ":exp")
	}
	it := toItem(j)
	it.LastWrite = string(job.EventCreated)
	jobItem, err := attributevalue.MarshalMap(it)
	if err != nil {
		return fmt.Errorf("marshal job: %w", err)
	}
	jobItem["pk"], jobItem["sk"] = s(jobPK(j.ID)), s(skJob)
	idemItem, err := attributevalue.MarshalMap(idem)
	if err != nil {
		return fmt.Errorf("marshal idempotency record: %w", err)
	}
	idemItem["pk"], idemItem["sk"] = s(idemPK(idem.Key)), s(skIdem)

	_, err = st.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: &st.table, Item: idemItem, ConditionExpression: aws.String("attribute_not_exists(pk)"),
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}},
		{Put: &types.Put{TableName: &st.table, Item: jobItem, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
		{Update: &types.Update{TableName: &st.table, Key: key(changelistPK(j.Changelist), skChangelist),
			UpdateExpression:                    aws.String(gate),
			ConditionExpression:                 aws.String("attribute_not_exists(latest_version) OR latest_version < :v"),
			ExpressionAttributeValues:           gateValues,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}},
	}})
	if err == nil {
		return nil
	}
	return st.createFailed(ctx, j, idem, err)
}

// createFailed classifies Create's cancelled transaction: key taken
// (*DuplicateKeyError, or success when it is this job's own earlier attempt),
// version stale (*StaleVersionError), else cancelled.
func (st *Store) createFailed(ctx context.Context, j *job.Job, idem *Idempotency, err error) error {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return classifyAWS("create job", err)
	}
	reasons := tce.CancellationReasons
	if len(reasons) > 0 && failedCondition(reasons[0]) {
		existing := &Idempotency{}
		if err := st.fromReason(ctx, reasons[0], idemPK(idem.Key), skIdem, existing); err != nil {
			return err
		}
		if existing.JobID == j.ID {
			// Our own earlier attempt was applied (all three items) and its
			// answer lost.
			return nil
		}
		return &DuplicateKeyError{Existing: existing}
	}
	if len(reasons) > 2 && failedCondition(reasons[2]) {
		cur := &Changelist{}
		if err := st.fromReason(ctx, reasons[2], changelistPK(j.Changelist), skChangelist, cur); err != nil {
			return err
		}
		return &StaleVersionError{Current: cur}
	}
	return cancelled("create job", err, reasons)
}

// cancelled classifies a cancelled transaction no failed condition explains:
// conflict or throttling (retryable), else the AWS class.
func cancelled(op string, err error, reasons []types.CancellationReason) error {
	for _, r := range reasons {
		if aws.ToString(r.Code) == "TransactionConflict" {
			return failure.Wrap(failure.Conflict, fmt.Errorf("%s: %w", op, err))
		}
		if aws.ToString(r.Code) == "ThrottlingError" || aws.ToString(r.Code) == "ProvisionedThroughputExceeded" {
			return failure.Wrap(failure.RateLimited, fmt.Errorf("%s: %w", op, err))
		}
	}
	return classifyAWS(op, err)
}

// fromReason decodes a cancellation reason's item, reading it when the reason
// has none.
func (st *Store) fromReason(ctx context.Context, r types.CancellationReason, pk, sk string, into any) error {
	if r.Item != nil {
		if err := attributevalue.UnmarshalMap(r.Item, into); err != nil {
			return failure.Wrap(failure.InternalBug, fmt.Errorf("decode %s: %w", pk, err))
		}
		return nil
	}
	return st.getItem(ctx, pk, sk, into)
}

// GetChangelist reads a changelist's version gate.
func (st *Store) GetChangelist(ctx context.Context, cl int64) (*Changelist, error) {
	var rec Changelist
	if err := st.getItem(ctx, changelistPK(cl), skChangelist, &rec); err != nil {
		return nil, err
	}
	return &rec, nil
}

func (st *Store) getItem(ctx context.Context, pk, sk string, into any) error {
	out, err := st.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &st.table, Key: key(pk, sk), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return classifyAWS("get "+pk, err)
	}
	if out.Item == nil {
		return fmt.Errorf("%s: %w", pk, job.ErrNotFound)
	}
	if err := attributevalue.UnmarshalMap(out.Item, into); err != nil {
		return fmt.Errorf("decode %s: %w", pk, err)
	}
	return nil
}

// Due lists jobs past their sweep deadline: never enqueued, a message lost, or a
// lease expired with nothing in flight.
func (st *Store) Due(ctx context.Context, now time.Time, limit int32) ([]*job.Job, error) {
	out, err := st.api.Query(ctx, &dynamodb.QueryInput{
		TableName: &st.table, IndexName: aws.String("sweep"), Limit: aws.Int32(limit),
		KeyConditionExpression:    aws.String("sweep_shard = :shard AND sweep_at <= :now"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":shard": s(job.SweepShard), ":now": s(job.FormatTime(now))},
	})
	if err != nil {
		return nil, classifyAWS("query due jobs", err)
	}
	jobs := make([]*job.Job, 0, len(out.Items))
	for _, item := range out.Items {
		it, err := decodeItem(item)
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, it.job())
	}
	return jobs, nil
}
