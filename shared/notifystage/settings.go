package notifystage

import (
	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/evidence"
	"github.com/criticizer/criticizer/shared/jobpage"
	"github.com/criticizer/criticizer/shared/outbox"
	fates "github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/recipients"
	"github.com/criticizer/criticizer/shared/smtpmail"
	"github.com/criticizer/criticizer/shared/swarm"
)

// Settings are what the notify function reads beyond the common settings.
type Settings struct {
	Evidence evidence.Settings
	// SMTP and SMTPSecretID (SMTP_SECRET_ID, {"username","password"}) are
	// read for EMAIL_PROVIDER=smtp only.
	SMTP         smtpmail.Config
	SMTPSecretID string
	// SESConfigurationSet (SES_CONFIGURATION_SET) is read for ses only: its
	// event publishing is the evidence.
	SESConfigurationSet string
	SwarmLinks          swarm.Settings
	// Recipients is the recipient policy (RECIPIENT_DOMAINS, MAX_RECIPIENTS).
	Recipients *recipients.Policy
	// JobPage links the job page in the e-mail (optional; a full URL).
	JobPage jobpage.LinkSettings
	// Comments: Swarm review comments beside the e-mail (comments.go).
	Comments CommentSettings
	// EmailParticipants is SWARM_EMAIL_PARTICIPANTS.
	EmailParticipants bool
	// Outbox names the delivery key: the rows are keyed by the keyed hash
	// of their recipient and the e-mail's token is keyed by it.
	Outbox outbox.Settings
	// Dismissals is the noise filter (outcome.PolicyFromEnv: the
	// DISMISS_* settings and the gate), the one policy every reader uses.
	Dismissals fates.Policy
	// WeeklyDigest (WEEKLY_DIGEST) records each job's week entry for the
	// weekly digest (shared/digest); off by default.
	WeeklyDigest bool
}

// SettingsFromEnv reads the notify function's settings: outbox.SettingsFromEnv, evidence.SettingsFromEnv,
// SWARM_URL, NOTIFY_CHANNELS (with swarm-comments also SWARM_API_SECRET_ID and
// SWARM_COMMENT_WINDOW_SECONDS), and for smtp SMTP_HOST, SMTP_PORT, SMTP_TLS
// (starttls, tls or none; default starttls), SMTP_TIMEOUT_SECONDS and
// SMTP_SECRET_ID; for ses SES_CONFIGURATION_SET.
func SettingsFromEnv(r *config.Reader) Settings {
	s := Settings{Evidence: evidence.SettingsFromEnv(r), SwarmLinks: swarm.SettingsFromEnv(r, swarm.ForLinks), JobPage: jobpage.LinkSettingsFromEnv(r, true)}
	var err error
	s.Recipients, err = recipients.Load(r)
	r.Fail(err)
	s.Comments = commentSettingsFromEnv(r, s.SwarmLinks.URL)
	s.EmailParticipants = r.Bool("SWARM_EMAIL_PARTICIPANTS")
	s.Outbox = outbox.SettingsFromEnv(r)
	s.Dismissals = fates.PolicyFromEnv(r)
	s.WeeklyDigest = r.Bool("WEEKLY_DIGEST")
	switch s.Evidence.Provider {
	case "smtp":
		s.SMTP, s.SMTPSecretID = smtpmail.SettingsFromEnv(r, s.Evidence.From)
	case "ses":
		s.SESConfigurationSet = r.String("SES_CONFIGURATION_SET")
	}
	return s
}
