// Package job is the job state machine: a review job, its states and
// per-stage status, the operations that move it (Transitions), a stage's
// lease, why a claim is refused, and the one clock. No I/O: its types name
// their DynamoDB attributes (dynamodbav tags) for shared/store, whose
// conditional writes expect the states Transitions names.
package job

import (
	"context"
	"regexp"
	"slices"
	"time"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
)

// State is a job's lifecycle state.
type State string

const (
	Queued    State = "queued"     // waiting for a worker of its current stage
	Running   State = "running"    // a worker holds the current stage's lease
	RetryWait State = "retry_wait" // the current stage failed retryably; a retry is scheduled
	Succeeded State = "succeeded"  // every stage done, every recipient notified (terminal)
	Failed    State = "failed"     // dead-lettered at its current stage; an operator may replay
)

// idPattern is a job id as uuid.NewString writes it (the webhook's).
var idPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// ValidID reports whether id has the form of the job ids the webhook
// creates: a path naming anything else is refused before any read.
func ValidID(id string) bool { return idPattern.MatchString(id) }

// Getter reads a job by id (store.Store); an unknown id is ErrNotFound.
type Getter interface {
	Get(ctx context.Context, id string) (*Job, error)
}

// States lists every state.
var States = []State{Queued, Running, RetryWait, Succeeded, Failed}

// Op names a write that changes a job's state.
type Op string

const (
	OpClaim      Op = "claim"       // take the current stage's lease
	OpRenew      Op = "renew"       // extend the owner's lease
	OpComplete   Op = "complete"    // stage done, the next stage is queued
	OpFinish     Op = "finish"      // last stage done: the job succeeded
	OpRetry      Op = "retry"       // retryable failure, the owner schedules a retry
	OpDeadLetter Op = "dead_letter" // stage dead-lettered
	OpReplay     Op = "replay"      // an operator replays the dead letter
	OpRestart    Op = "restart"     // an operator restarts the job from fetch
)

// Transition is one operation: the states it applies to and leads to.
type Transition struct {
	From []State
	To   State
}

// Transitions is the job state machine: shared/store's conditional writes
// expect its states (Expect), so no other transition can be written.
var Transitions = map[Op]Transition{
	OpClaim:      {From: []State{Queued, Running, RetryWait}, To: Running}, // Running→Running: a lease taken over after expiry
	OpRenew:      {From: []State{Running}, To: Running},
	OpComplete:   {From: []State{Running}, To: Queued},
	OpFinish:     {From: []State{Running}, To: Succeeded},
	OpRetry:      {From: []State{Running}, To: RetryWait},
	OpDeadLetter: {From: []State{Queued, Running, RetryWait}, To: Failed},
	OpReplay:     {From: []State{Failed}, To: Queued},
	OpRestart:    {From: []State{Failed}, To: Queued}, // succeeded jobs never rerun: a rerun is a new job with a higher review_version
}

// Expect returns the states op applies to, in table order.
func Expect(op Op) []State { return slices.Clone(Transitions[op].From) }

// Target returns the state op leads to.
func Target(op Op) State { return Transitions[op].To }

// CanTransition reports whether some operation moves a job from → to.
func CanTransition(from, to State) bool {
	for _, t := range Transitions {
		if t.To == to && slices.Contains(t.From, from) {
			return true
		}
	}
	return false
}

// StageStatus is the status of one stage within a job.
type StageStatus string

const (
	StagePending   StageStatus = "pending"
	StageRunning   StageStatus = "running"
	StageRetryWait StageStatus = "retry_wait"
	StageDone      StageStatus = "done"
	StageFailed    StageStatus = "failed"
)

// Claimable lists the stage statuses a claim accepts (a running stage only
// once its lease expired).
var Claimable = []StageStatus{StagePending, StageRetryWait, StageRunning}

// StageRecord is a stage's lease, budget and failure history.
type StageRecord struct {
	Status         StageStatus   `json:"status" dynamodbav:"status"`
	Attempts       int           `json:"attempts" dynamodbav:"attempts"`
	Owner          string        `json:"owner,omitempty" dynamodbav:"owner,omitempty"`
	LeaseExpiresAt string        `json:"lease_expires_at,omitempty" dynamodbav:"lease_expires_at,omitempty"`
	FirstFailureAt string        `json:"first_failure_at,omitempty" dynamodbav:"first_failure_at,omitempty"`
	LastFailureAt  string        `json:"last_failure_at,omitempty" dynamodbav:"last_failure_at,omitempty"`
	LastErrorClass failure.Class `json:"last_error_class,omitempty" dynamodbav:"last_error_class,omitempty"`
	LastError      string        `json:"last_error,omitempty" dynamodbav:"last_error,omitempty"`
	CompletedAt    string        `json:"completed_at,omitempty" dynamodbav:"completed_at,omitempty"`
	CompletedBy    string        `json:"completed_by,omitempty" dynamodbav:"completed_by,omitempty"` // the lease owner whose Complete was applied
	Replays        int           `json:"replays" dynamodbav:"replays"`
	ReplayedFrom   string        `json:"replayed_from,omitempty" dynamodbav:"replayed_from,omitempty"`
	ReplayedClass  failure.Class `json:"replayed_class,omitempty" dynamodbav:"replayed_class,omitempty"`
	DeadLetterID   string        `json:"dead_letter_id,omitempty" dynamodbav:"dead_letter_id,omitempty"`
	DeadLetter     string        `json:"-" dynamodbav:"dead_letter,omitempty"` // the DLQ body, kept until the send is confirmed
	DLQPending     bool          `json:"dlq_pending" dynamodbav:"dlq_pending"`
}

