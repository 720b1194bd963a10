package decide

import (
	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/outcome"
)

// Settings are what deciding a review reads (by the llm function).
type Settings struct {
	// Gate is SWARM_GATE_SEVERITY (Dismissals.Gate): "" (off) unless set.
	Gate string
	// Dismissals is the noise filter (outcome.PolicyFromEnv: the
	// DISMISS_* settings and the gate), the one policy every reader uses.
	Dismissals outcome.Policy
	// WeeklyDigest (WEEKLY_DIGEST) records each review's week entry for
	// the weekly digest (shared/weekly); off by default.
	WeeklyDigest bool
}

// SettingsFromEnv reads SWARM_GATE_SEVERITY and the DISMISS_* settings:
// the noise filter's one loader, whose gate is the run's gate too —
// and WEEKLY_DIGEST.
func SettingsFromEnv(r *config.Reader) Settings {
	p := outcome.PolicyFromEnv(r)
	return Settings{Gate: p.Gate, Dismissals: p, WeeklyDigest: r.Bool("WEEKLY_DIGEST")}
}
