package swarm

import (
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/config/configtest"
)

func TestSettingsFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		use     Use
		env     map[string]string
		want    Settings
		wantErr string
	}{
		{name: "swarm off", use: ForWebhook, env: map[string]string{}},
		{name: "links", use: ForLinks, env: map[string]string{"SWARM_URL": "https://swarm.example.com", "SWARM_API_SECRET_ID": "ignored"},
			want: Settings{URL: "https://swarm.example.com"}},
		{name: "webhook", use: ForWebhook, env: map[string]string{"SWARM_URL": "https://swarm.example.com", "SWARM_TOKEN_SECRET_ID": "arn:tok"},
			want: Settings{URL: "https://swarm.example.com", TokenSecretID: "arn:tok"}},
		{name: "authors", use: ForAuthors, env: map[string]string{"SWARM_URL": "http://127.0.0.1:9000", "SWARM_API_SECRET_ID": "arn:api"},
			want: Settings{URL: "http://127.0.0.1:9000", APISecretID: "arn:api"}},
		{name: "comments, default window", use: ForComments, env: map[string]string{"SWARM_URL": "https://swarm.example.com", "SWARM_API_SECRET_ID": "arn:api"},
			want: Settings{URL: "https://swarm.example.com", APISecretID: "arn:api", CommentWindow: 120 * time.Second}},
		{name: "comments, window set", use: ForComments, env: map[string]string{"SWARM_URL": "https://swarm.example.com", "SWARM_API_SECRET_ID": "arn:api", "SWARM_COMMENT_WINDOW_SECONDS": "300"},
			want: Settings{URL: "https://swarm.example.com", APISecretID: "arn:api", CommentWindow: 300 * time.Second}},
		{name: "comments, window too short", use: ForComments, env: map[string]string{"SWARM_URL": "https://swarm.example.com", "SWARM_API_SECRET_ID": "arn:api", "SWARM_COMMENT_WINDOW_SECONDS": "5"},
			wantErr: "SWARM_COMMENT_WINDOW_SECONDS"},
		{name: "comments off: no login, no window", use: ForComments, env: map[string]string{"SWARM_URL": "https://swarm.example.com"},
			want: Settings{URL: "https://swarm.example.com"}},
		{name: "secret without URL", use: ForAuthors, env: map[string]string{"SWARM_API_SECRET_ID": "arn:api"}, wantErr: "SWARM_API_SECRET_ID is set but SWARM_URL is not"},
		{name: "relative URL", use: ForLinks, env: map[string]string{"SWARM_URL": "swarm.example.com"}, wantErr: "absolute http(s) URL"},
		{name: "ftp URL", use: ForLinks, env: map[string]string{"SWARM_URL": "ftp://swarm.example.com"}, wantErr: "absolute http(s) URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := configtest.Load(t, tt.env, func(r *config.Reader) Settings { return SettingsFromEnv(r, tt.use) }, tt.wantErr)
			if !ok {
				return
			}
			if got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestReviewURL(t *testing.T) {
	tests := []struct {
		base string
		id   int64
		want string
	}{
		{"https://swarm.example.com/", 42, "https://swarm.example.com/reviews/42"},
		{"https://swarm.example.com", 0, ""},
		{"", 42, ""},
	}
	for _, tt := range tests {
		if got := (Settings{URL: tt.base}).ReviewURL(tt.id); got != tt.want {
			t.Errorf("ReviewURL(%q, %d) = %q, want %q", tt.base, tt.id, got, tt.want)
		}
	}
}
