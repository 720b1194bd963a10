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
}

// SettingsFromEnv reads SWARM_GATE_SEVERITY and the DISMISS_* settings:
// the noise filter's one loader, whose gate is the run's gate too.
func SettingsFromEnv(r *config.Reader) Settings {
	p := outcome.PolicyFromEnv(r)
	return Settings{Gate: p.Gate, Dismissals: p}
}
