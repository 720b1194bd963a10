package mailchannel

import (
	"testing"

	"github.com/criticizer/criticizer/shared/config/configtest"
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
