package main

import "github.com/criticizer/criticizer/shared/llm"

// validateRateLimits: the llm function's sizing for waiting out the
// provider's rate limits inside an attempt (rule BO-4); the provider limits
// it paces to (rule PL-1) are checked against their declaration.
func validateRateLimits(c EnvConfig, p *problems) {
	if _, err := llm.ParsePrices(c.LLMPricesPerMTok); err != nil {
		p.add("llmPricesPerMTok %q: %v", c.LLMPricesPerMTok, err)
	}
	if _, err := llm.ParsePrices(c.LLMModelCandidatePricesPerMTok); err != nil {
		p.add("llmModelCandidatePricesPerMTok %q: %v", c.LLMModelCandidatePricesPerMTok, err)
	}
	if c.ReviewTimeoutSeconds < c.LeaseSeconds { // above 900: validateDeclared
		p.add("reviewTimeoutSeconds %d: want leaseSeconds (%d)..900 (the llm function's timeout and its queue's visibility timeout)",
			c.ReviewTimeoutSeconds, c.LeaseSeconds)
	}
}
