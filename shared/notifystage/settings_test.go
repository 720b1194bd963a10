package notifystage

import (
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/config/configtest"
	"github.com/criticizer/criticizer/shared/smtpmail"
)

func TestSettingsFromEnv(t *testing.T) {
	smtp := func(extra ...string) map[string]string {
		m := map[string]string{"SMTP_FROM": "criticizer@example.com", "SMTP_HOST": "smtp.example.com", "SMTP_SECRET_ID": "arn:smtp"}
		for i := 0; i < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		return m
	}
	tests := []struct {
		name    string
		env     map[string]string
		check   func(Settings) bool
		wantErr string
	}{
		{name: "smtp defaults", env: smtp(), check: func(s Settings) bool {
			return s.Outbox.DeliveryKeySecretID == "arn:delivery" && s.SMTP.Port == 587 && s.SMTP.TLS == smtpmail.TLSStartTLS && s.SMTP.Timeout == smtpmail.DefaultTimeout && s.SMTP.From == "criticizer@example.com" && s.SMTPSecretID == "arn:smtp"
		}},
		{name: "smtp all set", env: smtp("SMTP_PORT", "2526", "SMTP_TLS", "none", "SMTP_TIMEOUT_SECONDS", "5", "SWARM_URL", "https://swarm.example.com"),
			check: func(s Settings) bool {
				return s.SMTP.Port == 2526 && s.SMTP.TLS == smtpmail.TLSNone && s.SMTP.Timeout == 5*time.Second && s.SwarmLinks.URL == "https://swarm.example.com"
			}},
		{name: "ses", env: map[string]string{"EMAIL_PROVIDER": "ses", "SMTP_FROM": "c@example.com", "SES_CONFIGURATION_SET": "criticizer"},
			check: func(s Settings) bool { return s.SESConfigurationSet == "criticizer" && s.SMTP.Host == "" }},
		{name: "ses without configuration set", env: map[string]string{"EMAIL_PROVIDER": "ses", "SMTP_FROM": "c@example.com"}, wantErr: "SES_CONFIGURATION_SET is required"},
		{name: "smtp without host", env: map[string]string{"SMTP_FROM": "c@example.com", "SMTP_SECRET_ID": "s"}, wantErr: "SMTP_HOST is required"},
		{name: "unknown TLS mode", env: smtp("SMTP_TLS", "ssl"), wantErr: "SMTP_TLS"},
		// Rows are keyed by the delivery key: without it addresses would stay in the table.
		{name: "no delivery key", env: smtp("DELIVERY_KEY_SECRET_ID", ""), wantErr: "DELIVERY_KEY_SECRET_ID is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ok := configtest.Load(t, withPolicy(tt.env), SettingsFromEnv, tt.wantErr)
			if !ok {
				return
			}
			if !tt.check(s) {
				t.Fatalf("got %+v", s)
			}
		})
	}
}

// withPolicy adds the recipient policy every environment has.
func withPolicy(env map[string]string) map[string]string {
	out := map[string]string{"RECIPIENT_DOMAINS": "example.com", "DELIVERY_KEY_SECRET_ID": "arn:delivery"}
	for k, v := range env {
		out[k] = v
	}
	return out
}
