package llm

import (
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/config/configtest"
)

func TestSettingsFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    Settings
		wantErr string
	}{
		{name: "openai defaults", env: map[string]string{"LLM_MODEL": "gpt-4o-mini", "LLM_ENDPOINT": "https://api.openai.com", "LLM_SECRET_ID": "arn:llm"},
			want: Settings{Provider: OpenAI, SecretID: "arn:llm", Config: Config{Model: "gpt-4o-mini", Endpoint: "https://api.openai.com", Timeout: 45 * time.Second,
				MaxTokens: DefaultMaxTokens, ResponseFormat: FormatAuto}}},
		{name: "anthropic", env: map[string]string{"LLM_PROVIDER": "anthropic", "LLM_MODEL": "claude", "LLM_ENDPOINT": "https://api.anthropic.com",
			"LLM_SECRET_ID": "arn:llm", "LLM_TIMEOUT_SECONDS": "20", "LLM_MAX_OUTPUT_TOKENS": "8192"},
			want: Settings{Provider: Anthropic, SecretID: "arn:llm", Config: Config{Model: "claude", Endpoint: "https://api.anthropic.com", Timeout: 20 * time.Second, MaxTokens: 8192}}},
		{name: "bedrock needs no endpoint or secret", env: map[string]string{"LLM_PROVIDER": "bedrock", "LLM_MODEL": "anthropic.claude-3-haiku"},
			want: Settings{Provider: Bedrock, Config: Config{Model: "anthropic.claude-3-haiku", Timeout: 45 * time.Second, MaxTokens: DefaultMaxTokens}}},
		{name: "unknown provider", env: map[string]string{"LLM_PROVIDER": "gemini", "LLM_MODEL": "m"}, wantErr: "LLM_PROVIDER"},
		{name: "openai without secret", env: map[string]string{"LLM_MODEL": "m", "LLM_ENDPOINT": "http://x"}, wantErr: "LLM_SECRET_ID is required"},
		{name: "bad response format", env: map[string]string{"LLM_MODEL": "m", "LLM_ENDPOINT": "http://x", "LLM_SECRET_ID": "s", "LLM_RESPONSE_FORMAT": "text"}, wantErr: "LLM_RESPONSE_FORMAT"},
		{name: "output tokens too small", env: map[string]string{"LLM_MODEL": "m", "LLM_ENDPOINT": "http://x", "LLM_SECRET_ID": "s", "LLM_MAX_OUTPUT_TOKENS": "10"}, wantErr: "LLM_MAX_OUTPUT_TOKENS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := configtest.Load(t, tt.env, SettingsFromEnv, tt.wantErr)
			if !ok {
				return
			}
			if got.Provider != tt.want.Provider || got.SecretID != tt.want.SecretID || got.Config.Model != tt.want.Config.Model ||
				got.Config.Endpoint != tt.want.Config.Endpoint || got.Config.Timeout != tt.want.Config.Timeout ||
				got.Config.MaxTokens != tt.want.Config.MaxTokens || got.Config.ResponseFormat != tt.want.Config.ResponseFormat {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
