package decide

import (
	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/jobpage"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/settings"
	"github.com/criticizer/criticizer/shared/swarm"
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
	// Page is the job page link's key and base (JOB_PAGE_SECRET_ID,
	// JOB_PAGE_BASE_URL): the link is minted with the review.
	Page jobpage.LinkSettings
	// SwarmLinks (SWARM_URL) links a Swarm job's review in its e-mail.
	SwarmLinks swarm.Settings
}

// SettingsFromEnv reads SWARM_GATE_SEVERITY and the DISMISS_* settings:
// the noise filter's one loader, whose gate is the run's gate too —
// WEEKLY_DIGEST, SWARM_URL (the e-mail's review link) and the job page
// link's settings (an e-mail carries a full URL, so a page key needs its base).
func SettingsFromEnv(r *config.Reader) Settings {
	return Settings{Dismissals: outcome.PolicyFromEnv(r), WeeklyDigest: r.Bool(settings.WeeklyDigest), Page: jobpage.LinkSettingsFromEnv(r, true),
		SwarmLinks: swarm.SettingsFromEnv(r, swarm.ForLinks)}
}
