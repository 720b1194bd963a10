package main

import "github.com/criticizer/criticizer/shared/llm"

// validateRateLimits: the llm function's sizing for waiting out the
// provider's rate limits inside an attempt (rule BO-4), and the provider
// limits it paces to (rule PL-1).
func validateRateLimits(c EnvConfig, p *problems) {
	if _, err := llm.ParsePrices(c.LLMPricesPerMTok); err != nil {
		p.add("llmPricesPerMTok %q: %v", c.LLMPricesPerMTok, err)
	}
	if c.ReviewTimeoutSeconds < c.LeaseSeconds || c.ReviewTimeoutSeconds > 900 {
		p.add("reviewTimeoutSeconds %d: want leaseSeconds (%d)..900 (the llm function's timeout and its queue's visibility timeout)",
			c.ReviewTimeoutSeconds, c.LeaseSeconds)
	}
	// A call reserves its output budget against the token limit; a limit
	// below a few thousand tokens could not admit one chunk.
	if c.LLMTokensPerMinute > 0 && c.LLMTokensPerMinute < 10000 {
		p.add("llmTokensPerMinute %d: want 0 (learnt from the provider's headers) or at least 10000", c.LLMTokensPerMinute)
	}
}
