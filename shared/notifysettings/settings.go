// Package notifysettings reads the notify function's settings beyond the
// common ones: the Swarm review links, the recipient policy, the Swarm
// comments channel (NOTIFY_CHANNELS) and the delivery key. The function
// reads them here and hands the stage (shared/notifystage) what they
// configure, so the stage itself reads no environment.
package notifysettings

import (
	"fmt"
	"strings"
	"time"

	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/recipients"
	"github.com/criticizer/criticizer/shared/settings"
	"github.com/criticizer/criticizer/shared/swarm"
)

// Settings are what the notify function reads beyond the common settings,
// its e-mail channel's (mailchannel.SettingsFromEnv) and its job page
// link's (jobpage.LinkSettingsFromEnv), which it reads beside these.
type Settings struct {
	SwarmLinks swarm.Settings
	// Recipients is the recipient policy (RECIPIENT_DOMAINS, MAX_RECIPIENTS).
	Recipients *recipients.Policy
	// Comments: Swarm review comments beside the e-mail.
	Comments CommentSettings
	// EmailParticipants is SWARM_EMAIL_PARTICIPANTS.
	EmailParticipants bool
	// Outbox names the delivery key: the rows are keyed by the keyed hash
	// of their recipient and the e-mail's token is keyed by it.
	Outbox outbox.Settings
}

// SettingsFromEnv reads the notify stage's settings: outbox.SettingsFromEnv,
// SWARM_URL, NOTIFY_CHANNELS (with swarm-comments also SWARM_API_SECRET_ID and
// SWARM_COMMENT_WINDOW_SECONDS), and the recipient policy.
func SettingsFromEnv(r *config.Reader) Settings {
	s := Settings{SwarmLinks: swarm.SettingsFromEnv(r, swarm.ForLinks)}
	var err error
	s.Recipients, err = recipients.Load(r)
	r.Fail(err)
	s.Comments = commentSettingsFromEnv(r, s.SwarmLinks.URL)
	s.EmailParticipants = r.Bool(settings.SwarmEmailParticipants)
	s.Outbox = outbox.SettingsFromEnv(r)
	return s
}

// Channel names NOTIFY_CHANNELS lists.
const (
	ChannelEmail         = "email"
	ChannelSwarmComments = outbox.ChannelSwarmComments
)

// CommentSettings turn the Swarm comments channel on.
type CommentSettings struct {
	On          bool          // NOTIFY_CHANNELS has swarm-comments
	APISecretID string        // SWARM_API_SECRET_ID: the login comments are posted as
	Window      time.Duration // SWARM_COMMENT_WINDOW_SECONDS
	MaxInline   int           // SWARM_MAX_INLINE_COMMENTS
}

// commentSettingsFromEnv reads NOTIFY_CHANNELS and, when it names
// swarm-comments, the Swarm API login and the comment window; swarmURL
// (SWARM_URL) is then required.
func commentSettingsFromEnv(r *config.Reader, swarmURL string) CommentSettings {
	on, err := SwarmCommentsOn(r.Optional(settings.NotifyChannels))
	r.Fail(err)
	if !on {
		return CommentSettings{}
	}
	if swarmURL == "" {
		r.Fail(fmt.Errorf("NOTIFY_CHANNELS has %s but SWARM_URL is not set", ChannelSwarmComments))
	}
	return CommentSettings{On: true, APISecretID: r.StackRequired(settings.SwarmAPISecretID),
		Window: swarm.CommentWindowFromEnv(r), MaxInline: maxInlineFromEnv(r)}
}

// SwarmCommentsOn parses NOTIFY_CHANNELS ("email" or "email,swarm-comments";
// empty means "email") and reports whether Swarm comments are on. E-mail is
// always a channel; anything else is an error naming the setting.
func SwarmCommentsOn(channels string) (bool, error) {
	if strings.TrimSpace(channels) == "" {
		return false, nil
	}
	email, comments := false, false
	for _, ch := range strings.Split(channels, ",") {
		switch strings.TrimSpace(ch) {
		case ChannelEmail:
			email = true
		case ChannelSwarmComments:
			comments = true
		default:
			return false, fmt.Errorf("NOTIFY_CHANNELS=%q: unknown channel %q (want %s, %s)", channels, ch, ChannelEmail, ChannelSwarmComments)
		}
	}
	if !email {
		return false, fmt.Errorf("NOTIFY_CHANNELS=%q: %s must be one of the channels", channels, ChannelEmail)
	}
	return comments, nil
}

// maxInlineFromEnv reads SWARM_MAX_INLINE_COMMENTS (its default and range:
// shared/settings).
func maxInlineFromEnv(r *config.Reader) int {
	return r.Int(settings.SwarmMaxInlineComments)
}
