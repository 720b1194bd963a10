package fetchstage

import (
	"log/slog"

	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/depot"
	"github.com/criticizer/criticizer/shared/p4"
	"github.com/criticizer/criticizer/shared/recipients"
	"github.com/criticizer/criticizer/shared/redact"
	"github.com/criticizer/criticizer/shared/settings"
	"github.com/criticizer/criticizer/shared/swarm"
)

// Settings are what the fetch function reads beyond the common settings.
type Settings struct {
	P4 p4.Settings
	// AllowList is DEPOT_ALLOWLIST parsed: validated at start-up, so a bad
	// entry fails the deploy's first invocation instead of widening access.
	AllowList *depot.AllowList
	// Redaction is the policy the llm stage's guard checks with too.
	Redaction redact.Policy
	// Swarm: who wrote a review (optional; a Swarm job fails without it).
	Swarm swarm.Settings
	// Recipients is the recipient policy (RECIPIENT_DOMAINS, MAX_RECIPIENTS).
	Recipients *recipients.Policy
}

// SettingsFromEnv reads the fetch function's settings; problems are
// collected in r (check r.Err()). log receives the allow-list's warnings.
func SettingsFromEnv(r *config.Reader, log *slog.Logger) Settings {
	s := Settings{P4: p4.SettingsFromEnv(r), Redaction: redact.PolicyFromConfig(r), Swarm: swarm.SettingsFromEnv(r, swarm.ForAuthors)}
	var err error
	s.Recipients, err = recipients.Load(r)
	r.Fail(err)
	if spec := r.String(settings.DepotAllowList); spec != "" {
		al, err := depot.ParseAllowList(spec, log)
		r.Fail(err)
		s.AllowList = al
	}
	return s
}
