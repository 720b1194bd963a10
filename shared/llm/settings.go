package llm

import (
	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/settings"
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
	s := Settings{Provider: r.OneOf(settings.LLMProvider)}
	s.Config = Config{Model: r.String(settings.LLMModel),
		Timeout:   r.Seconds(settings.LLMTimeoutSeconds),
		MaxTokens: r.Int(settings.LLMMaxOutputTokens)}
	if f, _ := FamilyOf(s.Provider); f.AWS {
		s.Config.Endpoint = r.Optional(settings.LLMEndpoint)
		return s
	}
	if s.Provider == OpenAI {
		s.Config.ResponseFormat = r.OneOf(settings.LLMResponseFormat)
	}
	s.Config.Endpoint = r.String(settings.LLMEndpoint)
	s.SecretID = r.StackRequired(settings.LLMSecretID)
	return s
}
