package notifystage

import (
	"testing"

	"github.com/criticizer/criticizer/shared/config/configtest"
)

// SettingsFromEnv reads the stage's own settings; the e-mail channel's are
// mailchannel's (its TestSettingsFromEnv).
func TestSettingsFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		check   func(Settings) bool
		wantErr string
	}{
		{name: "defaults", env: map[string]string{}, check: func(s Settings) bool {
			return s.Outbox.DeliveryKeySecretID == "arn:delivery" && s.SwarmLinks.URL == "" && !s.Comments.On && !s.WeeklyDigest
		}},
		{name: "swarm links", env: map[string]string{"SWARM_URL": "https://swarm.example.com"},
			check: func(s Settings) bool { return s.SwarmLinks.URL == "https://swarm.example.com" }},
		// Rows are keyed by the delivery key: without it addresses would stay in the table.
		{name: "no delivery key", env: map[string]string{"DELIVERY_KEY_SECRET_ID": ""}, wantErr: "DELIVERY_KEY_SECRET_ID is required"},
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
