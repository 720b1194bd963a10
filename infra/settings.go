package main

import (
	"fmt"
)

// validateLLM checks what the llm function cannot see: a response format
// is an openai setting.
func (c EnvConfig) validateLLM() error {
	if f, ok := c.Passed["llmResponseFormat"]; ok && f != "" && c.LLMProvider != "openai" {
		return fmt.Errorf("llmResponseFormat is for llmProvider openai only (got %q)", c.LLMProvider)
	}
	return nil
}
