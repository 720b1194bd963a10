package review

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
)

// Rollout serves a candidate prompt version to a share of jobs (the spec's
// "Rollout strategy"). The choice is a pure function of the job id, so a
// retry or replay of a job gets the version it had; rollback is setting
// Percent to 0 (PROMPT_CANDIDATE_PERCENT), a configuration change.
type Rollout struct {
	// Candidate is the prompt version on trial; empty means none.
	Candidate string
	// Percent is the share of jobs, 0-100, that get Candidate.
	Percent int
}

// Validate checks that the candidate has a template in this build.
func (r Rollout) Validate() error {
	if r.Percent < 0 || r.Percent > 100 {
		return fmt.Errorf("prompt candidate percent %d is outside 0-100", r.Percent)
	}
	if r.Candidate != "" && !KnownPromptVersion(r.Candidate) {
		return fmt.Errorf("prompt candidate version %q has no template in this build", r.Candidate)
	}
	return nil
}

// Pick returns the prompt version for jobID: Candidate for a job whose id
// falls in the configured share, else the stable PromptVersion.
func (r Rollout) Pick(jobID string) string {
	if r.Candidate == "" || r.Percent <= 0 || !KnownPromptVersion(r.Candidate) {
		return PromptVersion
	}
	if Bucket(jobID) < r.Percent {
		return r.Candidate
	}
	return PromptVersion
}

// Bucket maps a job id onto 0-99, uniformly.
func Bucket(jobID string) int {
	sum := sha256.Sum256([]byte("prompt-rollout\x00" + jobID))
	return int(binary.BigEndian.Uint64(sum[:8]) % 100)
}
