package retention

import (
	"strings"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/config"
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
			r := config.NewReaderFrom(tt.env)
			got := SettingsFromEnv(r)
			err := r.Err()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}
