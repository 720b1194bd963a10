package notifysettings

import (
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/config"
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
			return s.Outbox.DeliveryKeySecretID == "arn:delivery" && s.SwarmLinks.URL == "" && !s.Comments.On
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

func TestSwarmCommentsOn(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    bool
		wantErr string
	}{
		{"", false, ""},
		{"email", false, ""},
		{"email,swarm-comments", true, ""},
		{" swarm-comments , email ", true, ""},
		{"swarm-comments", false, "email must be one of the channels"},
		{"email,slack", false, `unknown channel "slack"`},
	} {
		got, err := SwarmCommentsOn(tt.in)
		if got != tt.want || (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("SwarmCommentsOn(%q) = %v, %v; want %v, error with %q", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestMaxInlineFromEnv(t *testing.T) {
	for _, tt := range []struct {
		env     map[string]string
		want    int
		wantErr string
	}{
		{map[string]string{}, 50, ""},
		{map[string]string{"SWARM_MAX_INLINE_COMMENTS": "10"}, 10, ""},
		{map[string]string{"SWARM_MAX_INLINE_COMMENTS": "0"}, 0, "SWARM_MAX_INLINE_COMMENTS"},
		{map[string]string{"SWARM_MAX_INLINE_COMMENTS": "501"}, 0, "SWARM_MAX_INLINE_COMMENTS"},
	} {
		got, ok := configtest.Load(t, tt.env, func(r *config.Reader) int { return maxInlineFromEnv(r) }, tt.wantErr)
		if ok && got != tt.want {
			t.Errorf("%v: %d, want %d", tt.env, got, tt.want)
		}
	}
}
