// Package job is the job state machine: a review job, its states and
// per-stage status, the operations that move it (Transitions), a stage's
// lease, why a claim is refused, and the one clock. No I/O: shared/store
// maps these types onto DynamoDB, its conditional writes expecting the
// states Transitions names.
package job

import (
	"context"
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
	Status         StageStatus   `json:"status"`
	Attempts       int           `json:"attempts"`
	Owner          string        `json:"owner,omitempty"`
	LeaseExpiresAt string        `json:"lease_expires_at,omitempty"`
	FirstFailureAt string        `json:"first_failure_at,omitempty"`
	LastFailureAt  string        `json:"last_failure_at,omitempty"`
	LastErrorClass failure.Class `json:"last_error_class,omitempty"`
	LastError      string        `json:"last_error,omitempty"`
	CompletedAt    string        `json:"completed_at,omitempty"`
	CompletedBy    string        `json:"completed_by,omitempty"` // the lease owner whose Complete was applied
	Replays        int           `json:"replays"`
	ReplayedFrom   string        `json:"replayed_from,omitempty"`
	ReplayedClass  failure.Class `json:"replayed_class,omitempty"`
	DeadLetterID   string        `json:"dead_letter_id,omitempty"`
	DeadLetter     string        `json:"-"` // the DLQ body, kept until the send is confirmed
	DLQPending     bool          `json:"dlq_pending"`
}

// Artifacts are the S3 keys a job's stages wrote.
type Artifacts struct {
	Raw           string `json:"raw,omitempty"`
	Redacted      string `json:"redacted,omitempty"`
	RedactedProof string `json:"redacted_proof,omitempty"` // fetch's proof of redaction (redact.Redactor.Seal)
	Result        string `json:"result,omitempty"`
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
	At     string    `json:"at"`
	Type   EventType `json:"type"`
	Stage  string    `json:"stage,omitempty"`
	From   string    `json:"from,omitempty"`
	To     string    `json:"to,omitempty"`
	Actor  string    `json:"actor,omitempty"`
	Detail string    `json:"detail,omitempty"`
}

// Job is a review of one changelist at one review_version.
type Job struct {
	ID                  string                        `json:"job_id"`
	IdempotencyKey      string                        `json:"idempotency_key"`
	Changelist          int64                         `json:"changelist_id"`
	ReviewVersion       int                           `json:"review_version"`
	Shelved             bool                          `json:"shelved"`
	Source              string                        `json:"source"`
	RequestedRecipients []string                      `json:"requested_recipients"`
	Recipients          []string                      `json:"recipients"`
	State               State                         `json:"state"`
	Stage               domain.Stage                  `json:"stage"`
	TraceID             string                        `json:"trace_id"`
	CreatedAt           string                        `json:"created_at"`
	UpdatedAt           string                        `json:"updated_at"`
	Seq                 int64                         `json:"seq"`
	Artifacts           Artifacts                     `json:"artifacts"`
	FindingCount        int                           `json:"finding_count"`
	Review              *ReviewStats                  `json:"review,omitempty"`
	Stages              map[domain.Stage]*StageRecord `json:"stages"`
	History             []Event                       `json:"history"`
	SweepShard          string                        `json:"-"`
	SweepAt             string                        `json:"sweep_at,omitempty"`
	ExpiresAt           int64                         `json:"expires_at,omitempty"` // retention (DynamoDB TTL), epoch seconds
	// Swarm is a Helix Swarm test run's; its callback URLs carry Swarm's
	// per-run token, so it never leaves the table.
	Swarm *SwarmRun `json:"-"`
}

// ReviewStats is what the llm stage records on the job.
type ReviewStats struct {
	PromptVersion  string `json:"prompt_version"`
	Model          string `json:"model,omitempty"` // the model that reviewed it (a model canary's, or the stable one)
	InputTokens    int    `json:"input_tokens"`
	OutputTokens   int    `json:"output_tokens"`
	ModelCalls     int    `json:"model_calls"`
	Chunks         int    `json:"chunks"`
	SkippedFiles   int    `json:"skipped_files"`
	TruncatedFiles int    `json:"truncated_files"`
	// Coverage states what was reviewed; WithoutModel why the model was not called.
	FilesTotal    int    `json:"files_total"`
	FilesReviewed int    `json:"files_reviewed"`
	Coverage      string `json:"coverage,omitempty"`
	WithoutModel  string `json:"without_model,omitempty"`
	// Of InputTokens, those read from and written to the prompt cache.
	CachedInputTokens     int `json:"cached_input_tokens"`
	CacheWriteInputTokens int `json:"cache_write_input_tokens"`
	// The 429s waited out, and the time waited for rate limits (rule BO-4).
	RateLimitedCalls int    `json:"rate_limited_calls"`
	RateLimitWaitMS  int64  `json:"rate_limit_wait_ms"`
	ResponseFormat   string `json:"response_format,omitempty"` // structured-output form (shared/llm Capabilities)
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
	Review    int64
	JobURL    string // the link {update} gives Swarm
	UpdateURL string
	PassURL   string
	FailURL   string
	UpdateAt  string
	PassAt    string
	FailAt    string
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
