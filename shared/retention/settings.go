package retention

import (
	"time"

	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/settings"
)

// Settings are the artifact lifetimes the check compares objects with: the
// buckets' lifecycle rules, which the stack sets from the same numbers.
type Settings struct {
	RawTTL      time.Duration // RAW_ARTIFACT_TTL_DAYS
	RedactedTTL time.Duration // REDACTED_ARTIFACT_TTL_DAYS
}

// SettingsFromEnv reads the retention check's settings; problems are
// collected in r.
func SettingsFromEnv(r *config.Reader) Settings {
	return Settings{RawTTL: r.Days(settings.RawArtifactTTLDays),
		RedactedTTL: r.Days(settings.RedactedArtifactTTLDays)}
}
