package retention

import (
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/config/configtest"
)

func TestSettingsFromEnv(t *testing.T) {
	day := 24 * time.Hour
	tests := []struct {
		name    string
		env     map[string]string
		want    Settings
		wantErr string
	}{
		{name: "defaults", env: map[string]string{}, want: Settings{RawTTL: 7 * day, RedactedTTL: 30 * day}},
		{name: "set", env: map[string]string{"RAW_ARTIFACT_TTL_DAYS": "1", "REDACTED_ARTIFACT_TTL_DAYS": "14"}, want: Settings{RawTTL: day, RedactedTTL: 14 * day}},
		{name: "zero days", env: map[string]string{"RAW_ARTIFACT_TTL_DAYS": "0"}, wantErr: "RAW_ARTIFACT_TTL_DAYS"},
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
		})
	}
}
