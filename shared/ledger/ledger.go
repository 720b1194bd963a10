// Package ledger owns what each reviewed version of a changelist or Swarm
// review held and was found to contain: per version, the files with their
// Perforce digests and the findings by fingerprint. A rerun (a higher
// review_version) reads the previous version's entry to carry over files
// that did not change (fetch and llm stages) and to group findings as
// new, still open and resolved (notify stage: e-mail and Swarm summary).
//
// Entries are uniqueness, not data (docs/guarantees.md RT-2): they hold paths, digests,
// fingerprints, lines and severities, never code or model text, and live
// as long as delivery identities do (uniquenessRetentionDays). The text of
// an earlier finding is read from that version's job result while the
// job's data is kept.
package ledger

import (
	"context"
	"fmt"
)

// Thread names the series of versions a rerun is compared within: a Swarm
// review (its versions are different archive changes) or a changelist
// reviewed again at a higher review_version.
type Thread struct {
	Kind string // KindReview or KindChangelist
	ID   int64
}

const (
	KindReview     = "review"
	KindChangelist = "cl"
)

func (t Thread) String() string { return fmt.Sprintf("%s/%d", t.Kind, t.ID) }

// File is one file of a reviewed version.
type File struct {
	Path   string `dynamodbav:"path" json:"path"`
	Action string `dynamodbav:"action" json:"action"`
	// Digest is the file's content digest as p4 describe reports it
	// (digestN); empty when p4 gave none (then it never matches).
	Digest string `dynamodbav:"digest,omitempty" json:"digest,omitempty"`
	// FullyReviewed: the file was reviewed in full in this version (or
	// carried over from a version where it was), so its findings are
	// complete and an unchanged file can reuse them.
	FullyReviewed bool `dynamodbav:"fully_reviewed" json:"fully_reviewed"`
	// Rev is the revision describe named (for a shelved file, the base it
	// was shelved against) and Type its file type: the diff a file is
	// reviewed as depends on both, not on its content alone.
	Rev  int    `dynamodbav:"rev,omitempty" json:"rev,omitempty"`
	Type string `dynamodbav:"type,omitempty" json:"type,omitempty"`
}

// Finding is a finding of a reviewed version, by identity only.
type Finding struct {
	Fingerprint string `dynamodbav:"fp" json:"fp"`
	File        string `dynamodbav:"file" json:"file"`
	Line        int    `dynamodbav:"line" json:"line"`
	Severity    string `dynamodbav:"severity" json:"severity"`
}

// Version is the ledger entry of one reviewed version.
type Version struct {
	Thread   Thread
	Version  int       `dynamodbav:"version"`
	JobID    string    `dynamodbav:"job_id"`
	Change   int64     `dynamodbav:"change"` // the changelist (or archive change) reviewed
	Files    []File    `dynamodbav:"files"`
	Findings []Finding `dynamodbav:"findings"`
}

// Entries is what readers of the ledger use: the latest entry below a
// version (nil, nil when there is none: a first version, or the earlier
// one was never reviewed or has expired).
type Entries interface {
	Previous(ctx context.Context, t Thread, version int) (*Version, error)
}
