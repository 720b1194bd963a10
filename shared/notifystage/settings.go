package notifystage

import (
	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/recipients"
	"github.com/criticizer/criticizer/shared/swarm"
)

// Settings are what the notify stage reads beyond the common settings, its
// e-mail channel's (mailchannel.SettingsFromEnv) and its job page link's
// (jobpage.LinkSettingsFromEnv), which the function reads beside these: the
// stage sees the channel and the link minter only through interfaces.
type Settings struct {
	SwarmLinks swarm.Settings
	// Recipients is the recipient policy (RECIPIENT_DOMAINS, MAX_RECIPIENTS).
	Recipients *recipients.Policy
	// Comments: Swarm review comments beside the e-mail (comments.go).
	Comments CommentSettings
	// EmailParticipants is SWARM_EMAIL_PARTICIPANTS.
	EmailParticipants bool
	// Outbox names the delivery key: the rows are keyed by the keyed hash
	// of their recipient and the e-mail's token is keyed by it.
	Outbox outbox.Settings
	// WeeklyDigest (WEEKLY_DIGEST) records each job's week entry for the
	// weekly digest (shared/digest); off by default.
	WeeklyDigest bool
}

// SettingsFromEnv reads the notify stage's settings: outbox.SettingsFromEnv,
// SWARM_URL, NOTIFY_CHANNELS (with swarm-comments also SWARM_API_SECRET_ID and
// SWARM_COMMENT_WINDOW_SECONDS), the recipient policy and WEEKLY_DIGEST.
func SettingsFromEnv(r *config.Reader) Settings {
	s := Settings{SwarmLinks: swarm.SettingsFromEnv(r, swarm.ForLinks)}
	var err error
	s.Recipients, err = recipients.Load(r)
	r.Fail(err)
	s.Comments = commentSettingsFromEnv(r, s.SwarmLinks.URL)
	s.EmailParticipants = r.Bool("SWARM_EMAIL_PARTICIPANTS")
	s.Outbox = outbox.SettingsFromEnv(r)
	s.WeeklyDigest = r.Bool("WEEKLY_DIGEST")
	return s
}
