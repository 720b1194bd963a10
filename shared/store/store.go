// Package store is the jobs table: it maps shared/job's types onto DynamoDB
// items (jobs with per-stage leases and history, idempotency records with saved
// responses, changelist version gates) and makes every state change one
// conditional write (never read-then-write) whose expected states come from
// job.Transitions, owner-guarded for stage work. Every change bumps seq, sets
// updated_at, appends an event and records its write token (last_write), so a
// retried write whose first attempt was applied but unanswered recognises itself
// and succeeds.
package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/awserr"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
)

// API is the part of the DynamoDB client that reads and writes the jobs
// table's items: the store, the outbox and the outcome records use it.
type API interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
	Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
}

// LogAPI is what a log kept in the jobs table uses (the rerun ledger, provider
// evidence).
type LogAPI interface {
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
}

// ScanAPI is what a pass over the whole table uses (the retention check, the
// outcome report).
type ScanAPI interface {
	Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

// DefaultRetention is how long job, idempotency and changelist items live
// (the expires_at TTL attribute) when RETENTION_DAYS is unset.
const DefaultRetention = 30 * 24 * time.Hour

// DefaultUniquenessRetention is how long idempotency records and
// changelist version gates live when UNIQUENESS_RETENTION_DAYS is unset.
const DefaultUniquenessRetention = 365 * 24 * time.Hour

// Store reads and writes the jobs table.
type Store struct {
	api       API
	table     string
	retention time.Duration
	// uniqueness is the TTL of the idempotency record and changelist gate; 0
	// keeps them forever.
	uniqueness time.Duration
}

// New returns a Store over the named table, keeping job items
// DefaultRetention and uniqueness records DefaultUniquenessRetention.
func New(api API, table string) *Store {
	return &Store{api: api, table: table, retention: DefaultRetention, uniqueness: DefaultUniquenessRetention}
}

// WithUniquenessRetention sets how long idempotency records and version gates
// live (UNIQUENESS_RETENTION_DAYS; 0: forever). They hold no code or findings,
// so they outlive their job: a webhook re-sent after the job expired still gets
// the original job, and a reviewed version is never reviewed (nor e-mailed)
// again.
func (st *Store) WithUniquenessRetention(d time.Duration) *Store {
	if d >= 0 {
		st.uniqueness = d
	}
	return st
}

// UniquenessExpiresAt is the TTL (epoch seconds) of a uniqueness record created
// at now; 0: none.
func (st *Store) UniquenessExpiresAt(now time.Time) int64 {
	if st.uniqueness == 0 {
		return 0
	}
	return now.Add(st.uniqueness).Unix()
}

// WithRetention sets how long new items are kept (RETENTION_DAYS).
func (st *Store) WithRetention(d time.Duration) *Store {
	if d > 0 {
		st.retention = d
	}
	return st
}

// ExpiresAt is the TTL value (epoch seconds) of an item created at now.
func (st *Store) ExpiresAt(now time.Time) int64 { return now.Add(st.retention).Unix() }

// Errors of the idempotency record; the job's own write errors live in
// shared/job, so callers need not import the store.
var (
	ErrStaleVersion   = errors.New("review_version is not higher than the changelist's latest")
	ErrDuplicateKey   = errors.New("idempotency key already used")
	errConditionCheck = errors.New("condition check failed")
)

func key(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": s(pk), "sk": s(sk)}
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

func event(at string, typ job.EventType, stage domain.Stage, from, to job.State, detail string) types.AttributeValue {
	ev := job.Event{At: at, Type: typ, Stage: string(stage), From: string(from), To: string(to), Detail: detail}
	av, _ := attributevalue.Marshal([]job.Event{ev}) // only strings: cannot fail
	return av
}

// classifyAWS leaves a failed condition to the caller and classifies anything
// else.
func classifyAWS(op string, err error) error {
	if awserr.ConditionFailed(err) {
		return fmt.Errorf("%s: %w", op, errConditionCheck)
	}
	return awserr.Wrap(op, err)
}

// Get reads a job with a strongly consistent read.
func (st *Store) Get(ctx context.Context, id string) (*job.Job, error) {
	out, err := st.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &st.table, Key: key(jobPK(id), skJob), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, classifyAWS("get job", err)
	}
	if out.Item == nil {
		return nil, fmt.Errorf("job %s: %w", id, job.ErrNotFound)
	}
	it, err := decodeItem(out.Item)
	if err != nil {
		return nil, err
	}
	return it.job(), nil
}

// Put writes j unconditionally: a unit test's starting point.
func (st *Store) Put(ctx context.Context, j *job.Job) error {
	it := toItem(j)
	if it.History == nil {
		it.History = []job.Event{} // a list, as every write appends to it
	}
	item, err := attributevalue.MarshalMap(it)
	if err != nil {
		return fmt.Errorf("marshal job: %w", err)
	}
	item["pk"], item["sk"] = s(jobPK(j.ID)), s(skJob)
	if _, err := st.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &st.table, Item: item}); err != nil {
		return classifyAWS("put job", err)
	}
	return nil
}

