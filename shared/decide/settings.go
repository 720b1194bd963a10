package decide

import (
	"fmt"
	"slices"
	"strings"

	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/outcome"
)

// Settings are what deciding a review reads (by the llm function).
type Settings struct {
	// Gate is SWARM_GATE_SEVERITY (GateFromEnv): off unless set.
	Gate string
	// Dismissals is the noise filter (outcome.PolicyFromEnv: the
	// DISMISS_* settings and the gate), the one policy every reader uses.
	Dismissals outcome.Policy
	// WeeklyDigest (WEEKLY_DIGEST) records each review's week entry for
	// the weekly digest (shared/weekly); off by default.
	WeeklyDigest bool
}

// SettingsFromEnv reads SWARM_GATE_SEVERITY, the DISMISS_* settings and
// WEEKLY_DIGEST.
func SettingsFromEnv(r *config.Reader) Settings {
	return Settings{Gate: GateFromEnv(r), Dismissals: outcome.PolicyFromEnv(r), WeeklyDigest: r.Bool("WEEKLY_DIGEST")}
}

// GateFromEnv reads SWARM_GATE_SEVERITY: the severity at or above which a
// review's findings fail its Swarm test run (so a workflow that requires
// tests to pass blocks the merge). Off ("" or "off") by default: findings
// are advice unless a team opts in.
func GateFromEnv(r *config.Reader) string {
	g := strings.ToLower(strings.TrimSpace(r.Optional("SWARM_GATE_SEVERITY")))
	if g == "off" || g == "" {
		return ""
	}
	if !slices.Contains(domain.Severities, g) {
		r.Fail(fmt.Errorf("SWARM_GATE_SEVERITY=%q: want off or one of %s", g, strings.Join(domain.Severities, ", ")))
	}
	return g
}