// Artifacts are the S3 keys a job's stages wrote.
type Artifacts struct {
	Raw           string `json:"raw,omitempty" dynamodbav:"raw,omitempty"`
	Redacted      string `json:"redacted,omitempty" dynamodbav:"redacted,omitempty"`
	RedactedProof string `json:"redacted_proof,omitempty" dynamodbav:"redacted_proof,omitempty"` // fetch's proof of redaction (redact.Redactor.Seal)
	Result        string `json:"result,omitempty" dynamodbav:"result,omitempty"`
}

// EventType names an entry of a job's history.
type EventType string

const (
	EventCreated        EventType = "created"
	EventClaimed        EventType = "stage_claimed"
	EventCompleted      EventType = "stage_completed"
	EventRetryScheduled EventType = "stage_retry_scheduled"
	EventDeadLettered   EventType = "dead_lettered"
	EventReplayed       EventType = "replayed"
	EventRestarted      EventType = "full_restart"
	EventSwept          EventType = "swept"
	// EventWebhookDiagnostic: a coercion or de-duplication the webhook applied.
	EventWebhookDiagnostic EventType = "webhook_diagnostic"
)

// Event is one entry of a job's history.
type Event struct {
	At     string    `json:"at" dynamodbav:"at"`
	Type   EventType `json:"type" dynamodbav:"type"`
	Stage  string    `json:"stage,omitempty" dynamodbav:"stage,omitempty"`
	From   string    `json:"from,omitempty" dynamodbav:"from,omitempty"`
	To     string    `json:"to,omitempty" dynamodbav:"to,omitempty"`
	Actor  string    `json:"actor,omitempty" dynamodbav:"actor,omitempty"`
	Detail string    `json:"detail,omitempty" dynamodbav:"detail,omitempty"`
}

// Job is a review of one changelist at one review_version.
type Job struct {
	ID                  string                        `json:"job_id" dynamodbav:"job_id"`
	IdempotencyKey      string                        `json:"idempotency_key" dynamodbav:"idempotency_key"`
	Changelist          int64                         `json:"changelist_id" dynamodbav:"changelist_id"`
	ReviewVersion       int                           `json:"review_version" dynamodbav:"review_version"`
	Shelved             bool                          `json:"shelved" dynamodbav:"shelved"`
	Source              string                        `json:"source" dynamodbav:"source"`
	RequestedRecipients []string                      `json:"requested_recipients" dynamodbav:"requested_recipients"`
	Recipients          []string                      `json:"recipients" dynamodbav:"recipients"`
	State               State                         `json:"state" dynamodbav:"state"`
	Stage               domain.Stage                  `json:"stage" dynamodbav:"stage"`
	TraceID             string                        `json:"trace_id" dynamodbav:"trace_id"`
	CreatedAt           string                        `json:"created_at" dynamodbav:"created_at"`
	UpdatedAt           string                        `json:"updated_at" dynamodbav:"updated_at"`
	Seq                 int64                         `json:"seq" dynamodbav:"seq"`
	Artifacts           Artifacts                     `json:"artifacts" dynamodbav:"artifacts"`
	FindingCount        int                           `json:"finding_count" dynamodbav:"finding_count"`
	Review              *ReviewStats                  `json:"review,omitempty" dynamodbav:"review,omitempty"`
	Stages              map[domain.Stage]*StageRecord `json:"stages" dynamodbav:"stages"`
	History             []Event                       `json:"history" dynamodbav:"history"`
	SweepShard          string                        `json:"-" dynamodbav:"sweep_shard,omitempty"`
	SweepAt             string                        `json:"sweep_at,omitempty" dynamodbav:"sweep_at,omitempty"`
	ExpiresAt           int64                         `json:"expires_at,omitempty" dynamodbav:"expires_at,omitempty"` // retention (DynamoDB TTL), epoch seconds
	// Swarm is a Helix Swarm test run's; its callback URLs carry Swarm's
	// per-run token, so it never leaves the table.
	Swarm *SwarmRun `json:"-" dynamodbav:"swarm,omitempty"`
}