func decodeItem(item map[string]types.AttributeValue) (*jobItem, error) {
	var it jobItem
	if err := attributevalue.UnmarshalMap(item, &it); err != nil {
		return nil, failure.Wrap(failure.InternalBug, fmt.Errorf("decode job: %w", err))
	}
	return &it, nil
}

// write is one conditional update of a job item.
type write struct {
	op     string // for error messages
	update string
	cond   string
	names  map[string]string
	values map[string]types.AttributeValue
	// token identifies this write across its retries (last_write).
	token string
	// finish: the last stage completes at finishAt, writing the rows its attempt
	// deferred (Defer).
	finish   bool
	finishAt domain.Stage
	// applied recognises in the old item that this write was applied already
	// (its answer lost); nil: last_write equals token.
	applied func(old *jobItem) bool
	// refused, when set, is the error of a condition that did not hold.
	refused error
}

// update runs w and returns the new image; on a failed condition the old image
// with errConditionCheck, unless it shows w applied already.
func (st *Store) update(ctx context.Context, id string, w write) (*job.Job, error) {
	cond := "attribute_exists(pk) AND (" + w.cond + ")"
	upd := w.update
	values := w.values
	if w.token != "" {
		upd = AddSet(upd, "last_write = :wtoken")
		values[":wtoken"] = s(w.token)
	}
	names, values := used(upd+" "+cond, w.names, values)
	in := &dynamodb.UpdateItemInput{
		TableName:                           &st.table,
		Key:                                 key(jobPK(id), skJob),
		UpdateExpression:                    &upd,
		ConditionExpression:                 aws.String(cond),
		ExpressionAttributeNames:            names,
		ExpressionAttributeValues:           values,
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	if puts := deferredPuts(ctx); len(puts) > 0 && w.finish {
		err := st.transact(ctx, in, puts)
		if err == nil {
			// A transaction returns no image; the runtime reads only this of the
			// job after its last stage.
			return &job.Job{ID: id, Stage: w.finishAt, State: job.Target(job.OpFinish)}, nil
		}
		return st.failed(ctx, id, w, err)
	}
	out, err := st.api.UpdateItem(ctx, in)
	if err == nil {
		it, derr := decodeItem(out.Attributes)
		if derr != nil {
			return nil, derr
		}
		return it.job(), nil
	}
	return st.failed(ctx, id, w, err)
}

// failed settles a failed update by the old image: w applied already (success)
// or errConditionCheck.
func (st *Store) failed(ctx context.Context, id string, w write, err error) (*job.Job, error) {
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		return nil, classifyAWS(w.op, err)
	}
	if ccf.Item == nil {
		return nil, fmt.Errorf("%s: job %s: %w", w.op, id, job.ErrNotFound)
	}
	old, derr := decodeItem(ccf.Item)
	if derr != nil {
		return nil, derr
	}
	applied := w.applied
	if applied == nil {
		applied = func(o *jobItem) bool { return w.token != "" && o.LastWrite == w.token }
	}
	if applied(old) {
		return old.job(), nil
	}
	if w.refused != nil {
		return old.job(), w.refused
	}
	return old.job(), fmt.Errorf("%s: job %s: %w", w.op, id, errConditionCheck)
}

