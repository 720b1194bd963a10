// Package job is the job state machine: a review job, its lifecycle states
// and per-stage status, the operations that move it (Transitions), the lease
// a worker holds on a stage, why a claim is refused, and the one clock every
// timestamp comes from. It has no I/O and no storage mapping: shared/store
// maps these types onto the DynamoDB table, and every conditional write
// there takes its expected states from Transitions.
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

// Getter reads a job by id (store.Store): all that a stage or handler
// which only looks jobs up needs of the store. An unknown id is
// ErrNotFound.
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

// Transition is one operation of the state machine: the states it applies to
// and the state it leads to.
type Transition struct {
	From []State
	To   State
}

// Transitions is the job state machine. Every conditional write in
// shared/store takes its expected states from here (Expect), so a state the
// table does not allow can never be written.
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
	Raw      string `json:"raw,omitempty"`
	Redacted string `json:"redacted,omitempty"`
	// RedactedProof is the fetch stage's proof of redaction of Redacted
	// (redact.Redactor.Seal), verified by the llm stage's guard.
	RedactedProof string `json:"redacted_proof,omitempty"`
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
	// EventWebhookDiagnostic records a coercion or de-duplication the
	// webhook applied to the request that created the job.
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
	// Swarm is set for a Helix Swarm test run (source "swarm"). Its callback
	// URLs carry Swarm's per-run token, so it never leaves the table.
	Swarm *SwarmRun `json:"-"`
}

// ReviewStats is what the llm stage records on the job: the prompt version
// it used (rollout), the tokens it cost, and how much was not reviewed.
type ReviewStats struct {
	PromptVersion  string `json:"prompt_version"`
	Model          string `json:"model,omitempty"` // the model that reviewed it (a model canary's, or the stable one)
	InputTokens    int    `json:"input_tokens"`
	OutputTokens   int    `json:"output_tokens"`
	ModelCalls     int    `json:"model_calls"`
	Chunks         int    `json:"chunks"`
	SkippedFiles   int    `json:"skipped_files"`
	TruncatedFiles int    `json:"truncated_files"`
	// Coverage states what was reviewed ("reviewed 38 of 40 files; skipped
	// 2: …"); WithoutModel why the model was not called at all.
	FilesTotal    int    `json:"files_total"`
	FilesReviewed int    `json:"files_reviewed"`
	Coverage      string `json:"coverage,omitempty"`
	WithoutModel  string `json:"without_model,omitempty"`
	// Of InputTokens, those the provider billed as read from its prompt
	// cache (at a fraction of the price) and as written to it.
	CachedInputTokens     int `json:"cached_input_tokens"`
	CacheWriteInputTokens int `json:"cache_write_input_tokens"`
	// The provider's 429s the attempt waited out, and the time it waited
	// for its rate limits (rule BO-4).
	RateLimitedCalls int   `json:"rate_limited_calls"`
	RateLimitWaitMS  int64 `json:"rate_limit_wait_ms"`
	// ResponseFormat is the structured-output form the model was asked in
	// (openai-compatible servers: json_schema, json_object_schema or
	// json_object, as found for the endpoint; shared/llm Capabilities).
	ResponseFormat string `json:"response_format,omitempty"`
}

// SweepShard is the single partition of the sweep index. One shard is
// plenty for review traffic (a few thousand live jobs); shard by hash if
// that ever changes.
const SweepShard = "jobs"

// New fills in a job's initial state: queued at fetch, every stage pending,
// due for the sweeper after sweepAfter unless its first message is consumed.
func New(id, idemKey string, cl int64, version int, now time.Time, sweepAfter time.Duration) *Job {
	at := FormatTime(now)
	j := &Job{
		ID: id, IdempotencyKey: idemKey, Changelist: cl, ReviewVersion: version,
		State: Queued, Stage: domain.StageFetch, CreatedAt: at, UpdatedAt: at, Seq: 1,
		Stages: PendingStages(), RequestedRecipients: []string{}, Recipients: []string{},
		History:    []Event{{At: at, Type: EventCreated, To: string(Queued)}},
		SweepShard: SweepShard, SweepAt: FormatTime(now.Add(sweepAfter)),
	}
	return j
}

// PendingStages returns a record for every stage, each pending: a new job's,
// and a restarted job's.
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

// SwarmRun is the Helix Swarm test run a job reports to: the review whose
// author gets the e-mail, the callback URLs, and when each callback was made
// (set once, so a returned message or a replayed job does not call back twice).
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
