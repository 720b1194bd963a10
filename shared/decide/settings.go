package decide

import (
	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/settings"
)

// Settings are what deciding a review reads (by the llm function).
type Settings struct {
	// Dismissals is the noise filter (outcome.PolicyFromEnv: the
	// DISMISS_* settings and the gate, SWARM_GATE_SEVERITY, which is the
	// run's gate too), the one policy every reader uses.
	Dismissals outcome.Policy
	// WeeklyDigest (WEEKLY_DIGEST) records each review's week entry for
	// the weekly digest (shared/weekly); off by default.
	WeeklyDigest bool
}

// SettingsFromEnv reads SWARM_GATE_SEVERITY and the DISMISS_* settings:
// the noise filter's one loader, whose gate is the run's gate too —
// and WEEKLY_DIGEST.
func SettingsFromEnv(r *config.Reader) Settings {
	return Settings{Dismissals: outcome.PolicyFromEnv(r), WeeklyDigest: r.Bool(settings.WeeklyDigest)}
}