// AddSet adds a SET action to an update expression that has one (before
// its REMOVE clause, if any).
func AddSet(update, action string) string {
	if i := strings.Index(update, " REMOVE "); i >= 0 {
		return update[:i] + ", " + action + update[i:]
	}
	return update + ", " + action
}

// placeholder matches expression attribute names (#x) and values (:x).
var placeholder = regexp.MustCompile(`[#:][A-Za-z0-9_]+`)

// used keeps only the names and values the expressions reference: DynamoDB
// rejects unused ones, and names() is a superset.
func used(expr string, names map[string]string, values map[string]types.AttributeValue) (map[string]string, map[string]types.AttributeValue) {
	refs := map[string]bool{}
	for _, p := range placeholder.FindAllString(expr, -1) {
		refs[p] = true
	}
	return pick(refs, names), pick(refs, values)
}

func pick[V any](refs map[string]bool, m map[string]V) map[string]V {
	out := maps.Clone(m)
	maps.DeleteFunc(out, func(k string, _ V) bool { return !refs[k] })
	if len(out) == 0 {
		return nil // DynamoDB refuses an empty map
	}
	return out
}

// Names used by every job update. #stg is bound to the stage being written.
func names(stage domain.Stage) map[string]string {
	return map[string]string{"#state": "state", "#stage": "stage", "#stg": string(stage), "#st": "status", "#owner": "owner"}
}

// expect renders "#state IN (...)" for the states op applies to, from
// job.Transitions.
func expect(op job.Op, values map[string]types.AttributeValue) string {
	return In("#state", ":from_"+string(op)+"_", job.Expect(op), values)
}

// In renders "lhs IN (:prefix0, ...)", binding each x in values.
func In[T ~string](lhs, prefix string, xs []T, values map[string]types.AttributeValue) string {
	phs := make([]string, len(xs))
	for i, x := range xs {
		phs[i] = prefix + strconv.Itoa(i)
		values[phs[i]] = s(string(x))
	}
	return lhs + " IN (" + strings.Join(phs, ", ") + ")"
}

// token is an owner's write token: owners are unique per delivery, so owner+op
// names one write across retries.
func token(owner string, op job.Op) string { return owner + "/" + string(op) }

// ownerGuard: the job is at the stage, in a state op applies to, and the stage
// runs under owner.
func ownerGuard(op job.Op, l job.Lease, v map[string]types.AttributeValue) string {
	v[":owner"], v[":srunning"] = s(l.Owner), s(string(job.StageRunning))
	return "#stage = :s AND " + expect(op, v) + " AND stages.#stg.#st = :srunning AND stages.#stg.#owner = :owner"
}

// Claim takes a stage's lease and counts the attempt in one conditional update
// (rule LS-1). It is refused — *job.ClaimRefused says why — when the stage is
// done, dead-lettered, leased by a live owner (within the skew budget) or out of
// budget; a retried claim that finds its own lease succeeds.
func (st *Store) Claim(ctx context.Context, id string, stage domain.Stage, l job.Lease, maxAttempts int) (*job.Job, error) {
	now := job.FormatTime(l.Now)
	v := map[string]types.AttributeValue{
		":s": s(string(stage)), ":running": s(string(job.Target(job.OpClaim))), ":srunning": s(string(job.StageRunning)),
		":max": n(int64(maxAttempts)), ":now": s(now), ":expired": s(l.ExpiredBefore()), ":exp": s(l.Expires()), ":owner": s(l.Owner),
		":one": n(1), ":ev": event(now, job.EventClaimed, stage, "", job.Running, "owner "+l.Owner), ":empty": &types.AttributeValueMemberL{},
		":sweep": s(job.FormatTime(l.Now.Add(2 * l.TTL))),
	}
	cond := "#stage = :s AND " + expect(job.OpClaim, v) + " AND " + In("stages.#stg.#st", ":claimable", job.Claimable, v) +
		" AND stages.#stg.attempts < :max" +
		" AND (stages.#stg.#st <> :srunning OR stages.#stg.lease_expires_at <= :expired)"
	upd := "SET #state = :running, stages.#stg.#st = :srunning, stages.#stg.attempts = stages.#stg.attempts + :one," +
		" stages.#stg.#owner = :owner, stages.#stg.lease_expires_at = :exp, updated_at = :now, seq = seq + :one," +
		" sweep_at = :sweep, history = list_append(if_not_exists(history, :empty), :ev)"
	tok := token(l.Owner, job.OpClaim)
	j, err := st.update(ctx, id, write{op: "claim", update: upd, cond: cond, names: names(stage), values: v, token: tok,
		applied: func(o *jobItem) bool {
			r := o.Stages[stage]
			return o.LastWrite == tok || (o.Stage == stage && o.State == job.Running && r != nil && r.Status == job.StageRunning && r.Owner == l.Owner)
		}})
	if err == nil || !errors.Is(err, errConditionCheck) {
		return j, err
	}
	return nil, &job.ClaimRefused{Reason: job.Refuse(j, stage, l, maxAttempts), Job: j}
}

