package webhook

import (
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/config/configtest"
)

func TestSettingsFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		check   func(Settings) bool
		wantErr string
	}{
		{name: "defaults", env: map[string]string{"WEBHOOK_SECRET_ID": "arn:wh"},
			check: func(s Settings) bool { return s.ReplayWindow == 5*time.Minute && s.Swarm.URL == "" }},
		{name: "with Swarm", env: map[string]string{"WEBHOOK_SECRET_ID": "arn:wh", "REPLAY_WINDOW_SECONDS": "60", "SWARM_URL": "https://swarm.example.com", "SWARM_TOKEN_SECRET_ID": "arn:tok"},
			check: func(s Settings) bool { return s.ReplayWindow == time.Minute && s.Swarm.TokenSecretID == "arn:tok" }},
		{name: "no signing secret", env: map[string]string{}, wantErr: "WEBHOOK_SECRET_ID is required"},
		{name: "replay window too short", env: map[string]string{"WEBHOOK_SECRET_ID": "arn:wh", "REPLAY_WINDOW_SECONDS": "5"}, wantErr: "REPLAY_WINDOW_SECONDS"},
		{name: "Swarm token without URL", env: map[string]string{"WEBHOOK_SECRET_ID": "arn:wh", "SWARM_TOKEN_SECRET_ID": "arn:tok"}, wantErr: "SWARM_URL"},
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
	out := map[string]string{"RECIPIENT_DOMAINS": "example.com"}
	for k, v := range env {
		out[k] = v
	}
	return out
}

func TestSettingsReadTheRecipientPolicy(t *testing.T) {
	if _, ok := configtest.Load(t, map[string]string{"WEBHOOK_SECRET_ID": "arn:wh"}, SettingsFromEnv, "RECIPIENT_DOMAINS is required"); ok {
		t.Fatal("accepted without a recipient policy")
	}
	s, _ := configtest.Load(t, withPolicy(map[string]string{"WEBHOOK_SECRET_ID": "arn:wh", "MAX_RECIPIENTS": "3"}), SettingsFromEnv, "")
	if s.Recipients == nil || s.Recipients.Max() != 3 {
		t.Fatalf("policy %+v", s.Recipients)
	}
}
