package result

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// Rollout serves a candidate prompt version to a share of jobs (rule RC-7,
// docs/guarantees.md). The choice is a pure function of the job id, so a
// retry or replay of a job gets the version it had; rollback is setting
// Percent to 0 (PROMPT_CANDIDATE_PERCENT), a configuration change.
type Rollout struct {
	Candidate string // the prompt version on trial; empty means none.
	Percent   int    // the share of jobs, 0-100, that get Candidate.
}

// Validate checks that the candidate has a template in this build (the
// share's range is the declaration's: PROMPT_CANDIDATE_PERCENT).
func (r Rollout) Validate() error {
	if r.Candidate != "" && !KnownPromptVersion(r.Candidate) {
		return fmt.Errorf("prompt candidate version %q has no template in this build", r.Candidate)
	}
	return nil
}

// Pick returns the prompt version for jobID: Candidate for a job whose id
// falls in the configured share, else the stable StablePromptVersion.
func (r Rollout) Pick(jobID string) string {
	if r.Candidate != "" && r.Percent > 0 && KnownPromptVersion(r.Candidate) && Bucket(jobID) < r.Percent {
		return r.Candidate
	}
	return StablePromptVersion
}

// Bucket maps a job id onto 0-99, uniformly: the prompt rollout's bucket.
func Bucket(jobID string) int { return bucket("prompt-rollout", jobID) }

// bucket maps a job id onto 0-99 under salt: each rollout has its own, so
// the model and prompt shares are independent.
func bucket(salt, jobID string) int {
	sum := sha256.Sum256([]byte(salt + "\x00" + jobID))
	return int(binary.BigEndian.Uint64(sum[:8]) % 100)
}

// ModelRollout serves a candidate model to a share of jobs
// (llmModelCandidate, llmModelCandidatePercent) as Rollout does a prompt
// version, under its own salt, so a job's model and prompt are drawn
// independently; promotion compares like with like (cmd/criticizer promote).
type ModelRollout struct {
	Candidate string // the model on trial; empty means none.
	Percent   int    // the share of jobs, 0-100, that get Candidate.
}

// Validate checks that a share has a model to serve and that the model is
// not the stable one (the share's range is the declaration's). infra and
// the llm function both call it.
func (r ModelRollout) Validate(stable string) error {
	if r.Percent > 0 && r.Candidate == "" {
		return fmt.Errorf("model candidate percent %d has no candidate model to serve", r.Percent)
	}
	if r.Candidate != "" && r.Candidate == stable {
		return fmt.Errorf("model candidate %q is the stable model", r.Candidate)
	}
	return nil
}

// Active reports whether any job gets the candidate model.
func (r ModelRollout) Active() bool { return r.Candidate != "" && r.Percent > 0 }

// Pick returns the model for jobID: Candidate for a job whose id falls in
// the configured share, else stable.
func (r ModelRollout) Pick(jobID, stable string) string {
	if r.Active() && ModelBucket(jobID) < r.Percent {
		return r.Candidate
	}
	return stable
}

// ModelBucket maps a job id onto 0-99, uniformly: the model rollout's
// bucket, independent of Bucket.
func ModelBucket(jobID string) int { return bucket("model-rollout", jobID) }

// SLO is an environment's rollout SLO for one prompt version (cdk.json
// validFindingsSlo, droppedFindingsSlo): the averages per job its reviews
// must keep. The rollback alarms page on the same numbers.
type SLO struct {
	MinValidPerJob   float64 // valid findings per job, at least
	MaxDroppedPerJob float64 // findings the parser dropped per job, at most
}

// Canary is what a candidate version's jobs measured over a window (the
// llm stage's ReviewValidFindings and ReviewFindingsDropped).
type Canary struct {
	Jobs          int
	ValidPerJob   float64
	DroppedPerJob float64
}

// ErrNotPromotable is the refusal of Promotable.
var ErrNotPromotable = errors.New("candidate prompt not promotable")

// Promotable judges a candidate's canary against its SLO: at least minJobs
// (and 1) jobs, valid findings per job at or above the floor, dropped ones at
// or below the ceiling. The error names every failed check, with the numbers.
func (s SLO) Promotable(c Canary, minJobs int) error {
	var failed []string
	if c.Jobs < max(minJobs, 1) {
		failed = append(failed, fmt.Sprintf("%d job(s) measured, at least %d needed", c.Jobs, max(minJobs, 1)))
	} else {
		if c.ValidPerJob < s.MinValidPerJob {
			failed = append(failed, fmt.Sprintf("valid findings per job %.3f below the SLO %.3f", c.ValidPerJob, s.MinValidPerJob))
		}
		if c.DroppedPerJob > s.MaxDroppedPerJob {
			failed = append(failed, fmt.Sprintf("dropped findings per job %.3f above the SLO %.3f", c.DroppedPerJob, s.MaxDroppedPerJob))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%w: %s", ErrNotPromotable, strings.Join(failed, "; "))
	}
	return nil
}