// Renew extends the lease; only the running stage's owner can, and a retry
// passes the same condition.
func (st *Store) Renew(ctx context.Context, id string, stage domain.Stage, l job.Lease) error {
	v := map[string]types.AttributeValue{":exp": s(l.Expires()), ":now": s(job.FormatTime(l.Now)), ":s": s(string(stage))}
	_, err := st.update(ctx, id, write{op: "renew lease", update: "SET stages.#stg.lease_expires_at = :exp, updated_at = :now",
		cond: ownerGuard(job.OpRenew, l, v), names: names(stage), values: v, token: token(l.Owner, job.OpRenew),
		refused: fmt.Errorf("renew: %w", job.ErrLeaseLost)})
	return err
}

// Complete marks the owner's stage done and queues the next (or, after the last,
// succeeds the job); sweepAfter is when the sweeper re-enqueues a next stage
// whose message never came. completed_by lets a retry of an applied completion
// succeed, even after later writes.
func (st *Store) Complete(ctx context.Context, id string, stage domain.Stage, l job.Lease, r job.Result, sweepAfter time.Duration) (*job.Job, error) {
	now := job.FormatTime(l.Now)
	next, hasNext := stage.Next()
	op := job.OpComplete
	if !hasNext {
		op, next = job.OpFinish, stage
	}
	to := job.Target(op)
	v := map[string]types.AttributeValue{
		":s": s(string(stage)), ":sdone": s(string(job.StageDone)), ":to": s(string(to)), ":next": s(string(next)), ":now": s(now), ":one": n(1),
		":by": s(l.Owner), ":ev": event(now, job.EventCompleted, stage, job.Running, to, r.Detail), ":empty": &types.AttributeValueMemberL{},
	}
	upd := "SET stages.#stg.#st = :sdone, stages.#stg.completed_at = :now, stages.#stg.completed_by = :by, #state = :to, #stage = :next, updated_at = :now," +
		" seq = seq + :one, history = list_append(if_not_exists(history, :empty), :ev)"
	nm := names(stage)
	for _, a := range [...][2]string{{"raw", r.Artifacts.Raw}, {"redacted", r.Artifacts.Redacted}, {"redacted_proof", r.Artifacts.RedactedProof}, {"result", r.Artifacts.Result}} {
		if a[1] != "" { // RAW and RESULT are DynamoDB reserved words: every artifact goes by a name
			upd += ", artifacts.#" + a[0] + " = :" + a[0]
			v[":"+a[0]], nm["#"+a[0]] = s(a[1]), a[0]
		}
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
		nm["#review"] = "review"
	}
	if hasNext {
		upd += ", sweep_at = :sweep"
		v[":sweep"] = s(job.FormatTime(l.Now.Add(sweepAfter)))
		upd += " REMOVE stages.#stg.#owner, stages.#stg.lease_expires_at"
	} else {
		upd += " REMOVE stages.#stg.#owner, stages.#stg.lease_expires_at, sweep_at, sweep_shard"
	}
	j, err := st.update(ctx, id, write{op: "complete stage", update: upd, cond: ownerGuard(op, l, v), names: nm, values: v,
		token: token(l.Owner, op), finish: !hasNext, finishAt: stage, refused: fmt.Errorf("complete: %w", job.ErrLeaseLost), applied: func(o *jobItem) bool {
			r := o.Stages[stage]
			return r != nil && r.Status == job.StageDone && r.CompletedBy == l.Owner
		}})
	return j, err
}

