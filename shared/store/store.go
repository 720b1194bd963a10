package store

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
)

// API is the part of the DynamoDB client the store uses.
type API interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
	Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
}

// Store reads and writes the jobs table.
type Store struct {
	api   API
	table string
}

// New returns a Store over the named table.
func New(api API, table string) *Store { return &Store{api: api, table: table} }

// Errors callers branch on. Wrapped errors carry details; test with errors.Is
// or errors.As.
var (
	ErrNotFound       = errors.New("not found")
	ErrLeaseLost      = errors.New("stage lease lost: another worker owns it or it expired")
	ErrNotReplayable  = errors.New("job is not waiting for this replay")
	ErrConflict       = errors.New("conditional write refused")
	ErrStaleVersion   = errors.New("review_version is not higher than the changelist's latest")
	ErrDuplicateKey   = errors.New("idempotency key already used")
	errConditionCheck = errors.New("condition check failed")
)

func key(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk}}
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

func event(at, typ string, stage domain.Stage, from, to State, detail string) types.AttributeValue {
	ev := Event{At: at, Type: typ, Stage: string(stage), From: string(from), To: string(to), Detail: detail}
	av, _ := attributevalue.Marshal([]Event{ev}) // Event has only strings: cannot fail
	return av
}

// classifyAWS maps a DynamoDB error that is not a condition failure.
func classifyAWS(op string, err error) error {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return fmt.Errorf("%s: %w", op, errConditionCheck)
	}
	var thr *types.ProvisionedThroughputExceededException
	var lim *types.RequestLimitExceeded
	var tc *types.TransactionConflictException
	var ae interface{ ErrorCode() string }
	if errors.As(err, &ae) && ae.ErrorCode() == "ValidationException" {
		return failure.Wrap(failure.InternalBug, fmt.Errorf("%s: %w", op, err)) // our request is wrong: a bug, not a retry
	}
	switch {
	case errors.As(err, &thr), errors.As(err, &lim):
		return failure.Wrap(failure.RateLimited, fmt.Errorf("%s: %w", op, err))
	case errors.As(err, &tc):
		return failure.Wrap(failure.Conflict, fmt.Errorf("%s: %w", op, err))
	}
	if failure.Classify(err) == failure.NetworkTimeout {
		return fmt.Errorf("%s: %w", op, err)
	}
	return failure.Wrap(failure.Upstream5xx, fmt.Errorf("%s: %w", op, err))
}

// Get reads a job with a strongly consistent read.
func (st *Store) Get(ctx context.Context, id string) (*Job, error) {
	out, err := st.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &st.table, Key: key(jobPK(id), skJob), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, classifyAWS("get job", err)
	}
	if out.Item == nil {
		return nil, fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	return decodeJob(out.Item)
}

func decodeJob(item map[string]types.AttributeValue) (*Job, error) {
	var j Job
	if err := attributevalue.UnmarshalMap(item, &j); err != nil {
		return nil, failure.Wrap(failure.InternalBug, fmt.Errorf("decode job: %w", err))
	}
	return &j, nil
}

