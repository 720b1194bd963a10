package main

import (
	"fmt"
)

// LLMSettings are the llm function's optional model limits. They are
// embedded in EnvConfig, so their keys sit beside the others in cdk.json
// `environments.<env>`; zero leaves the function's default
// (docs/configuration.md). Their ranges are the function's own: the synth
// runs its loader (checkFunctionSettings), so infra does not restate them.
type LLMSettings struct {
	LLMContextTokens   int     `json:"llmContextTokens,omitempty"`   // LLM_CONTEXT_TOKENS: the model's context window
	LLMBytesPerToken   float64 `json:"llmBytesPerToken,omitempty"`   // LLM_BYTES_PER_TOKEN: prompt bytes per token, 1..16
	LLMMaxOutputTokens int     `json:"llmMaxOutputTokens,omitempty"` // LLM_MAX_OUTPUT_TOKENS: max_tokens per call
	LLMResponseFormat  string  `json:"llmResponseFormat,omitempty"`  // LLM_RESPONSE_FORMAT: auto, json_schema, json_object_schema or json_object (openai only)
	LLMParallelism     int     `json:"llmParallelism,omitempty"`     // LLM_PARALLELISM: chunks reviewed at once
}

// validateLLM checks what the llm function cannot see: a response format
// is an openai setting.
func (c EnvConfig) validateLLM() error {
	if c.LLMResponseFormat != "" && c.LLMProvider != "openai" {
		return fmt.Errorf("llmResponseFormat is for llmProvider openai only (got %q)", c.LLMProvider)
	}
	return nil
}
