package evidence

import (
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/config/configtest"
)

func TestSettingsFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    Settings
		wantErr string
	}{
		{name: "smtp defaults", env: map[string]string{"SMTP_FROM": "criticizer@example.com"},
			want: Settings{Provider: "smtp", From: "criticizer@example.com", Window: 5 * time.Minute}},
		{name: "smtp with lookup", env: map[string]string{"SMTP_FROM": "c@example.com", "SMTP_LOOKUP_URL": "http://relay/lookup", "SEND_COMPLETION_WINDOW_SECONDS": "60"},
			want: Settings{Provider: "smtp", From: "c@example.com", LookupURL: "http://relay/lookup", Window: time.Minute}},
		{name: "ses ignores the relay lookup", env: map[string]string{"EMAIL_PROVIDER": "ses", "SMTP_FROM": "c@example.com", "SMTP_LOOKUP_URL": "http://relay"},
			want: Settings{Provider: "ses", From: "c@example.com", Window: 15 * time.Minute}},
		{name: "unknown provider", env: map[string]string{"EMAIL_PROVIDER": "sendgrid", "SMTP_FROM": "c@example.com"}, wantErr: "EMAIL_PROVIDER"},
		{name: "no sender", env: map[string]string{}, wantErr: "SMTP_FROM is required"},
		{name: "sender without domain", env: map[string]string{"SMTP_FROM": "criticizer"}, wantErr: "must be an e-mail address"},
		{name: "window 0 is the provider's", env: map[string]string{"EMAIL_PROVIDER": "ses", "SMTP_FROM": "c@example.com", "SEND_COMPLETION_WINDOW_SECONDS": "0"},
			want: Settings{Provider: "ses", From: "c@example.com", Window: 15 * time.Minute}},
		{name: "window out of range", env: map[string]string{"SMTP_FROM": "c@example.com", "SEND_COMPLETION_WINDOW_SECONDS": "86401"}, wantErr: `SEND_COMPLETION_WINDOW_SECONDS="86401" must be an integer in 0–86400`},
		{name: "window negative", env: map[string]string{"SMTP_FROM": "c@example.com", "SEND_COMPLETION_WINDOW_SECONDS": "-1"}, wantErr: "in 0–86400"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := configtest.Load(t, tt.env, SettingsFromEnv, tt.wantErr)
			if !ok {
				return
			}
			if got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			if got.FromDomain() != "example.com" {
				t.Errorf("FromDomain = %q", got.FromDomain())
			}
		})
	}
}
