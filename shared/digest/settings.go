package digest

import (
	"encoding/json"
	"fmt"

	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/evidence"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/recipients"
	"github.com/criticizer/criticizer/shared/smtpmail"
)

// Settings are what the digest function reads beyond the common settings.
type Settings struct {
	// Evidence: the provider, the From address, the relay's lookup and
	// the completion window, as the notify stage reads them.
	Evidence evidence.Settings
	// Owners are the path owners who opted in: DIGEST_OWNERS (a JSON
	// object, depot path pattern → addresses) filtered by DIGEST_OPT_IN.
	Owners []Owner
	// Recipients is the recipient policy: an owner outside it is refused.
	Recipients *recipients.Policy
	// SMTP and SMTPSecretID for smtp; SESConfigurationSet for ses.
	SMTP                smtpmail.Config
	SMTPSecretID        string
	SESConfigurationSet string
	// Outbox names the delivery key, which keys an owner's outbox row.
	Outbox outbox.Settings
}

// SettingsFromEnv reads the digest function's settings: the evidence
// settings, DIGEST_OWNERS, DIGEST_OPT_IN, the recipient policy, the
// sender's (smtpmail.SettingsFromEnv, or SES_CONFIGURATION_SET) and the
// delivery key (outbox.SettingsFromEnv).
func SettingsFromEnv(r *config.Reader) Settings {
	s := Settings{Evidence: evidence.SettingsFromEnv(r), Outbox: outbox.SettingsFromEnv(r)}
	var byPath map[string][]string
	if raw := r.String("DIGEST_OWNERS"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &byPath); err != nil {
			r.Fail(fmt.Errorf("DIGEST_OWNERS: want a JSON object of depot path patterns to addresses: %w", err))
		}
	}
	owners, err := Owners(byPath, r.List("DIGEST_OPT_IN"))
	r.Fail(err)
	s.Owners = owners
	s.Recipients, err = recipients.Load(r)
	r.Fail(err)
	switch s.Evidence.Provider {
	case "smtp":
		s.SMTP, s.SMTPSecretID = smtpmail.SettingsFromEnv(r, s.Evidence.From)
	case "ses":
		s.SESConfigurationSet = r.String("SES_CONFIGURATION_SET")
	}
	return s
}