// Retry records the owner's retryable failure and releases the lease; the job
// waits in retry_wait for the delayed message.
func (st *Store) Retry(ctx context.Context, id string, stage domain.Stage, l job.Lease, f job.FailureInfo, delay time.Duration) (*job.Job, error) {
	if err := st.putDeferred(ctx); err != nil {
		return nil, err
	}
	now := job.FormatTime(l.Now)
	v := map[string]types.AttributeValue{
		":s": s(string(stage)), ":sretry": s(string(job.StageRetryWait)), ":retry": s(string(job.Target(job.OpRetry))), ":now": s(now), ":one": n(1),
		":class": s(string(f.Class)), ":msg": s(f.Message), ":sweep": s(job.FormatTime(l.Now.Add(delay + 2*l.TTL))),
		":ev":    event(now, job.EventRetryScheduled, stage, job.Running, job.RetryWait, fmt.Sprintf("%s; retry in %s", f.Class, delay.Round(time.Millisecond))),
		":empty": &types.AttributeValueMemberL{},
	}
	upd := "SET stages.#stg.#st = :sretry, #state = :retry, stages.#stg.first_failure_at = if_not_exists(stages.#stg.first_failure_at, :now)," +
		" stages.#stg.last_failure_at = :now, stages.#stg.last_error_class = :class, stages.#stg.last_error = :msg," +
		" updated_at = :now, seq = seq + :one, sweep_at = :sweep, history = list_append(if_not_exists(history, :empty), :ev)" +
		" REMOVE stages.#stg.#owner, stages.#stg.lease_expires_at"
	j, err := st.update(ctx, id, write{op: "schedule retry", update: upd, cond: ownerGuard(job.OpRetry, l, v), names: names(stage), values: v,
		token: token(l.Owner, job.OpRetry), refused: fmt.Errorf("retry: %w", job.ErrLeaseLost)})
	return j, err
}

// DeadLetter fails the stage and keeps the DLQ body until MarkDeadLetterSent, so
// a crash between them resends rather than loses it. Owner-guarded with an
// owner; without one (budget spent by crashed workers) it needs no live lease.
// dlID is its write token.
func (st *Store) DeadLetter(ctx context.Context, id string, stage domain.Stage, l job.Lease, f job.FailureInfo, dlID, body string) (*job.Job, error) {
	if err := st.putDeferred(ctx); err != nil {
		return nil, err
	}
	now := job.FormatTime(l.Now)
	v := map[string]types.AttributeValue{
		":s": s(string(stage)), ":sfailed": s(string(job.StageFailed)), ":failed": s(string(job.Target(job.OpDeadLetter))), ":now": s(now), ":one": n(1),
		":class": s(string(f.Class)), ":msg": s(f.Message), ":dlid": s(dlID), ":body": s(body), ":true": &types.AttributeValueMemberBOOL{Value: true},
		":srunning": s(string(job.StageRunning)), ":ev": event(now, job.EventDeadLettered, stage, "", job.Failed, fmt.Sprintf("%s (%s)", f.Class, dlID)),
		":empty": &types.AttributeValueMemberL{},
	}
	var cond string
	if l.Owner != "" {
		cond = ownerGuard(job.OpDeadLetter, l, v)
	} else {
		v[":expired"] = s(l.ExpiredBefore())
		cond = "#stage = :s AND " + expect(job.OpDeadLetter, v) + " AND (stages.#stg.#st <> :srunning OR stages.#stg.lease_expires_at <= :expired)"
	}
	upd := "SET stages.#stg.#st = :sfailed, #state = :failed, stages.#stg.first_failure_at = if_not_exists(stages.#stg.first_failure_at, :now)," +
		" stages.#stg.last_failure_at = :now, stages.#stg.last_error_class = :class, stages.#stg.last_error = :msg," +
		" stages.#stg.dead_letter_id = :dlid, stages.#stg.dead_letter = :body, stages.#stg.dlq_pending = :true," +
		" updated_at = :now, seq = seq + :one, history = list_append(if_not_exists(history, :empty), :ev)" +
		" REMOVE stages.#stg.#owner, stages.#stg.lease_expires_at, sweep_at, sweep_shard"
	j, err := st.update(ctx, id, write{op: "dead-letter stage", update: upd, cond: cond, names: names(stage), values: v,
		token: "dead_letter/" + dlID, refused: fmt.Errorf("dead-letter: %w", job.ErrLeaseLost), applied: func(o *jobItem) bool {
			r := o.Stages[stage]
			return r != nil && r.DeadLetterID == dlID && o.State == job.Failed
		}})
	return j, err
}

