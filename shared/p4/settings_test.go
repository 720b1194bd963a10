package p4

import (
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/config/configtest"
)

func TestSettingsFromEnv(t *testing.T) {
	base := map[string]string{"P4_BIN": "/opt/bin/p4", "P4PORT": "ssl:perforce:1666", "P4USER": "criticizer"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name    string
		env     map[string]string
		check   func(Settings) bool
		wantErr string
	}{
		{name: "defaults", env: base, check: func(s Settings) bool {
			return s.Config.Timeout == 30*time.Second && s.Options.Parallelism == DefaultParallelism && s.Options.MaxFileBytes == DefaultMaxFileBytes && s.SecretID == "" && s.Config.Home == Home && s.Options.ServerRole == RoleStandard
		}},
		{name: "all set", env: with("P4_TIMEOUT_SECONDS", "8", "P4CHARSET", "utf8", "P4TRUST_FINGERPRINT", "AB:CD", "P4_SECRET_ID", "arn:p4", "P4_PARALLELISM", "8", "P4_MAX_FILE_BYTES", "1048576", "P4_SERVER_ROLE", "commit"),
			check: func(s Settings) bool {
				return s.Options.ServerRole == RoleCommit && s.Config.Timeout == 8*time.Second && s.Config.Charset == "utf8" && s.Config.TrustFingerprint == "AB:CD" && s.SecretID == "arn:p4" && s.Options.Parallelism == 8 && s.Options.MaxFileBytes == 1<<20
			}},
		{name: "no port", env: map[string]string{"P4_BIN": "/opt/bin/p4", "P4USER": "u"}, wantErr: "P4PORT is required"},
		{name: "parallelism out of range", env: with("P4_PARALLELISM", "100"), wantErr: "P4_PARALLELISM"},
		{name: "per-file limit out of range", env: with("P4_MAX_FILE_BYTES", "1024"), wantErr: "P4_MAX_FILE_BYTES"},
		{name: "unknown server role", env: with("P4_SERVER_ROLE", "replica"), wantErr: "P4_SERVER_ROLE"},
		{name: "timeout not a number", env: with("P4_TIMEOUT_SECONDS", "soon"), wantErr: "P4_TIMEOUT_SECONDS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ok := configtest.Load(t, tt.env, SettingsFromEnv, tt.wantErr)
			if !ok {
				return
			}
			if !tt.check(s) {
				t.Fatalf("got %+v", s)
			}
		})
	}
}