// update runs an UpdateItem on a job and returns the new image, or the old
// image with errConditionCheck when the condition failed.
func (st *Store) update(ctx context.Context, op, id, update, cond string, names map[string]string, values map[string]types.AttributeValue) (*Job, error) {
	cond = "attribute_exists(pk) AND (" + cond + ")"
	names, values = used(update+" "+cond, names, values)
	in := &dynamodb.UpdateItemInput{
		TableName:                           &st.table,
		Key:                                 key(jobPK(id), skJob),
		UpdateExpression:                    &update,
		ConditionExpression:                 aws.String(cond),
		ExpressionAttributeNames:            names,
		ExpressionAttributeValues:           values,
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	out, err := st.api.UpdateItem(ctx, in)
	if err != nil {
		var ccf *types.ConditionalCheckFailedException
		if errors.As(err, &ccf) {
			if ccf.Item == nil {
				return nil, fmt.Errorf("%s: job %s: %w", op, id, ErrNotFound)
			}
			old, derr := decodeJob(ccf.Item)
			if derr != nil {
				return nil, derr
			}
			return old, fmt.Errorf("%s: job %s: %w", op, id, errConditionCheck)
		}
		return nil, classifyAWS(op, err)
	}
	return decodeJob(out.Attributes)
}

// placeholder matches expression attribute names (#x) and values (:x).
var placeholder = regexp.MustCompile(`[#:][A-Za-z0-9_]+`)

// used keeps only the names and values the expressions reference: DynamoDB
// rejects a request that defines one it does not use, and the shared name
// set below is a superset.
func used(expr string, names map[string]string, values map[string]types.AttributeValue) (map[string]string, map[string]types.AttributeValue) {
	refs := map[string]bool{}
	for _, p := range placeholder.FindAllString(expr, -1) {
		refs[p] = true
	}
	var n map[string]string
	for k, v := range names {
		if refs[k] {
			if n == nil {
				n = map[string]string{}
			}
			n[k] = v
		}
	}
	var vals map[string]types.AttributeValue
	for k, v := range values {
		if refs[k] {
			if vals == nil {
				vals = map[string]types.AttributeValue{}
			}
			vals[k] = v
		}
	}
	return n, vals
}

// Names used by every job update. #stg is bound to the stage being written.
func names(stage domain.Stage) map[string]string {
	return map[string]string{"#state": "state", "#stage": "stage", "#stg": string(stage), "#st": "status", "#owner": "owner"}
}

func statesList(prefix string, states []State, values map[string]types.AttributeValue) string {
	out := ""
	for i, stt := range states {
		k := fmt.Sprintf(":%s%d", prefix, i)
		values[k] = s(string(stt))
		if i > 0 {
			out += ", "
		}
		out += k
	}
	return out
}

// Lease describes who claims a stage and until when.
type Lease struct {
	Owner string        // unique per delivery: SQS message id + receive count
	Now   time.Time     // one time source per write
	TTL   time.Duration // lease duration (the queue's visibility timeout)
}

func (l Lease) expires() string { return domain.FormatTime(l.Now.Add(l.TTL)) }

// ClaimRefused explains why a stage could not be claimed.
type ClaimRefused struct {
	Reason string // stage_done, stale_stage, dead_lettered, lease_held, budget_exhausted, succeeded
	Job    *Job   // the record as it was
}

func (e *ClaimRefused) Error() string { return "claim refused: " + e.Reason }

// Claim atomically takes the lease of a job's stage and counts the attempt:
// the spec's queued → running claim, as one conditional update. It is refused
// when the stage is done, dead-lettered, leased by a live owner, or out of
// budget; the returned *ClaimRefused says which.
func (st *Store) Claim(ctx context.Context, id string, stage domain.Stage, l Lease, maxAttempts int) (*Job, error) {
	now := domain.FormatTime(l.Now)
	v := map[string]types.AttributeValue{
		":s": s(string(stage)), ":running": s(string(Running)), ":srunning": s(string(StageRunning)),
		":spending": s(string(StagePending)), ":sretry": s(string(StageRetryWait)),
		":max": n(int64(maxAttempts)), ":now": s(now), ":exp": s(l.expires()), ":owner": s(l.Owner),
		":one": n(1), ":ev": event(now, "stage_claimed", stage, "", Running, "owner "+l.Owner), ":empty": &types.AttributeValueMemberL{},
		":sweep": s(domain.FormatTime(l.Now.Add(2 * l.TTL))),
	}
	cond := "#stage = :s AND #state IN (" + statesList("from", from(Running), v) + ")" +
		" AND stages.#stg.#st IN (:spending, :sretry, :srunning) AND stages.#stg.attempts < :max" +
		" AND (stages.#stg.#st <> :srunning OR stages.#stg.lease_expires_at <= :now)"
	upd := "SET #state = :running, stages.#stg.#st = :srunning, stages.#stg.attempts = stages.#stg.attempts + :one," +
		" stages.#stg.#owner = :owner, stages.#stg.lease_expires_at = :exp, updated_at = :now, seq = seq + :one," +
		" sweep_at = :sweep, history = list_append(if_not_exists(history, :empty), :ev)"
	j, err := st.update(ctx, "claim", id, upd, cond, names(stage), v)
	if err == nil || !errors.Is(err, errConditionCheck) {
		return j, err
	}
	return nil, &ClaimRefused{Reason: refusal(j, stage, now, maxAttempts), Job: j}
}

func refusal(j *Job, stage domain.Stage, now string, maxAttempts int) string {
	rec := j.StageRecord(stage)
	switch {
	case j.State == Succeeded:
		return "succeeded"
	case rec.Status == StageDone:
		return "stage_done"
	case j.Stage != stage:
		return "stale_stage"
	case rec.Status == StageFailed || j.State == Failed:
		return "dead_lettered"
	case rec.Status == StageRunning && rec.LeaseExpiresAt > now:
		return "lease_held"
	case rec.Attempts >= maxAttempts:
		return "budget_exhausted"
	}
	return "state_" + string(j.State)
}

// Renew extends the lease; only the current owner of a running stage can.
func (st *Store) Renew(ctx context.Context, id string, stage domain.Stage, l Lease) error {
	now := domain.FormatTime(l.Now)
	v := map[string]types.AttributeValue{":owner": s(l.Owner), ":srunning": s(string(StageRunning)), ":running": s(string(Running)), ":exp": s(l.expires()), ":now": s(now), ":s": s(string(stage))}
	_, err := st.update(ctx, "renew lease", id, "SET stages.#stg.lease_expires_at = :exp, updated_at = :now",
		"#stage = :s AND #state = :running AND stages.#stg.#st = :srunning AND stages.#stg.#owner = :owner", names(stage), v)
	if errors.Is(err, errConditionCheck) {
		return fmt.Errorf("renew: %w", ErrLeaseLost)
	}
	return err
}

// Result is what a stage hands on when it completes.
type Result struct {
	Artifacts    Artifacts
	Recipients   []string     // set by fetch
	FindingCount *int         // set by llm
	Review       *ReviewStats // set by llm
	Detail       string
}

// Complete marks the owner's stage done and moves the job to the next stage
// (queued) or, after the last stage, to succeeded. sweepAfter is when the
// sweeper should re-enqueue the next stage if its message never arrives.
func (st *Store) Complete(ctx context.Context, id string, stage domain.Stage, l Lease, r Result, sweepAfter time.Duration) (*Job, error) {
	now := domain.FormatTime(l.Now)
	next, hasNext := stage.Next()
	to := Queued
	if !hasNext {
		to, next = Succeeded, stage
	}
	v := map[string]types.AttributeValue{
		":owner": s(l.Owner), ":srunning": s(string(StageRunning)), ":running": s(string(Running)), ":s": s(string(stage)),
		":sdone": s(string(StageDone)), ":to": s(string(to)), ":next": s(string(next)), ":now": s(now), ":one": n(1),
		":ev": event(now, "stage_completed", stage, Running, to, r.Detail), ":empty": &types.AttributeValueMemberL{},
	}
	upd := "SET stages.#stg.#st = :sdone, stages.#stg.completed_at = :now, #state = :to, #stage = :next, updated_at = :now," +
		" seq = seq + :one, history = list_append(if_not_exists(history, :empty), :ev)"
	if r.Artifacts.Raw != "" {
		upd += ", artifacts.#raw = :raw"
		v[":raw"] = s(r.Artifacts.Raw)
	}
	if r.Artifacts.Redacted != "" {
		upd += ", artifacts.#redacted = :redacted"
		v[":redacted"] = s(r.Artifacts.Redacted)
	}
	if r.Artifacts.Result != "" {
		upd += ", artifacts.#result = :result"
		v[":result"] = s(r.Artifacts.Result)
	}
	if r.Recipients != nil {
		upd += ", recipients = :rcpts"
		v[":rcpts"], _ = attributevalue.Marshal(r.Recipients)
	}
	if r.FindingCount != nil {
		upd += ", finding_count = :fc"
		v[":fc"] = n(int64(*r.FindingCount))
	}
	if r.Review != nil {
		upd += ", #review = :review"
		v[":review"], _ = attributevalue.Marshal(r.Review)
	}
	if hasNext {
		upd += ", sweep_at = :sweep"
		v[":sweep"] = s(domain.FormatTime(l.Now.Add(sweepAfter)))
		upd += " REMOVE stages.#stg.#owner, stages.#stg.lease_expires_at"
	} else {
		upd += " REMOVE stages.#stg.#owner, stages.#stg.lease_expires_at, sweep_at, sweep_shard"
	}
	nm := names(stage)
	for attr, set := range map[string]bool{"raw": r.Artifacts.Raw != "", "redacted": r.Artifacts.Redacted != "", "result": r.Artifacts.Result != "", "review": r.Review != nil} {
		if set {
			nm["#"+attr] = attr // RAW and RESULT are DynamoDB reserved words
		}
	}
	j, err := st.update(ctx, "complete stage", id, upd,
		"#stage = :s AND #state = :running AND stages.#stg.#st = :srunning AND stages.#stg.#owner = :owner", nm, v)
	if errors.Is(err, errConditionCheck) {
		return j, fmt.Errorf("complete: %w", ErrLeaseLost)
	}
	return j, err
}

// FailureInfo is what a failed attempt records in the job.
type FailureInfo struct {
	Class   failure.Class
	Message string // sanitized
}

// Retry records a retryable failure by the owner and releases the lease; the
// job waits in retry_wait until the delayed message comes back.
func (st *Store) Retry(ctx context.Context, id string, stage domain.Stage, l Lease, f FailureInfo, delay time.Duration) (*Job, error) {
	now := domain.FormatTime(l.Now)
	v := map[string]types.AttributeValue{
		":owner": s(l.Owner), ":srunning": s(string(StageRunning)), ":running": s(string(Running)), ":s": s(string(stage)),
		":sretry": s(string(StageRetryWait)), ":retry": s(string(RetryWait)), ":now": s(now), ":one": n(1),
		":class": s(string(f.Class)), ":msg": s(f.Message), ":sweep": s(domain.FormatTime(l.Now.Add(delay + 2*l.TTL))),
		":ev":    event(now, "stage_retry_scheduled", stage, Running, RetryWait, fmt.Sprintf("%s; retry in %s", f.Class, delay.Round(time.Millisecond))),
		":empty": &types.AttributeValueMemberL{},
	}
	upd := "SET stages.#stg.#st = :sretry, #state = :retry, stages.#stg.first_failure_at = if_not_exists(stages.#stg.first_failure_at, :now)," +
		" stages.#stg.last_failure_at = :now, stages.#stg.last_error_class = :class, stages.#stg.last_error = :msg," +
		" updated_at = :now, seq = seq + :one, sweep_at = :sweep, history = list_append(if_not_exists(history, :empty), :ev)" +
		" REMOVE stages.#stg.#owner, stages.#stg.lease_expires_at"
	j, err := st.update(ctx, "schedule retry", id, upd,
		"#stage = :s AND #state = :running AND stages.#stg.#st = :srunning AND stages.#stg.#owner = :owner", names(stage), v)
	if errors.Is(err, errConditionCheck) {
		return j, fmt.Errorf("retry: %w", ErrLeaseLost)
	}
	return j, err
}

// DeadLetter records that the stage is being dead-lettered and keeps the DLQ
// body until MarkDeadLetterSent confirms the send, so a crash between the two
// resends rather than loses it. With an owner the write is owner-guarded;
// without one (budget exhausted by crashed workers) it requires that no live
// lease exists.
func (st *Store) DeadLetter(ctx context.Context, id string, stage domain.Stage, l Lease, f FailureInfo, dlID, body string) (*Job, error) {
	now := domain.FormatTime(l.Now)
	v := map[string]types.AttributeValue{
		":s": s(string(stage)), ":sfailed": s(string(StageFailed)), ":failed": s(string(Failed)), ":now": s(now), ":one": n(1),
		":class": s(string(f.Class)), ":msg": s(f.Message), ":dlid": s(dlID), ":body": s(body), ":true": &types.AttributeValueMemberBOOL{Value: true},
		":srunning": s(string(StageRunning)), ":ev": event(now, "dead_lettered", stage, "", Failed, fmt.Sprintf("%s (%s)", f.Class, dlID)),
		":empty": &types.AttributeValueMemberL{},
	}
	cond := "#stage = :s AND #state IN (" + statesList("from", from(Failed), v) + ")"
	if l.Owner != "" {
		v[":owner"] = s(l.Owner)
		cond += " AND stages.#stg.#st = :srunning AND stages.#stg.#owner = :owner"
	} else {
		cond += " AND (stages.#stg.#st <> :srunning OR stages.#stg.lease_expires_at <= :now)"
	}
	upd := "SET stages.#stg.#st = :sfailed, #state = :failed, stages.#stg.first_failure_at = if_not_exists(stages.#stg.first_failure_at, :now)," +
		" stages.#stg.last_failure_at = :now, stages.#stg.last_error_class = :class, stages.#stg.last_error = :msg," +
		" stages.#stg.dead_letter_id = :dlid, stages.#stg.dead_letter = :body, stages.#stg.dlq_pending = :true," +
		" updated_at = :now, seq = seq + :one, history = list_append(if_not_exists(history, :empty), :ev)" +
		" REMOVE stages.#stg.#owner, stages.#stg.lease_expires_at, sweep_at, sweep_shard"
	j, err := st.update(ctx, "dead-letter stage", id, upd, cond, names(stage), v)
	if errors.Is(err, errConditionCheck) {
		return j, fmt.Errorf("dead-letter: %w", ErrLeaseLost)
	}
	return j, err
}

// MarkDeadLetterSent clears the pending DLQ body once the DLQ has it.
func (st *Store) MarkDeadLetterSent(ctx context.Context, id string, stage domain.Stage, dlID string, now time.Time) error {
	v := map[string]types.AttributeValue{":dlid": s(dlID), ":false": &types.AttributeValueMemberBOOL{Value: false}, ":now": s(domain.FormatTime(now))}
	_, err := st.update(ctx, "mark dead letter sent", id, "SET stages.#stg.dlq_pending = :false, updated_at = :now REMOVE stages.#stg.dead_letter",
		"stages.#stg.dead_letter_id = :dlid", map[string]string{"#stg": string(stage)}, v)
	if errors.Is(err, errConditionCheck) {
		return nil // a later dead-lettering or replay superseded it: nothing left to clear
	}
	return err
}

// Replay resumes a dead-lettered stage with a fresh attempt budget. It is
// keyed by the dead-letter id so that a DLQ message redriven twice replays
// once; the class it was dead-lettered with is kept to detect a repeat
// failure (escalation).
func (st *Store) Replay(ctx context.Context, id string, stage domain.Stage, dlID string, dlClass failure.Class, now time.Time, sweepAfter time.Duration) (*Job, error) {
	at := domain.FormatTime(now)
	v := map[string]types.AttributeValue{
		":s": s(string(stage)), ":failed": s(string(Failed)), ":sfailed": s(string(StageFailed)), ":dlid": s(dlID),
		":queued": s(string(Queued)), ":spending": s(string(StagePending)), ":zero": n(0), ":one": n(1), ":now": s(at),
		":class": s(string(dlClass)), ":shard": s(SweepShard), ":sweep": s(domain.FormatTime(now.Add(sweepAfter))),
		":ev": event(at, "replayed", stage, Failed, Queued, "from dead letter "+dlID), ":empty": &types.AttributeValueMemberL{},
	}
	upd := "SET #state = :queued, stages.#stg.#st = :spending, stages.#stg.attempts = :zero, stages.#stg.replays = stages.#stg.replays + :one," +
		" stages.#stg.replayed_from = :dlid, stages.#stg.replayed_class = :class, updated_at = :now, seq = seq + :one," +
		" sweep_shard = :shard, sweep_at = :sweep, history = list_append(if_not_exists(history, :empty), :ev)" +
		" REMOVE stages.#stg.first_failure_at, stages.#stg.last_failure_at"
	j, err := st.update(ctx, "replay", id, upd,
		"#stage = :s AND #state = :failed AND stages.#stg.#st = :sfailed AND stages.#stg.dead_letter_id = :dlid", names(stage), v)
	if errors.Is(err, errConditionCheck) {
		return nil, fmt.Errorf("replay: %w", ErrNotReplayable)
	}
	return j, err
}

// RecordCallback records that the Swarm callback c of job id was made, once:
// the write is conditional on it not being recorded yet, and a second
// recording (or a job without a Swarm run) gets ErrConflict.
func (st *Store) RecordCallback(ctx context.Context, id string, c Callback, now time.Time) error {
	switch c {
	case CallbackUpdate, CallbackPass, CallbackFail:
	default:
		return failure.Errorf(failure.InternalBug, "unknown Swarm callback %q", c)
	}
	at := domain.FormatTime(now)
	v := map[string]types.AttributeValue{":now": s(at)}
	nm := map[string]string{"#cb": string(c) + "_at"}
	_, err := st.update(ctx, "record swarm callback", id, "SET swarm.#cb = :now, updated_at = :now",
		"attribute_exists(swarm) AND attribute_not_exists(swarm.#cb)", nm, v)
	if errors.Is(err, errConditionCheck) {
		return fmt.Errorf("swarm %s callback of job %s already recorded: %w", c, id, ErrConflict)
	}
	return err
}