// MarkDeadLetterSent clears the pending DLQ body once the DLQ has it.
func (st *Store) MarkDeadLetterSent(ctx context.Context, id string, stage domain.Stage, dlID string, now time.Time) error {
	v := map[string]types.AttributeValue{":dlid": s(dlID), ":false": &types.AttributeValueMemberBOOL{Value: false}, ":now": s(job.FormatTime(now))}
	_, err := st.update(ctx, id, write{op: "mark dead letter sent", update: "SET stages.#stg.dlq_pending = :false, updated_at = :now REMOVE stages.#stg.dead_letter",
		cond: "stages.#stg.dead_letter_id = :dlid", names: map[string]string{"#stg": string(stage)}, values: v, token: "dlq_sent/" + dlID})
	if errors.Is(err, errConditionCheck) {
		return nil // a later dead-lettering or replay superseded it: nothing left to clear
	}
	return err
}

// Replay resumes a dead-lettered stage with a fresh budget, once per dead-letter
// id (a DLQ message redriven twice replays once), keeping its class to detect a
// repeat failure.
func (st *Store) Replay(ctx context.Context, id string, stage domain.Stage, dlID string, dlClass failure.Class, now time.Time, sweepAfter time.Duration) (*job.Job, error) {
	at := job.FormatTime(now)
	v := map[string]types.AttributeValue{
		":s": s(string(stage)), ":sfailed": s(string(job.StageFailed)), ":dlid": s(dlID),
		":queued": s(string(job.Target(job.OpReplay))), ":spending": s(string(job.StagePending)), ":zero": n(0), ":one": n(1), ":now": s(at),
		":class": s(string(dlClass)), ":shard": s(job.SweepShard), ":sweep": s(job.FormatTime(now.Add(sweepAfter))),
		":ev": event(at, job.EventReplayed, stage, job.Failed, job.Queued, "from dead letter "+dlID), ":empty": &types.AttributeValueMemberL{},
	}
	upd := "SET #state = :queued, stages.#stg.#st = :spending, stages.#stg.attempts = :zero, stages.#stg.replays = stages.#stg.replays + :one," +
		" stages.#stg.replayed_from = :dlid, stages.#stg.replayed_class = :class, updated_at = :now, seq = seq + :one," +
		" sweep_shard = :shard, sweep_at = :sweep, history = list_append(if_not_exists(history, :empty), :ev)" +
		" REMOVE stages.#stg.first_failure_at, stages.#stg.last_failure_at"
	j, err := st.update(ctx, id, write{op: "replay", update: upd,
		cond:  "#stage = :s AND " + expect(job.OpReplay, v) + " AND stages.#stg.#st = :sfailed AND stages.#stg.dead_letter_id = :dlid",
		names: names(stage), values: v, token: "replay/" + dlID})
	if errors.Is(err, errConditionCheck) {
		return nil, fmt.Errorf("replay: %w", job.ErrNotReplayable)
	}
	return j, err
}

// Restart sends a failed job back to fetch with every stage reset (never a
// succeeded one); requestID is its write token.
func (st *Store) Restart(ctx context.Context, id, actor, requestID string, now time.Time, sweepAfter time.Duration) (*job.Job, error) {
	at := job.FormatTime(now)
	v := map[string]types.AttributeValue{":queued": s(string(job.Target(job.OpRestart))), ":fetch": s(string(domain.StageFetch)),
		":now": s(at), ":one": n(1), ":shard": s(job.SweepShard), ":sweep": s(job.FormatTime(now.Add(sweepAfter))),
		":ev": event(at, job.EventRestarted, domain.StageFetch, job.Failed, job.Queued, "by "+actor), ":empty": &types.AttributeValueMemberL{}}
	v[":stages"], _ = attributevalue.Marshal(job.PendingStages())
	j, err := st.update(ctx, id, write{op: "restart",
		update: "SET #state = :queued, #stage = :fetch, stages = :stages, updated_at = :now, seq = seq + :one, sweep_shard = :shard, sweep_at = :sweep, history = list_append(if_not_exists(history, :empty), :ev)",
		cond:   expect(job.OpRestart, v), names: map[string]string{"#state": "state", "#stage": "stage"}, values: v, token: "restart/" + requestID})
	if errors.Is(err, errConditionCheck) {
		return j, fmt.Errorf("restart: job is %s, only failed jobs restart: %w", j.State, job.ErrNotReplayable)
	}
	return j, err
}

