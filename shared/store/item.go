package store

import (
	"fmt"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
)

// The attribute mapping of a job item, mirroring shared/job's types field for
// field (Go converts between structs differing only in tags), so the job package
// stays free of storage.

type stageItem struct {
	Status         job.StageStatus `dynamodbav:"status"`
	Attempts       int             `dynamodbav:"attempts"`
	Owner          string          `dynamodbav:"owner,omitempty"`
	LeaseExpiresAt string          `dynamodbav:"lease_expires_at,omitempty"`
	FirstFailureAt string          `dynamodbav:"first_failure_at,omitempty"`
	LastFailureAt  string          `dynamodbav:"last_failure_at,omitempty"`
	LastErrorClass failure.Class   `dynamodbav:"last_error_class,omitempty"`
	LastError      string          `dynamodbav:"last_error,omitempty"`
	CompletedAt    string          `dynamodbav:"completed_at,omitempty"`
	CompletedBy    string          `dynamodbav:"completed_by,omitempty"`
	Replays        int             `dynamodbav:"replays"`
	ReplayedFrom   string          `dynamodbav:"replayed_from,omitempty"`
	ReplayedClass  failure.Class   `dynamodbav:"replayed_class,omitempty"`
	DeadLetterID   string          `dynamodbav:"dead_letter_id,omitempty"`
	DeadLetter     string          `dynamodbav:"dead_letter,omitempty"`
	DLQPending     bool            `dynamodbav:"dlq_pending"`
}

type artifactsItem struct {
	Raw           string `dynamodbav:"raw,omitempty"`
	Redacted      string `dynamodbav:"redacted,omitempty"`
	RedactedProof string `dynamodbav:"redacted_proof,omitempty"`
	Result        string `dynamodbav:"result,omitempty"`
}

type eventItem struct {
	At     string        `dynamodbav:"at"`
	Type   job.EventType `dynamodbav:"type"`
	Stage  string        `dynamodbav:"stage,omitempty"`
	From   string        `dynamodbav:"from,omitempty"`
	To     string        `dynamodbav:"to,omitempty"`
	Actor  string        `dynamodbav:"actor,omitempty"`
	Detail string        `dynamodbav:"detail,omitempty"`
}

type reviewItem struct {
	PromptVersion  string `dynamodbav:"prompt_version"`
	Model          string `dynamodbav:"model,omitempty"`
	InputTokens    int    `dynamodbav:"input_tokens"`
	OutputTokens   int    `dynamodbav:"output_tokens"`
	ModelCalls     int    `dynamodbav:"model_calls"`
	Chunks         int    `dynamodbav:"chunks"`
	SkippedFiles   int    `dynamodbav:"skipped_files"`
	TruncatedFiles int    `dynamodbav:"truncated_files"`
	FilesTotal     int    `dynamodbav:"files_total"`
	FilesReviewed  int    `dynamodbav:"files_reviewed"`
	Coverage       string `dynamodbav:"coverage,omitempty"`
	WithoutModel   string `dynamodbav:"without_model,omitempty"`
	// Prompt-cache reads and writes among input_tokens.
	CachedInputTokens     int `dynamodbav:"cached_input_tokens"`
	CacheWriteInputTokens int `dynamodbav:"cache_write_input_tokens"`
	// 429s waited out and the time waited for rate limits.
	RateLimitedCalls int   `dynamodbav:"rate_limited_calls"`
	RateLimitWaitMS  int64 `dynamodbav:"rate_limit_wait_ms"`
	// The structured-output form the model was asked in.
	ResponseFormat string `dynamodbav:"response_format,omitempty"`
}

type swarmItem struct {
	Review    int64  `dynamodbav:"review"`
	JobURL    string `dynamodbav:"job_url,omitempty"`
	UpdateURL string `dynamodbav:"update_url,omitempty"`
	PassURL   string `dynamodbav:"pass_url,omitempty"`
	FailURL   string `dynamodbav:"fail_url,omitempty"`
	UpdateAt  string `dynamodbav:"update_at,omitempty"`
	PassAt    string `dynamodbav:"pass_at,omitempty"`
	FailAt    string `dynamodbav:"fail_at,omitempty"`
}

