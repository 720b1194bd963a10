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

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
)

// SavedResponse is the HTTP response given to the request that created a job;
// duplicates of that request get it back byte for byte.
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
	ExpiresAt   int64         `dynamodbav:"expires_at"` // DynamoDB TTL, epoch seconds
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

// NewJob fills in a job's initial state: queued at fetch, every stage pending,
// due for the sweeper after sweepAfter unless its first message is consumed.
func NewJob(id, idemKey string, cl int64, version int, now time.Time, sweepAfter time.Duration) *Job {
	at := domain.FormatTime(now)
	j := &Job{
		ID: id, IdempotencyKey: idemKey, Changelist: cl, ReviewVersion: version,
		State: Queued, Stage: domain.StageFetch, CreatedAt: at, UpdatedAt: at, Seq: 1,
		Stages: map[domain.Stage]*StageRecord{}, RequestedRecipients: []string{}, Recipients: []string{},
		History:    []Event{{At: at, Type: "created", To: string(Queued)}},
		SweepShard: SweepShard, SweepAt: domain.FormatTime(now.Add(sweepAfter)),
	}
	for _, s := range domain.Stages {
		j.Stages[s] = &StageRecord{Status: StagePending}
	}
	return j
}

// Create stores a new job, its idempotency record and the changelist's new
// latest version in one transaction: either all three are written or none.
// It fails with *DuplicateKeyError when the key exists (whatever the payload;
// the caller compares hashes) and *StaleVersionError when review_version is
// not higher than the changelist's latest.
func (st *Store) Create(ctx context.Context, j *Job, idem *Idempotency) error {
	jobItem, err := attributevalue.MarshalMap(j)
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
			UpdateExpression:    aws.String("SET changelist_id = :cl, latest_version = :v, latest_job_id = :id, updated_at = :now"),
			ConditionExpression: aws.String("attribute_not_exists(latest_version) OR latest_version < :v"),
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":cl": n(j.Changelist), ":v": n(int64(j.ReviewVersion)), ":id": s(j.ID), ":now": s(j.CreatedAt)},
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}},
	}})
	if err == nil {
		return nil
	}
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return classifyAWS("create job", err)
	}
	reasons := tce.CancellationReasons
	failed := func(i int) bool { return len(reasons) > i && aws.ToString(reasons[i].Code) == "ConditionalCheckFailed" }
	if failed(0) {
		existing := &Idempotency{}
		if err := st.fromReason(ctx, reasons[0], idemPK(idem.Key), skIdem, existing); err != nil {
			return err
		}
		return &DuplicateKeyError{Existing: existing}
	}
	if failed(2) {
		cur := &Changelist{}
		if err := st.fromReason(ctx, reasons[2], changelistPK(j.Changelist), skChangelist, cur); err != nil {
			return err
		}
		return &StaleVersionError{Current: cur}
	}
	for _, r := range reasons {
		if aws.ToString(r.Code) == "TransactionConflict" {
			// Another transaction on the same items was in flight: retryable.
			return failure.Wrap(failure.Conflict, fmt.Errorf("create job: %w", err))
		}
	}
	return classifyAWS("create job", err)
}

// fromReason decodes the item a cancelled transaction returned for a failed
// condition, reading it only when the reason carries no image.
func (st *Store) fromReason(ctx context.Context, r types.CancellationReason, pk, sk string, into any) error {
	if r.Item != nil {
		if err := attributevalue.UnmarshalMap(r.Item, into); err != nil {
			return failure.Wrap(failure.InternalBug, fmt.Errorf("decode %s: %w", pk, err))
		}
		return nil
	}
	return st.getItem(ctx, pk, sk, into)
}

// GetIdempotency reads the record holding an idempotency key.
func (st *Store) GetIdempotency(ctx context.Context, idemKey string) (*Idempotency, error) {
	var rec Idempotency
	if err := st.getItem(ctx, idemPK(idemKey), skIdem, &rec); err != nil {
		return nil, err
	}
	return &rec, nil
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
		return fmt.Errorf("%s: %w", pk, ErrNotFound)
	}
	if err := attributevalue.UnmarshalMap(out.Item, into); err != nil {
		return fmt.Errorf("decode %s: %w", pk, err)
	}
	return nil
}

// Due lists jobs whose sweep deadline has passed: stored but never enqueued,
// a stage message lost, or a lease expired with nothing in flight.
func (st *Store) Due(ctx context.Context, now time.Time, limit int32) ([]*Job, error) {
	out, err := st.api.Query(ctx, &dynamodb.QueryInput{
		TableName: &st.table, IndexName: aws.String("sweep"), Limit: aws.Int32(limit),
		KeyConditionExpression:    aws.String("sweep_shard = :shard AND sweep_at <= :now"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":shard": s(SweepShard), ":now": s(domain.FormatTime(now))},
	})
	if err != nil {
		return nil, classifyAWS("query due jobs", err)
	}
	jobs := make([]*Job, 0, len(out.Items))
	for _, item := range out.Items {
		j, err := decodeJob(item)
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// Reschedule moves a job's sweep deadline, only if nobody changed the job
// since it was read (seq unchanged).
func (st *Store) Reschedule(ctx context.Context, j *Job, now, next time.Time, note string) error {
	at := domain.FormatTime(now)
	v := map[string]types.AttributeValue{":seq": n(j.Seq), ":sweep": s(domain.FormatTime(next)), ":now": s(at), ":one": n(1),
		":ev": event(at, "swept", j.Stage, j.State, j.State, note), ":empty": &types.AttributeValueMemberL{}}
	_, err := st.update(ctx, "reschedule", j.ID, "SET sweep_at = :sweep, updated_at = :now, seq = seq + :one, history = list_append(if_not_exists(history, :empty), :ev)",
		"seq = :seq", nil, v)
	if errors.Is(err, errConditionCheck) {
		return fmt.Errorf("reschedule: %w", ErrConflict)
	}
	return err
}

// Restart sends a dead-lettered job back to fetch with every stage reset: the
// operator's explicit full restart. Succeeded jobs are never restarted.
func (st *Store) Restart(ctx context.Context, id, actor string, now time.Time, sweepAfter time.Duration) (*Job, error) {
	at := domain.FormatTime(now)
	v := map[string]types.AttributeValue{":failed": s(string(Failed)), ":queued": s(string(Queued)), ":fetch": s(string(domain.StageFetch)),
		":now": s(at), ":one": n(1), ":shard": s(SweepShard), ":sweep": s(domain.FormatTime(now.Add(sweepAfter))),
		":ev": event(at, "full_restart", domain.StageFetch, Failed, Queued, "by "+actor), ":empty": &types.AttributeValueMemberL{}}
	stages := map[domain.Stage]*StageRecord{}
	for _, sg := range domain.Stages {
		stages[sg] = &StageRecord{Status: StagePending}
	}
	v[":stages"], _ = attributevalue.Marshal(stages)
	j, err := st.update(ctx, "restart", id,
		"SET #state = :queued, #stage = :fetch, stages = :stages, updated_at = :now, seq = seq + :one, sweep_shard = :shard, sweep_at = :sweep, history = list_append(if_not_exists(history, :empty), :ev)",
		"#state = :failed", map[string]string{"#state": "state", "#stage": "stage"}, v)
	if errors.Is(err, errConditionCheck) {
		return j, fmt.Errorf("restart: job is %s, only failed jobs restart: %w", j.State, ErrNotReplayable)
	}
	return j, err
}
