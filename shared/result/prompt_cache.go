package result

import "strings"

// schemaSection closes the system prompt of RulesPromptVersion with the
// canonical ReviewResult schema, verbatim. The system prompt is the static
// part of every request, byte-identical across a review's chunks and sent
// first (per-path rules, then the diffs, come after it): providers cache
// such a prefix once it reaches their minimum (1,024 tokens for OpenAI and
// most Anthropic and Bedrock models), and the instructions alone stay under
// it. The schema also states the contract the parser enforces, exactly.
func schemaSection() string {
	return "\nThe response must validate against this JSON schema (the canonical ReviewResult schema, verbatim):\n" +
		strings.TrimRight(string(schemaJSON), "\n") + "\n"
}
