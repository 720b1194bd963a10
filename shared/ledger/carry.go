package ledger

import (
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/job"
)

// ThreadOf is the thread a job's versions belong to: its Swarm review (whose
// versions are different archive changes), else its changelist.
func ThreadOf(j *job.Job) Thread {
	if j.Swarm != nil && j.Swarm.Review > 0 {
		return Thread{Kind: KindReview, ID: j.Swarm.Review}
	}
	return Thread{Kind: KindChangelist, ID: j.Changelist}
}

// FileOf is what the ledger keeps of a fetched file (its review state is
// the llm stage's to say).
func FileOf(fc domain.FileChange) File {
	return File{Path: fc.DepotPath, Action: fc.Action, Digest: fc.Digest, Rev: fc.Rev, Type: fc.Type}
}

// Unchanged reports whether fc is, for review, prev (same path, action, type, base
// revision and digest: the same diff and fingerprints). No digest: never.
func (prev File) Unchanged(fc domain.FileChange) bool {
	return prev.Digest != "" && prev.Digest == fc.Digest && prev.Comparable(fc)
}

// Comparable reports whether fc is prev with, perhaps, other content (same path, action,
// type and base revision), so the interdiff says which earlier findings'
// lines the new content touched.
func (prev File) Comparable(fc domain.FileChange) bool {
	return prev.Path == fc.DepotPath && prev.Action == fc.Action && prev.Rev == fc.Rev && prev.Type == fc.Type
}

// Carryable returns, by path, the files of v that a later version may carry
// over when unchanged: those reviewed in full (their findings are complete).
func (v *Version) Carryable() map[string]File {
	out := map[string]File{}
	if v == nil {
		return out
	}
	for _, f := range v.Files {
		if f.FullyReviewed && f.Digest != "" {
			out[f.Path] = f
		}
	}
	return out
}
