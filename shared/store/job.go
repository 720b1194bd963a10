// Package store owns the jobs table: job records with their per-stage leases
// and event history, idempotency records with saved responses, and changelist
// records that gate versioned reruns. Every state change is one conditional
// write (never read-then-write), guarded by state and, for stage work, by the
// lease owner; every change bumps seq, sets updated_at and appends an event.
package store

import (
	"fmt"
	"slices"

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

// Transitions is the job state machine: the states each state may move to.
// Every write in this package checks it in its condition expression.
var Transitions = map[State][]State{
	Queued:    {Running, Failed},
	Running:   {Running, Queued, RetryWait, Succeeded, Failed}, // Running→Running: lease taken over after expiry
	RetryWait: {Running, Failed},
	Failed:    {Queued}, // replay or full restart
	Succeeded: {},       // never reprocessed; a rerun is a new job with a higher review_version
}

// CanTransition reports whether from → to is allowed.
func CanTransition(from, to State) bool { return slices.Contains(Transitions[from], to) }

// from lists the states that may move to `to`.
func from(to State) []State {
	var out []State
	for _, s := range []State{Queued, Running, RetryWait, Failed, Succeeded} {
		if CanTransition(s, to) {
			out = append(out, s)
		}
	}
	return out
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

// StageRecord is a stage's lease, budget and failure history.
type StageRecord struct {
	Status         StageStatus   `dynamodbav:"status" json:"status"`
	Attempts       int           `dynamodbav:"attempts" json:"attempts"`
	Owner          string        `dynamodbav:"owner,omitempty" json:"owner,omitempty"`
	LeaseExpiresAt string        `dynamodbav:"lease_expires_at,omitempty" json:"lease_expires_at,omitempty"`
	FirstFailureAt string        `dynamodbav:"first_failure_at,omitempty" json:"first_failure_at,omitempty"`
	LastFailureAt  string        `dynamodbav:"last_failure_at,omitempty" json:"last_failure_at,omitempty"`
	LastErrorClass failure.Class `dynamodbav:"last_error_class,omitempty" json:"last_error_class,omitempty"`
	LastError      string        `dynamodbav:"last_error,omitempty" json:"last_error,omitempty"`
	CompletedAt    string        `dynamodbav:"completed_at,omitempty" json:"completed_at,omitempty"`
	Replays        int           `dynamodbav:"replays" json:"replays"`
	ReplayedFrom   string        `dynamodbav:"replayed_from,omitempty" json:"replayed_from,omitempty"`
	ReplayedClass  failure.Class `dynamodbav:"replayed_class,omitempty" json:"replayed_class,omitempty"`
	DeadLetterID   string        `dynamodbav:"dead_letter_id,omitempty" json:"dead_letter_id,omitempty"`
	DeadLetter     string        `dynamodbav:"dead_letter,omitempty" json:"-"` // the DLQ body, kept until the send is confirmed
	DLQPending     bool          `dynamodbav:"dlq_pending" json:"dlq_pending"`
}

// Artifacts are the S3 keys a job's stages wrote.
type Artifacts struct {
	Raw      string `dynamodbav:"raw,omitempty" json:"raw,omitempty"`
	Redacted string `dynamodbav:"redacted,omitempty" json:"redacted,omitempty"`
	Result   string `dynamodbav:"result,omitempty" json:"result,omitempty"`
}

// Event is one entry of a job's history.
type Event struct {
	At     string `dynamodbav:"at" json:"at"`
	Type   string `dynamodbav:"type" json:"type"`
	Stage  string `dynamodbav:"stage,omitempty" json:"stage,omitempty"`
	From   string `dynamodbav:"from,omitempty" json:"from,omitempty"`
	To     string `dynamodbav:"to,omitempty" json:"to,omitempty"`
	Actor  string `dynamodbav:"actor,omitempty" json:"actor,omitempty"`
	Detail string `dynamodbav:"detail,omitempty" json:"detail,omitempty"`
}

// Job is a review of one changelist at one review_version.
type Job struct {
	ID                  string                        `dynamodbav:"job_id" json:"job_id"`
	IdempotencyKey      string                        `dynamodbav:"idempotency_key" json:"idempotency_key"`
	Changelist          int64                         `dynamodbav:"changelist_id" json:"changelist_id"`
	ReviewVersion       int                           `dynamodbav:"review_version" json:"review_version"`
	Shelved             bool                          `dynamodbav:"shelved" json:"shelved"`
	Source              string                        `dynamodbav:"source" json:"source"`
	RequestedRecipients []string                      `dynamodbav:"requested_recipients" json:"requested_recipients"`
	Recipients          []string                      `dynamodbav:"recipients" json:"recipients"`
	State               State                         `dynamodbav:"state" json:"state"`
	Stage               domain.Stage                  `dynamodbav:"stage" json:"stage"`
	TraceID             string                        `dynamodbav:"trace_id" json:"trace_id"`
	CreatedAt           string                        `dynamodbav:"created_at" json:"created_at"`
	UpdatedAt           string                        `dynamodbav:"updated_at" json:"updated_at"`
	Seq                 int64                         `dynamodbav:"seq" json:"seq"`
	Artifacts           Artifacts                     `dynamodbav:"artifacts" json:"artifacts"`
	FindingCount        int                           `dynamodbav:"finding_count" json:"finding_count"`
	Review              *ReviewStats                  `dynamodbav:"review,omitempty" json:"review,omitempty"`
	Stages              map[domain.Stage]*StageRecord `dynamodbav:"stages" json:"stages"`
	History             []Event                       `dynamodbav:"history" json:"history"`
	SweepShard          string                        `dynamodbav:"sweep_shard,omitempty" json:"-"`
	SweepAt             string                        `dynamodbav:"sweep_at,omitempty" json:"sweep_at,omitempty"`
	// Swarm is set for a Helix Swarm test run (source "swarm"). Its callback
	// URLs carry Swarm's per-run token, so it never leaves the table.
	Swarm *SwarmRun `dynamodbav:"swarm,omitempty" json:"-"`
}

// SwarmRun is the Helix Swarm test run a job reports to: the review whose
// author gets the e-mail, the callback URLs, and when each callback was made
// (set once, by RecordCallback, so a redelivered or replayed job does not
// call back twice).
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

// ReviewStats is what the llm stage records on the job: the prompt version
// it used (rollout), the tokens it cost, and how much was not reviewed.
type ReviewStats struct {
	PromptVersion  string `dynamodbav:"prompt_version" json:"prompt_version"`
	InputTokens    int    `dynamodbav:"input_tokens" json:"input_tokens"`
	OutputTokens   int    `dynamodbav:"output_tokens" json:"output_tokens"`
	ModelCalls     int    `dynamodbav:"model_calls" json:"model_calls"`
	Chunks         int    `dynamodbav:"chunks" json:"chunks"`
	SkippedFiles   int    `dynamodbav:"skipped_files" json:"skipped_files"`
	TruncatedFiles int    `dynamodbav:"truncated_files" json:"truncated_files"`
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

func jobPK(id string) string       { return "JOB#" + id }
func idemPK(key string) string     { return "IDEM#" + key }
func changelistPK(cl int64) string { return fmt.Sprintf("CL#%d", cl) }

const (
	skJob        = "JOB"
	skIdem       = "IDEM"
	skChangelist = "CL"
	// SweepShard is the single partition of the sweep index. One shard is
	// plenty for review traffic (a few thousand live jobs); shard by hash if
	// that ever changes.
	SweepShard = "jobs"
)