// ReviewStats is what the llm stage records on the job.
type ReviewStats struct {
	PromptVersion  string `json:"prompt_version" dynamodbav:"prompt_version"`
	Model          string `json:"model,omitempty" dynamodbav:"model,omitempty"` // the model that reviewed it (a model canary's, or the stable one)
	InputTokens    int    `json:"input_tokens" dynamodbav:"input_tokens"`
	OutputTokens   int    `json:"output_tokens" dynamodbav:"output_tokens"`
	ModelCalls     int    `json:"model_calls" dynamodbav:"model_calls"`
	Chunks         int    `json:"chunks" dynamodbav:"chunks"`
	SkippedFiles   int    `json:"skipped_files" dynamodbav:"skipped_files"`
	TruncatedFiles int    `json:"truncated_files" dynamodbav:"truncated_files"`
	// Coverage states what was reviewed; WithoutModel why the model was not called.
	FilesTotal    int    `json:"files_total" dynamodbav:"files_total"`
	FilesReviewed int    `json:"files_reviewed" dynamodbav:"files_reviewed"`
	Coverage      string `json:"coverage,omitempty" dynamodbav:"coverage,omitempty"`
	WithoutModel  string `json:"without_model,omitempty" dynamodbav:"without_model,omitempty"`
	// Of InputTokens, those read from and written to the prompt cache.
	CachedInputTokens     int `json:"cached_input_tokens" dynamodbav:"cached_input_tokens"`
	CacheWriteInputTokens int `json:"cache_write_input_tokens" dynamodbav:"cache_write_input_tokens"`
	// The 429s waited out, and the time waited for rate limits (rule BO-4).
	RateLimitedCalls int    `json:"rate_limited_calls" dynamodbav:"rate_limited_calls"`
	RateLimitWaitMS  int64  `json:"rate_limit_wait_ms" dynamodbav:"rate_limit_wait_ms"`
	ResponseFormat   string `json:"response_format,omitempty" dynamodbav:"response_format,omitempty"` // structured-output form (shared/llm Capabilities)
}

// SweepShard is the sweep index's one partition: plenty for a few thousand
// live jobs; shard by hash if that ever changes.
const SweepShard = "jobs"

// New fills in a job's initial state: queued at fetch, every stage pending,
// due for the sweeper after sweepAfter unless its first message is consumed.
func New(id, idemKey string, cl int64, version int, now time.Time, sweepAfter time.Duration) *Job {
	at := FormatTime(now)
	return &Job{
		ID: id, IdempotencyKey: idemKey, Changelist: cl, ReviewVersion: version,
		State: Queued, Stage: domain.StageFetch, CreatedAt: at, UpdatedAt: at, Seq: 1,
		Stages: PendingStages(), RequestedRecipients: []string{}, Recipients: []string{},
		History:    []Event{{At: at, Type: EventCreated, To: string(Queued)}},
		SweepShard: SweepShard, SweepAt: FormatTime(now.Add(sweepAfter)),
	}
}

// PendingStages returns a pending record for every stage.
func PendingStages() map[domain.Stage]*StageRecord {
	out := map[domain.Stage]*StageRecord{}
	for _, s := range domain.Stages {
		out[s] = &StageRecord{Status: StagePending}
	}
	return out
}

// StageRecord returns the record of stage s (never nil).
func (j *Job) StageRecord(s domain.Stage) *StageRecord {
	if r := j.Stages[s]; r != nil {
		return r
	}
	return &StageRecord{Status: StagePending}
}

// Terminal reports whether the job will not move without an operator.
func (j *Job) Terminal() bool { return j.State == Succeeded || j.State == Failed }

// SwarmRun is the Helix Swarm test run a job reports to: the review, the
// callback URLs, and when each was made (set once: never called back twice).
type SwarmRun struct {
	Review    int64  `dynamodbav:"review"`
	JobURL    string `dynamodbav:"job_url,omitempty"` // the link {update} gives Swarm
	UpdateURL string `dynamodbav:"update_url,omitempty"`
	PassURL   string `dynamodbav:"pass_url,omitempty"`
	FailURL   string `dynamodbav:"fail_url,omitempty"`
	UpdateAt  string `dynamodbav:"update_at,omitempty"`
	PassAt    string `dynamodbav:"pass_at,omitempty"`
	FailAt    string `dynamodbav:"fail_at,omitempty"`
}

// Callback names one of a Swarm run's callbacks.
type Callback string

const (
	CallbackUpdate Callback = "update"
	CallbackPass   Callback = "pass"
	CallbackFail   Callback = "fail"
)

// URL returns the callback's URL ("" when Swarm gave none).
func (r *SwarmRun) URL(c Callback) string {
	switch c {
	case CallbackUpdate:
		return r.UpdateURL
	case CallbackPass:
		return r.PassURL
	case CallbackFail:
		return r.FailURL
	}
	return ""
}

// Called returns when the callback was recorded as made ("" if never).
func (r *SwarmRun) Called(c Callback) string {
	switch c {
	case CallbackUpdate:
		return r.UpdateAt
	case CallbackPass:
		return r.PassAt
	case CallbackFail:
		return r.FailAt
	}
	return ""
}

// Result is what a stage hands on when it completes.
type Result struct {
	Artifacts    Artifacts
	Recipients   []string     // set by fetch
	FindingCount *int         // set by llm
	Review       *ReviewStats // set by llm
	Detail       string
}

// FailureInfo is what a failed attempt records in the job.
type FailureInfo struct {
	Class   failure.Class
	Message string // sanitized
}
