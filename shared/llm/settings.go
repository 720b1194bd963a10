package llm

import (
	"github.com/criticizer/criticizer/shared/config"
)

// Settings are the llm function's provider settings. The wiring adds
// what is not a setting: the schema, the logger, the API key.
type Settings struct {
	Provider string // LLM_PROVIDER: OpenAI (default), Anthropic or Bedrock
	Config   Config
	// SecretID names the secret holding {"api_key": …} (LLM_SECRET_ID);
	// required for openai and anthropic, unused for bedrock (IAM).
	SecretID string
}

// SettingsFromEnv reads the provider's settings: LLM_ENDPOINT is required
// but for bedrock (where it overrides the regional endpoint), which needs
// no LLM_SECRET_ID; LLM_RESPONSE_FORMAT is openai's only.
func SettingsFromEnv(r *config.Reader) Settings {
	s := Settings{Provider: r.OneOf("LLM_PROVIDER")}
	s.Config = Config{Model: r.String("LLM_MODEL"),
		Timeout:   r.Seconds("LLM_TIMEOUT_SECONDS"),
		MaxTokens: r.Int("LLM_MAX_OUTPUT_TOKENS")}
	if f, _ := FamilyOf(s.Provider); f.AWS {
		s.Config.Endpoint = r.Optional("LLM_ENDPOINT")
		return s
	}
	if s.Provider == OpenAI {
		s.Config.ResponseFormat = r.OneOf("LLM_RESPONSE_FORMAT")
	}
	s.Config.Endpoint = r.String("LLM_ENDPOINT")
	s.SecretID = r.StackRequired("LLM_SECRET_ID")
	return s
}
