package mailchannel

import (
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/config/configtest"
	"github.com/criticizer/criticizer/shared/smtpmail"
)

// SettingsFromEnv reads the provider's own settings and only those: the
// relay and its login for smtp, the configuration set for ses.
func TestSettingsFromEnv(t *testing.T) {
	for _, tt := range []struct {
		name    string
		env     map[string]string
		check   func(Settings) bool
		wantErr string
	}{
		{name: "smtp", env: map[string]string{"SMTP_FROM": "c@example.com", "SMTP_HOST": "smtp.example.com", "SMTP_SECRET_ID": "arn:smtp"},
			check: func(s Settings) bool {
				return s.Evidence.Provider == "smtp" && s.SMTP.Host == "smtp.example.com" && s.SMTP.From == "c@example.com" && s.SMTPSecretID == "arn:smtp" && s.SESConfigurationSet == ""
			}},
		{name: "ses", env: map[string]string{"EMAIL_PROVIDER": "ses", "SMTP_FROM": "c@example.com", "SES_CONFIGURATION_SET": "criticizer"},
			check: func(s Settings) bool {
				return s.Evidence.Provider == "ses" && s.SESConfigurationSet == "criticizer" && s.SMTP.Host == "" && s.SMTPSecretID == ""
			}},
		{name: "smtp defaults", env: map[string]string{"SMTP_FROM": "c@example.com", "SMTP_HOST": "smtp.example.com", "SMTP_SECRET_ID": "arn:smtp"},
			check: func(s Settings) bool {
				return s.SMTP.Port == 587 && s.SMTP.TLS == smtpmail.TLSStartTLS && s.SMTP.Timeout == smtpmail.DefaultTimeout
			}},
		{name: "smtp all set", env: map[string]string{"SMTP_FROM": "c@example.com", "SMTP_HOST": "smtp.example.com", "SMTP_SECRET_ID": "arn:smtp",
			"SMTP_PORT": "2526", "SMTP_TLS": "none", "SMTP_TIMEOUT_SECONDS": "5"},
			check: func(s Settings) bool {
				return s.SMTP.Port == 2526 && s.SMTP.TLS == smtpmail.TLSNone && s.SMTP.Timeout == 5*time.Second
			}},
		{name: "unknown TLS mode", env: map[string]string{"SMTP_FROM": "c@example.com", "SMTP_HOST": "smtp.example.com", "SMTP_SECRET_ID": "s", "SMTP_TLS": "ssl"}, wantErr: "SMTP_TLS"},
		{name: "ses without configuration set", env: map[string]string{"EMAIL_PROVIDER": "ses", "SMTP_FROM": "c@example.com"}, wantErr: "SES_CONFIGURATION_SET is required"},
		{name: "smtp without host", env: map[string]string{"SMTP_FROM": "c@example.com", "SMTP_SECRET_ID": "s"}, wantErr: "SMTP_HOST is required"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, ok := configtest.Load(t, tt.env, SettingsFromEnv, tt.wantErr)
			if ok && !tt.check(s) {
				t.Fatalf("got %+v", s)
			}
		})
	}
}
