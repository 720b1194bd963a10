// Package ledger owns what each reviewed version of a changelist or Swarm
// review held and was found to contain: its files with their Perforce
// digests and its findings by fingerprint. A rerun reads the previous
// version's entry to carry over unchanged files (fetch, llm) and to group
// findings as new, still open and resolved (notify).
//
// Entries are uniqueness, not data (docs/guarantees.md RT-2): paths,
// digests, fingerprints, lines and severities, never code or model text,
// kept as long as delivery identities (uniquenessRetentionDays).
package ledger

import (
	"context"
	"fmt"
)

// Thread names the series of versions a rerun is compared within: a Swarm
// review or a changelist reviewed again.
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
	// FullyReviewed: reviewed in full here (or carried from where it was):
	// its findings are complete, for an unchanged file to reuse.
	FullyReviewed bool `dynamodbav:"fully_reviewed" json:"fully_reviewed"`
	// Rev (a shelved file's base) and Type: the diff depends on both.
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

// Entries is what readers use: the latest entry below a version (nil, nil:
// none, never reviewed, or expired).
type Entries interface {
	Previous(ctx context.Context, t Thread, version int) (*Version, error)
}
