package webhook

import (
	"time"

	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/jobpage"
	"github.com/criticizer/criticizer/shared/recipients"
	"github.com/criticizer/criticizer/shared/settings"
	"github.com/criticizer/criticizer/shared/swarm"
	"github.com/criticizer/criticizer/shared/swarmevents"
)

// Settings are what the webhook function reads beyond the common settings.
type Settings struct {
	// SecretID names the secret with the HMAC signing keys (WEBHOOK_SECRET_ID).
	SecretID string
	// ReplayWindow is how far a signed request's timestamp may be from now
	// (REPLAY_WINDOW_SECONDS).
	ReplayWindow time.Duration
	// Swarm: its bearer tokens and the origin its callback URLs must have;
	// without SWARM_TOKEN_SECRET_ID bearer authentication is off.
	Swarm swarm.Settings
	// Recipients is the recipient policy (RECIPIENT_DOMAINS, MAX_RECIPIENTS).
	Recipients *recipients.Policy
	// JobPage mints the job-page link a Swarm run shows (optional).
	JobPage jobpage.LinkSettings
	// SwarmEvents: P4 Code Review's outbound webhooks, off unless the stack
	// sets SWARM_EVENTS_SECRET_ID.
	SwarmEvents swarmevents.Settings
}

// SettingsFromEnv reads the webhook function's settings; problems are
// collected in r.
func SettingsFromEnv(r *config.Reader) Settings {
	s := Settings{SecretID: r.StackRequired(settings.WebhookSecretID), ReplayWindow: r.Seconds(settings.ReplayWindowSeconds),
		Swarm: swarm.SettingsFromEnv(r, swarm.ForWebhook), JobPage: jobpage.LinkSettingsFromEnv(r, false),
		SwarmEvents: swarmevents.SettingsFromEnv(r)}
	var err error
	s.Recipients, err = recipients.Load(r)
	r.Fail(err)
	return s
}
