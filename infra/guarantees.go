package main

import (
	"regexp"

	"github.com/criticizer/criticizer/shared/result"
)

var promptVersionRe = regexp.MustCompile(`^\d+\.\d+\.\d+$`)

// validateGuarantees checks the settings of the newer guarantees: how long
// uniqueness lasts (at least a year and never shorter than the data it
// protects, or 0 for forever) and the rollback SLO per prompt version.
func validateGuarantees(c EnvConfig, p *problems) {
	// Its range (0 or a year to a century) is the declaration's.
	if u := c.UniquenessRetentionDays; u != 0 && u < c.RetentionDays {
		p.add("uniquenessRetentionDays %d: below retentionDays (%d); a promise must outlive the data it protects", u, c.RetentionDays)
	}
	for v, slo := range c.ValidFindingsSLO {
		if !promptVersionRe.MatchString(v) {
			p.add("validFindingsSlo key %q: want a prompt version MAJOR.MINOR.PATCH", v)
		}
		if slo <= 0 || slo > 1000 {
			p.add("validFindingsSlo[%s] %v: want a positive average of valid findings per job", v, slo)
		}
	}
	for v, slo := range c.DroppedFindingsSLO {
		if !promptVersionRe.MatchString(v) {
			p.add("droppedFindingsSlo key %q: want a prompt version MAJOR.MINOR.PATCH", v)
		}
		if slo < 0 || slo > 1000 {
			p.add("droppedFindingsSlo[%s] %v: want a non-negative average of dropped findings per job", v, slo)
		}
	}
	if c.isLocal {
		return
	}
	// Outside local every prompt version that serves jobs states both
	// rollout SLOs: the rollback alarms and `criticizer promote` judge by them.
	for _, v := range servedPromptVersions(c) {
		if _, ok := c.ValidFindingsSLO[v]; !ok {
			p.add("validFindingsSlo has no entry for prompt %s: every environment outside local states the valid-findings SLO of each prompt version it serves", v)
		}
		if _, ok := c.DroppedFindingsSLO[v]; !ok {
			p.add("droppedFindingsSlo has no entry for prompt %s: every environment outside local states the dropped-findings SLO of each prompt version it serves", v)
		}
	}
}

// servedPromptVersions are the prompt versions an environment's jobs get:
// the build's stable one and the candidate on trial, if any.
func servedPromptVersions(c EnvConfig) []string {
	out := []string{result.StablePromptVersion}
	if c.PromptCandidateVersion != "" && c.PromptCandidateVersion != result.StablePromptVersion {
		out = append(out, c.PromptCandidateVersion)
	}
	return out
}
