// Package mailchannel owns the e-mail channel choice (EMAIL_PROVIDER): SES with
// its events as evidence (shared/ses), or SMTP with its Secrets Manager login
// and the relay's lookup (shared/smtpmail). Notify and digest build their
// channel here, so both behave alike; smtpmail and ses know nothing of each
// other.
package mailchannel

import (
	"context"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/evidence"
	"github.com/criticizer/criticizer/shared/notify"
	"github.com/criticizer/criticizer/shared/secrets"
	"github.com/criticizer/criticizer/shared/ses"
	"github.com/criticizer/criticizer/shared/smtpmail"
	"github.com/criticizer/criticizer/shared/store"
)

// Settings are the e-mail channel's settings, as a function reads them.
type Settings struct {
	// Evidence: the provider, the From address and the relay's lookup.
	Evidence evidence.Settings
	// SMTP and SMTPSecretID (the login) for smtp.
	SMTP         smtpmail.Config
	SMTPSecretID string
	// SESConfigurationSet for ses: it publishes the events that are the
	// evidence.
	SESConfigurationSet string
}

// SettingsFromEnv reads the evidence settings, then the provider's own.
func SettingsFromEnv(r *config.Reader) Settings {
	s := Settings{Evidence: evidence.SettingsFromEnv(r)}
	switch s.Evidence.Provider {
	case "smtp":
		s.SMTP, s.SMTPSecretID = smtpmail.SettingsFromEnv(r, s.Evidence.From)
	case "ses":
		s.SESConfigurationSet = r.String("SES_CONFIGURATION_SET")
	}
	return s
}

// Deps are AWS config (SES), the jobs table (SES evidence), Secrets Manager (SMTP
// login), the log.
type Deps struct {
	AWS     aws.Config
	Jobs    store.LogAPI
	Table   string
	Secrets *secrets.Store
	Log     *slog.Logger
}

// New is the channel s names: *ses.Channel for "ses", else *smtpmail.Channel.
func New(ctx context.Context, s Settings, d Deps) (delivery.Channel[*notify.Message], error) {
	if s.Evidence.Provider == "ses" {
		sender, err := ses.New(ses.NewClient(d.AWS), s.SESConfigurationSet, d.Log)
		if err != nil {
			return nil, err
		}
		return ses.NewChannel(sender, evidence.New(d.Jobs, d.Table, 0)), nil
	}
	var lookup smtpmail.Evidence // a nil interface: the relay has no lookup
	if s.Evidence.LookupURL != "" {
		lookup = evidence.HTTP{URL: s.Evidence.LookupURL}
	}
	ch, err := smtpmail.FromSecret(ctx, d.Secrets, s.SMTPSecretID, s.SMTP, lookup, d.Log)
	if err != nil {
		return nil, err
	}
	return ch, nil
}
