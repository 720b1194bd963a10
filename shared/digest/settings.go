package digest

import (
	"encoding/json"
	"fmt"

	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/mailchannel"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/recipients"
	"github.com/criticizer/criticizer/shared/settings"
)

// Settings are what the digest function reads beyond the common settings.
type Settings struct {
	// Mail is the e-mail channel's settings (mailchannel.SettingsFromEnv):
	// the provider, the From address, the relay's lookup, the completion
	// window and the provider's own.
	Mail mailchannel.Settings
	// Owners are the path owners who opted in: DIGEST_OWNERS (a JSON
	// object, depot path pattern → addresses) filtered by DIGEST_OPT_IN.
	Owners []Owner
	// Recipients is the recipient policy: an owner outside it is refused.
	Recipients *recipients.Policy
	// Outbox names the delivery key, which keys an owner's outbox row.
	Outbox outbox.Settings
	// Dismissals is the noise filter's one policy (outcome.PolicyFromEnv).
	Dismissals outcome.Policy
}

// SettingsFromEnv reads the digest function's settings: the e-mail
// channel's (mailchannel.SettingsFromEnv), DIGEST_OWNERS, DIGEST_OPT_IN,
// the recipient policy and the delivery key (outbox.SettingsFromEnv).
func SettingsFromEnv(r *config.Reader) Settings {
	s := Settings{Mail: mailchannel.SettingsFromEnv(r), Outbox: outbox.SettingsFromEnv(r)}
	var byPath map[string][]string
	if raw := r.String(settings.DigestOwners); raw != "" {
		if err := json.Unmarshal([]byte(raw), &byPath); err != nil {
			r.Fail(fmt.Errorf("DIGEST_OWNERS: want a JSON object of depot path patterns to addresses: %w", err))
		}
	}
	owners, err := Owners(byPath, r.List(settings.DigestOptIn))
	r.Fail(err)
	s.Owners = owners
	s.Recipients, err = recipients.Load(r)
	r.Fail(err)
	s.Dismissals = outcome.PolicyFromEnv(r)
	return s
}