// Reschedule moves a job's sweep deadline if nobody changed it since it was read
// (seq).
func (st *Store) Reschedule(ctx context.Context, j *job.Job, now, next time.Time, note string) error {
	at := job.FormatTime(now)
	v := map[string]types.AttributeValue{":seq": n(j.Seq), ":sweep": s(job.FormatTime(next)), ":now": s(at), ":one": n(1),
		":ev": event(at, job.EventSwept, j.Stage, j.State, j.State, note), ":empty": &types.AttributeValueMemberL{}}
	_, err := st.update(ctx, j.ID, write{op: "reschedule", update: "SET sweep_at = :sweep, updated_at = :now, seq = seq + :one, history = list_append(if_not_exists(history, :empty), :ev)",
		cond: "seq = :seq", values: v, token: fmt.Sprintf("sweep/%d/%s", j.Seq, at), refused: fmt.Errorf("reschedule: %w", job.ErrConflict)})
	return err
}

// RecordCallback records Swarm callback c of job id once; a second recording, or
// a job without a Swarm run, is job.ErrConflict.
func (st *Store) RecordCallback(ctx context.Context, id string, c job.Callback, now time.Time) error {
	switch c {
	case job.CallbackUpdate, job.CallbackPass, job.CallbackFail:
	default:
		return failure.Errorf(failure.InternalBug, "unknown Swarm callback %q", c)
	}
	at := job.FormatTime(now)
	_, err := st.update(ctx, id, write{op: "record swarm callback", update: "SET swarm.#cb = :now, updated_at = :now",
		cond: "attribute_exists(swarm) AND attribute_not_exists(swarm.#cb)", names: map[string]string{"#cb": string(c) + "_at"},
		values: map[string]types.AttributeValue{":now": s(at)}, token: "callback/" + string(c)})
	if errors.Is(err, errConditionCheck) {
		return fmt.Errorf("swarm %s callback of job %s already recorded: %w", c, id, job.ErrConflict)
	}
	return err
}

// Partition reads every item of partition pk, every page, consistently: a
// list that missed a page would act on half of it.
func Partition(ctx context.Context, api dynamodb.QueryAPIClient, table, pk, what string) ([]map[string]types.AttributeValue, error) {
	return QueryAll(ctx, api, &dynamodb.QueryInput{TableName: &table, ConsistentRead: aws.Bool(true),
		KeyConditionExpression: aws.String("pk = :pk"), ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(pk)}}, what)
}

// QueryAll reads every page of in.
func QueryAll(ctx context.Context, api dynamodb.QueryAPIClient, in *dynamodb.QueryInput, what string) ([]map[string]types.AttributeValue, error) {
	var out []map[string]types.AttributeValue
	for pages := dynamodb.NewQueryPaginator(api, in); pages.HasMorePages(); {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, awserr.Wrap(what, err)
		}
		out = append(out, page.Items...)
	}
	return out, nil
}

// ScanPrefix reads every item of the table whose pk begins with prefix (a
// scan, every page): for the operator's occasional questions only.
func ScanPrefix(ctx context.Context, api ScanAPI, table, prefix, what string) ([]map[string]types.AttributeValue, error) {
	var out []map[string]types.AttributeValue
	for pages := dynamodb.NewScanPaginator(api, &dynamodb.ScanInput{TableName: &table, ConsistentRead: aws.Bool(true),
		FilterExpression: aws.String("begins_with(pk, :p)"), ExpressionAttributeValues: map[string]types.AttributeValue{":p": s(prefix)}}); pages.HasMorePages(); {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, awserr.Wrap(what, err)
		}
		out = append(out, page.Items...)
	}
	return out, nil
}
