package main

import (
	"fmt"
	"strconv"

	"github.com/aws/jsii-runtime-go"
)

// ReviewSettings are the review function's optional limits, cdk.json key
// "review". A zero field is left unset and the function uses its default
// (docs/configuration.md lists them); the ranges are the function's own:
// the synth runs its loader (checkFunctionSettings), so infra does not
// restate them.
type ReviewSettings struct {
	ContextTokens   int     `json:"contextTokens,omitempty"`   // LLM_CONTEXT_TOKENS: the model's context window
	BytesPerToken   float64 `json:"bytesPerToken,omitempty"`   // LLM_BYTES_PER_TOKEN: prompt bytes per token, 1..16
	MaxOutputTokens int     `json:"maxOutputTokens,omitempty"` // LLM_MAX_OUTPUT_TOKENS: max_tokens per call
	ResponseFormat  string  `json:"responseFormat,omitempty"`  // LLM_RESPONSE_FORMAT: json_schema or json_object (openai only)
	Parallelism     int     `json:"parallelism,omitempty"`     // LLM_PARALLELISM: chunks reviewed at once
	MaxFiles        int     `json:"maxFiles,omitempty"`        // REVIEW_MAX_FILES: files reviewed per changelist
	MaxBytes        int     `json:"maxBytes,omitempty"`        // REVIEW_MAX_BYTES: diff bytes reviewed per changelist
	MaxFileBytes    int     `json:"maxFileBytes,omitempty"`    // REVIEW_MAX_FILE_BYTES: diff bytes reviewed per file
	MaxChunkFiles   int     `json:"maxChunkFiles,omitempty"`   // REVIEW_MAX_CHUNK_FILES: files per model call
}

// vars returns the review function's variables for the fields that are set.
func (r ReviewSettings) vars() map[string]string {
	out := map[string]string{}
	for k, n := range map[string]int{"LLM_CONTEXT_TOKENS": r.ContextTokens, "LLM_MAX_OUTPUT_TOKENS": r.MaxOutputTokens, "LLM_PARALLELISM": r.Parallelism,
		"REVIEW_MAX_FILES": r.MaxFiles, "REVIEW_MAX_BYTES": r.MaxBytes, "REVIEW_MAX_FILE_BYTES": r.MaxFileBytes, "REVIEW_MAX_CHUNK_FILES": r.MaxChunkFiles} {
		if n != 0 {
			out[k] = strconv.Itoa(n)
		}
	}
	if r.BytesPerToken != 0 {
		out["LLM_BYTES_PER_TOKEN"] = strconv.FormatFloat(r.BytesPerToken, 'g', -1, 64)
	}
	if r.ResponseFormat != "" {
		out["LLM_RESPONSE_FORMAT"] = r.ResponseFormat
	}
	return out
}

// env is vars for the function's Environment.
func (r ReviewSettings) env() map[string]*string {
	out := map[string]*string{}
	for k, v := range r.vars() {
		out[k] = jsii.String(v)
	}
	return out
}

// validate checks what the review function cannot see: a response format
// is an openai setting. The limits' ranges are the function's own, checked at
// synth by checkFunctionSettings.
func (r ReviewSettings) validate(c EnvConfig) error {
	if r.ResponseFormat != "" && c.LLMProvider != "openai" {
		return fmt.Errorf("review.responseFormat is for llmProvider openai only (got %q)", c.LLMProvider)
	}
	return nil
}
