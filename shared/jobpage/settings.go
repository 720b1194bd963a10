package jobpage

import (
	"errors"

	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/settings"
)

// LinkSettings are what a function that mints job-page links reads; both are
// optional: without JOB_PAGE_SECRET_ID the environment has no job page.
type LinkSettings struct {
	SecretID string // JOB_PAGE_SECRET_ID: the key the link tokens are made with
	BaseURL  string // JOB_PAGE_BASE_URL: the page's public base; "" for a path only
}

// LinkSettingsFromEnv reads JOB_PAGE_SECRET_ID and JOB_PAGE_BASE_URL. With
// needBase (an e-mail must carry a full URL), a secret without a base URL is
// a configuration error.
func LinkSettingsFromEnv(r *config.Reader, needBase bool) LinkSettings {
	s := LinkSettings{SecretID: r.Optional(settings.JobPageSecretID), BaseURL: r.Optional(settings.JobPageBaseURL)}
	if needBase && s.SecretID != "" && s.BaseURL == "" {
		r.Fail(errors.New("JOB_PAGE_BASE_URL is required with JOB_PAGE_SECRET_ID"))
	}
	return s
}

// Settings are the jobpage function's own.
type Settings struct {
	SecretID string // JOB_PAGE_SECRET_ID (required)
	Bucket   string // REDACTED_BUCKET: the stored review results (required)
}

// SettingsFromEnv reads the jobpage function's settings.
func SettingsFromEnv(r *config.Reader) Settings {
	return Settings{SecretID: r.String(settings.JobPageSecretID), Bucket: r.StackRequired(settings.RedactedBucket)}
}
