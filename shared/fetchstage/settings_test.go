package fetchstage

import (
	"testing"

	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/config/configtest"
)

func TestSettingsFromEnv(t *testing.T) {
	base := func(extra map[string]string) map[string]string {
		m := map[string]string{"P4_BIN": "/opt/bin/p4", "P4PORT": "ssl:perforce:1666", "P4USER": "criticizer", "DEPOT_ALLOWLIST": "//depot/projectA/..."}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name    string
		env     map[string]string
		wantErr string
	}{
		{name: "minimal", env: base(nil)},
		{name: "with Swarm and policy", env: base(map[string]string{"SWARM_URL": "https://swarm.example.com", "SWARM_API_SECRET_ID": "arn:api",
			"REDACT_EMAILS": "true", "CONFIDENTIAL_DOMAINS": "corp.example", "CONFIDENTIAL_CIDRS": "10.0.0.0/8"})},
		{name: "no allow-list", env: base(map[string]string{"DEPOT_ALLOWLIST": ""}), wantErr: "DEPOT_ALLOWLIST is required"},
		{name: "allow-list entry outside depot syntax", env: base(map[string]string{"DEPOT_ALLOWLIST": "/etc/..."}), wantErr: "/etc/..."},
		{name: "Swarm secret without URL", env: base(map[string]string{"SWARM_API_SECRET_ID": "arn:api"}), wantErr: "SWARM_URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ok := configtest.Load(t, withPolicy(tt.env), func(r *config.Reader) Settings { return SettingsFromEnv(r, nil) }, tt.wantErr)
			if !ok {
				return
			}
			if s.AllowList == nil {
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
