// Package envelope owns the stage message: the one versioned JSON schema of
// every stage queue and DLQ. A dead letter is the envelope plus a
// dead_letter block, so it can be redriven unchanged.
package envelope

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
)

// Version is the schema version this build writes and reads.
const Version = 1

// Modes of a Request (docs/design.md, "Words with one meaning").
const (
	ModeResume      = "resume"       // replay: redo the failed stage only, fresh budget
	ModeFullRestart = "full_restart" // restart: redo the whole pipeline from fetch
	// ModeRedeliver asks a succeeded job's notify stage to deliver its
	// pending rows under their existing keys, without reopening the job.
	ModeRedeliver = "redeliver"
)

// Envelope is the message on every stage queue.
type Envelope struct {
	V             int          `json:"v"`
	JobID         string       `json:"job_id"`
	Changelist    int64        `json:"changelist_id"`
	ReviewVersion int          `json:"review_version"`
	Stage         domain.Stage `json:"stage"`
	// Attempt is the stage attempt count when the message was sent, for
	// operators; the authoritative count lives in the job record.
	Attempt    int         `json:"attempt"`
	TraceID    string      `json:"trace_id"`
	SentAt     string      `json:"sent_at"`
	DeadLetter *DeadLetter `json:"dead_letter,omitempty"`
	Replay     *Request    `json:"replay,omitempty"` // the wire keeps its first name
}

// DeadLetter is the failing stage's diagnostic block: classes, counts, ids
// and hashes, never secrets, prompts or raw PII.
type DeadLetter struct {
	ID               string         `json:"id"` // unique per dead-lettering, guards double replays
	ErrorClass       failure.Class  `json:"error_class"`
	Retryable        bool           `json:"retryable"`
	Reason           string         `json:"reason"`
	LastStack        string         `json:"last_stack"`
	SanitizedContext map[string]any `json:"sanitized_context"`
	Stage            domain.Stage   `json:"stage"`
	Attempts         int            `json:"attempts"`
	FirstFailureAt   string         `json:"first_failure_at"`
	LastFailureAt    string         `json:"last_failure_at"`
	Escalated        bool           `json:"escalated,omitempty"`
	ReplayCount      int            `json:"replay_count,omitempty"`
}

// Request marks a message doing a job's work again (the "replay" block on
// the wire), with who asked and why; a redriven dead letter needs none.
type Request struct {
	Mode        string `json:"mode"`
	RequestedBy string `json:"requested_by,omitempty"`
	RequestedAt string `json:"requested_at,omitempty"`
	Note        string `json:"note,omitempty"`
}

// Decode parses and validates a message body. Unknown fields are rejected so
// that a message from an incompatible producer fails loudly, not halfway.
func Decode(body string) (Envelope, error) {
	var e Envelope
	dec := json.NewDecoder(bytes.NewReader([]byte(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return Envelope{}, failure.Errorf(failure.SchemaInvalid, "decode envelope: %w", err)
	}
	if dec.More() {
		return Envelope{}, failure.Errorf(failure.SchemaInvalid, "decode envelope: trailing data after the JSON object")
	}
	if err := e.Validate(); err != nil {
		return Envelope{}, err
	}
	return e, nil
}

// Validate checks the fields every stage relies on.
func (e Envelope) Validate() error {
	var errs []error
	if e.V != Version {
		errs = append(errs, fmt.Errorf("v = %d, want %d", e.V, Version))
	}
	if e.JobID == "" {
		errs = append(errs, errors.New("job_id is empty"))
	}
	if e.Changelist <= 0 {
		errs = append(errs, errors.New("changelist_id must be positive"))
	}
	if e.ReviewVersion <= 0 {
		errs = append(errs, errors.New("review_version must be positive"))
	}
	if !e.Stage.Valid() {
		errs = append(errs, fmt.Errorf("stage %q is not fetch, llm or notify", e.Stage))
	}
	if e.Replay != nil && e.Replay.Mode != ModeResume && e.Replay.Mode != ModeFullRestart && e.Replay.Mode != ModeRedeliver {
		errs = append(errs, fmt.Errorf("replay.mode %q is not resume, full_restart or redeliver", e.Replay.Mode))
	}
	if e.Replay != nil && e.Replay.Mode == ModeRedeliver && e.Stage != domain.StageNotify {
		errs = append(errs, errors.New("a redelivery must be sent to the notify stage"))
	}
	if e.Replay != nil && e.Replay.Mode == ModeFullRestart && e.Stage != domain.StageFetch {
		errs = append(errs, errors.New("a full restart must be sent to the fetch stage"))
	}
	if len(errs) > 0 {
		return failure.Wrap(failure.SchemaInvalid, fmt.Errorf("invalid envelope: %w", errors.Join(errs...)))
	}
	return nil
}

// Encode renders e as the message body.
func (e Envelope) Encode() (string, error) {
	b, err := json.Marshal(e)
	if err != nil {
		return "", fmt.Errorf("encode envelope: %w", err)
	}
	return string(b), nil
}

// Redeliver asks succeeded job j's notify stage to deliver its pending rows
// (rule OB-5); who asked and why end up in the job's history.
func Redeliver(j *job.Job, actor, note string, now time.Time) Envelope {
	e := ForJob(j, domain.StageNotify, now)
	e.Replay = &Request{Mode: ModeRedeliver, RequestedBy: actor, RequestedAt: e.SentAt, Note: note}
	return e
}

// Hash is a short, stable digest of a message body for diagnostics: it lets
// operators correlate payloads without the payload itself appearing anywhere.
func Hash(body string) string {
	sum := sha256.Sum256([]byte(body))
	return hex.EncodeToString(sum[:8])
}

// ForJob is the one constructor of a stage message: job j's stage s, sent
// at now, carrying the job's trace id and the stage's attempt count so far.
func ForJob(j *job.Job, s domain.Stage, now time.Time) Envelope {
	return Envelope{V: Version, JobID: j.ID, Changelist: j.Changelist, ReviewVersion: j.ReviewVersion,
		Stage: s, Attempt: j.StageRecord(s).Attempts, TraceID: j.TraceID, SentAt: job.FormatTime(now)}
}
