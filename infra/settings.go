package main

import (
	"fmt"
	"strconv"

	"github.com/aws/jsii-runtime-go"
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

// llmEnv is the llm function's environment for the fields that are set.
func (s LLMSettings) llmEnv() map[string]*string {
	out := map[string]*string{}
	for k, n := range map[string]int{"LLM_CONTEXT_TOKENS": s.LLMContextTokens, "LLM_MAX_OUTPUT_TOKENS": s.LLMMaxOutputTokens, "LLM_PARALLELISM": s.LLMParallelism} {
		if n != 0 {
			out[k] = jsii.String(strconv.Itoa(n))
		}
	}
	if s.LLMBytesPerToken != 0 {
		out["LLM_BYTES_PER_TOKEN"] = jsii.String(strconv.FormatFloat(s.LLMBytesPerToken, 'g', -1, 64))
	}
	if s.LLMResponseFormat != "" {
		out["LLM_RESPONSE_FORMAT"] = jsii.String(s.LLMResponseFormat)
	}
	return out
}

// validateLLM checks what the llm function cannot see: a response format
// is an openai setting.
func (c EnvConfig) validateLLM() error {
	if c.LLMResponseFormat != "" && c.LLMProvider != "openai" {
		return fmt.Errorf("llmResponseFormat is for llmProvider openai only (got %q)", c.LLMProvider)
	}
	return nil
}
