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
	// The prompt versions jobs get: the build's stable one and the candidate on trial.
	served := []string{result.StablePromptVersion}
	if c.PromptCandidateVersion != "" && c.PromptCandidateVersion != result.StablePromptVersion {
		served = append(served, c.PromptCandidateVersion)
	}
	for _, s := range []struct {
		key, what, want string
		slo             map[string]float64
		positive        bool
	}{
		{"validFindingsSlo", "valid-findings", "a positive average of valid findings per job", c.ValidFindingsSLO, true},
		{"droppedFindingsSlo", "dropped-findings", "a non-negative average of dropped findings per job", c.DroppedFindingsSLO, false},
	} {
		for v, slo := range s.slo {
			if !promptVersionRe.MatchString(v) {
				p.add("%s key %q: want a prompt version MAJOR.MINOR.PATCH", s.key, v)
			}
			if slo < 0 || (s.positive && slo == 0) || slo > 1000 {
				p.add("%s[%s] %v: want %s", s.key, v, slo, s.want)
			}
		}
		if c.isLocal {
			continue
		}
		// Outside local every prompt version that serves jobs states both
		// rollout SLOs: the rollback alarms and `criticizer promote` judge by them.
		for _, v := range served {
			if _, ok := s.slo[v]; !ok {
				p.add("%s has no entry for prompt %s: every environment outside local states the %s SLO of each prompt version it serves", s.key, v, s.what)
			}
		}
	}
}
