// Package domain owns the pipeline's vocabulary: the stages, the changeset
// the fetch stage produces and the review the llm stage produces. It has no
// I/O. Jobs, their states and the clock are shared/job's.
package domain

import (
	"fmt"
	"slices"
)

// Stage is one step of the pipeline (rule LC-3); its name appears in queue
// names, metrics, dead letters and the job record.
type Stage string

const (
	StageFetch  Stage = "fetch"
	StageLLM    Stage = "llm"
	StageNotify Stage = "notify"
)

// Stages lists the pipeline in order.
var Stages = []Stage{StageFetch, StageLLM, StageNotify}

// Next returns the stage after s, or false when s is the last one.
func (s Stage) Next() (Stage, bool) {
	if i := slices.Index(Stages, s); i >= 0 && i+1 < len(Stages) {
		return Stages[i+1], true
	}
	return "", false
}

// Valid reports whether s names a pipeline stage.
func (s Stage) Valid() bool { return slices.Contains(Stages, s) }

// ParseStage converts a string into a Stage, rejecting unknown names.
func ParseStage(v string) (Stage, error) {
	s := Stage(v)
	if !s.Valid() {
		return "", fmt.Errorf("unknown stage %q (want fetch, llm or notify)", v)
	}
	return s, nil
}

// FileChange is one file of a changelist as fetched from Perforce.
type FileChange struct {
	DepotPath string `json:"depot_path"`
	Action    string `json:"action"` // add, edit, delete, integrate, move/add, ...
	Type      string `json:"type"`   // Perforce file type, e.g. text, binary+l
	Rev       int    `json:"rev"`
	Diff      string `json:"diff"` // unified diff against the previous revision; empty for binaries
	// Digest is the content's MD5 as p4 describe reports it (digestN);
	// empty when p4 gave none.
	Digest string `json:"digest,omitempty"`
	// CarriedFrom is the earlier review version (Changeset.Previous) whose
	// findings this file, unchanged since and reviewed in full there, carries
	// over; it is not sent to the model. 0: reviewed as usual.
	CarriedFrom int `json:"carried_from,omitempty"`
	// Interdiff is the diff from this file in that earlier version's shelf
	// (reviewed in full there) to this one: all the model is shown of it;
	// earlier findings on lines it leaves alone carry over. Diff stays the
	// change against the base, which e-mail and comments quote. "" with
	// InterdiffFrom set: unchanged.
	Interdiff     string `json:"interdiff,omitempty"`
	InterdiffFrom int    `json:"interdiff_from,omitempty"`
	// NotDiffed says why a text file has no diff (OverFileBytes); "" also for
	// binaries and deletes, told apart by action and type.
	NotDiffed string `json:"not_diffed,omitempty"`
}

// OverFileBytes marks that the file exceeds P4_MAX_FILE_BYTES (p4MaxFileBytes, 2 MiB by
// default): listed, never printed or reviewed.
const OverFileBytes = "over_file_bytes"

// PreviousReview is the version carried files come from, and the job whose
// result holds their findings.
type PreviousReview struct {
	Version int    `json:"version"`
	JobID   string `json:"job_id"`
}

// Changeset is a changelist with its diffs: fetch's output, llm's input (after
// redaction).
type Changeset struct {
	Changelist  int64  `json:"changelist"`
	User        string `json:"user"`
	UserEmail   string `json:"user_email,omitempty"`
	Client      string `json:"client"`
	Status      string `json:"status"` // submitted, shelved, pending
	Description string `json:"description"`
	// Previous is set when files carry over or are reviewed as interdiffs.
	Previous *PreviousReview `json:"previous,omitempty"`
	// Files stays the last field: the fetch stage streams it (fetchstage's spool).
	Files []FileChange `json:"files"`
}

// Carried returns the files carried over from Previous, by path.
func (c Changeset) Carried() map[string]bool {
	return c.since(func(f FileChange) int { return f.CarriedFrom })
}

// Interdiffs returns the files reviewed as their interdiff since
// Previous, by path.
func (c Changeset) Interdiffs() map[string]bool {
	return c.since(func(f FileChange) int {
		if f.CarriedFrom > 0 {
			return 0 // carried whole: not an interdiff
		}
		return f.InterdiffFrom
	})
}

// since returns the files whose from is Previous's version, by path.
func (c Changeset) since(from func(FileChange) int) map[string]bool {
	out := map[string]bool{}
	for _, f := range c.Files {
		if c.Previous != nil && from(f) > 0 && from(f) == c.Previous.Version {
			out[f.DepotPath] = true
		}
	}
	return out
}

// ChangedFiles returns the depot paths of the changeset's files, the list
// review findings are matched against.
func (c Changeset) ChangedFiles() []string {
	out := make([]string, 0, len(c.Files))
	for _, f := range c.Files {
		out = append(out, f.DepotPath)
	}
	return out
}

// Finding is one review finding, as the ReviewResult schema defines it (rule RC-1).
type Finding struct {
	ID         string `json:"id"`
	Severity   string `json:"severity"`
	Category   string `json:"category"`
	Title      string `json:"title"`
	File       string `json:"file"`
	Line       int    `json:"line"`
	EndLine    int    `json:"end_line,omitempty"`
	Message    string `json:"message"`
	Suggestion string `json:"suggestion,omitempty"`
	Confidence string `json:"confidence,omitempty"`
	RuleID     string `json:"rule_id,omitempty"`
}

// ReviewResult is the canonical, validated output of the llm stage.
type ReviewResult struct {
	SchemaVersion string         `json:"schema_version"`
	PromptVersion string         `json:"prompt_version"`
	Summary       string         `json:"summary,omitempty"`
	Findings      []Finding      `json:"findings"`
	Meta          map[string]any `json:"meta,omitempty"`
}