type jobItem struct {
	ID                  string                      `dynamodbav:"job_id"`
	IdempotencyKey      string                      `dynamodbav:"idempotency_key"`
	Changelist          int64                       `dynamodbav:"changelist_id"`
	ReviewVersion       int                         `dynamodbav:"review_version"`
	Shelved             bool                        `dynamodbav:"shelved"`
	Source              string                      `dynamodbav:"source"`
	RequestedRecipients []string                    `dynamodbav:"requested_recipients"`
	Recipients          []string                    `dynamodbav:"recipients"`
	State               job.State                   `dynamodbav:"state"`
	Stage               domain.Stage                `dynamodbav:"stage"`
	TraceID             string                      `dynamodbav:"trace_id"`
	CreatedAt           string                      `dynamodbav:"created_at"`
	UpdatedAt           string                      `dynamodbav:"updated_at"`
	Seq                 int64                       `dynamodbav:"seq"`
	Artifacts           artifactsItem               `dynamodbav:"artifacts"`
	FindingCount        int                         `dynamodbav:"finding_count"`
	Review              *reviewItem                 `dynamodbav:"review,omitempty"`
	Stages              map[domain.Stage]*stageItem `dynamodbav:"stages"`
	History             []eventItem                 `dynamodbav:"history"`
	SweepShard          string                      `dynamodbav:"sweep_shard,omitempty"`
	SweepAt             string                      `dynamodbav:"sweep_at,omitempty"`
	ExpiresAt           int64                       `dynamodbav:"expires_at,omitempty"`
	Swarm               *swarmItem                  `dynamodbav:"swarm,omitempty"`
	// LastWrite is the last applied write's token: a retry whose condition fails
	// finds its own here.
	LastWrite string `dynamodbav:"last_write,omitempty"`
}

func toItem(j *job.Job) *jobItem {
	it := &jobItem{
		ID: j.ID, IdempotencyKey: j.IdempotencyKey, Changelist: j.Changelist, ReviewVersion: j.ReviewVersion,
		Shelved: j.Shelved, Source: j.Source, RequestedRecipients: j.RequestedRecipients, Recipients: j.Recipients,
		State: j.State, Stage: j.Stage, TraceID: j.TraceID, CreatedAt: j.CreatedAt, UpdatedAt: j.UpdatedAt, Seq: j.Seq,
		Artifacts: artifactsItem(j.Artifacts), FindingCount: j.FindingCount, Stages: stagesItem(j.Stages),
		SweepShard: j.SweepShard, SweepAt: j.SweepAt, ExpiresAt: j.ExpiresAt,
	}
	for _, e := range j.History {
		it.History = append(it.History, eventItem(e))
	}
	if j.Review != nil {
		rv := reviewItem(*j.Review)
		it.Review = &rv
	}
	if j.Swarm != nil {
		sw := swarmItem(*j.Swarm)
		it.Swarm = &sw
	}
	return it
}

func stagesItem(in map[domain.Stage]*job.StageRecord) map[domain.Stage]*stageItem {
	out := make(map[domain.Stage]*stageItem, len(in))
	for k, r := range in {
		if r != nil {
			si := stageItem(*r)
			out[k] = &si
		}
	}
	return out
}

func (it *jobItem) job() *job.Job {
	j := &job.Job{
		ID: it.ID, IdempotencyKey: it.IdempotencyKey, Changelist: it.Changelist, ReviewVersion: it.ReviewVersion,
		Shelved: it.Shelved, Source: it.Source, RequestedRecipients: it.RequestedRecipients, Recipients: it.Recipients,
		State: it.State, Stage: it.Stage, TraceID: it.TraceID, CreatedAt: it.CreatedAt, UpdatedAt: it.UpdatedAt, Seq: it.Seq,
		Artifacts: job.Artifacts(it.Artifacts), FindingCount: it.FindingCount, Stages: map[domain.Stage]*job.StageRecord{},
		SweepShard: it.SweepShard, SweepAt: it.SweepAt, ExpiresAt: it.ExpiresAt,
	}
	for k, r := range it.Stages {
		if r != nil {
			sr := job.StageRecord(*r)
			j.Stages[k] = &sr
		}
	}
	for _, e := range it.History {
		j.History = append(j.History, job.Event(e))
	}
	if it.Review != nil {
		rv := job.ReviewStats(*it.Review)
		j.Review = &rv
	}
	if it.Swarm != nil {
		sw := job.SwarmRun(*it.Swarm)
		j.Swarm = &sw
	}
	return j
}

func jobPK(id string) string       { return "JOB#" + id }
func idemPK(key string) string     { return "IDEM#" + key }
func changelistPK(cl int64) string { return fmt.Sprintf("CL#%d", cl) }

const (
	skJob        = "JOB"
	skIdem       = "IDEM"
	skChangelist = "CL"
)
