package jobpage

import (
	"testing"

	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/config/configtest"
)

func TestLinkSettingsFromEnv(t *testing.T) {
	tests := []struct {
		name     string
		env      map[string]string
		needBase bool
		want     LinkSettings
		wantErr  string
	}{
		{name: "no job page", env: map[string]string{}, needBase: true},
		{name: "path only", env: map[string]string{"JOB_PAGE_SECRET_ID": "arn:page"}, want: LinkSettings{SecretID: "arn:page"}},
		{name: "full URL", env: map[string]string{"JOB_PAGE_SECRET_ID": "arn:page", "JOB_PAGE_BASE_URL": "https://x.example.com/prod"}, needBase: true,
			want: LinkSettings{SecretID: "arn:page", BaseURL: "https://x.example.com/prod"}},
		{name: "e-mail needs the base", env: map[string]string{"JOB_PAGE_SECRET_ID": "arn:page"}, needBase: true, wantErr: "JOB_PAGE_BASE_URL is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := configtest.Load(t, tt.env, func(r *config.Reader) LinkSettings { return LinkSettingsFromEnv(r, tt.needBase) }, tt.wantErr)
			if ok && got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestSettingsFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		wantErr string
	}{
		{name: "set", env: map[string]string{"JOB_PAGE_SECRET_ID": "arn:page", "REDACTED_BUCKET": "redacted"}},
		{name: "no key", env: map[string]string{"REDACTED_BUCKET": "redacted"}, wantErr: "JOB_PAGE_SECRET_ID is required"},
		{name: "no bucket", env: map[string]string{"JOB_PAGE_SECRET_ID": "arn:page"}, wantErr: "REDACTED_BUCKET is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := configtest.Load(t, tt.env, SettingsFromEnv, tt.wantErr)
			if ok && (got.SecretID != "arn:page" || got.Bucket != "redacted") {
				t.Fatalf("got %+v", got)
			}
		})
	}
}
