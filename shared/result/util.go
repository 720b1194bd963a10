package result

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
)

// optional returns the names in all that are not in required, in the
// schema's canonical order (see fieldOrder) so prompts are byte-stable.
func optional(all, required []string) []string {
	var out []string
	for _, n := range all {
		if !slices.Contains(required, n) {
			out = append(out, n)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return fieldRank(a) - fieldRank(b) })
	return out
}

// fieldOrder is the order the schema lists fields in (rule RC-1); prompts restate them in
// this order rather than in map order.
var fieldOrder = []string{
	"schema_version", "prompt_version", "summary", "findings", "meta",
	"id", "severity", "category", "title", "file", "line", "end_line",
	"message", "suggestion", "confidence", "rule_id",
}

func fieldRank(name string) int {
	if i := slices.Index(fieldOrder, name); i >= 0 {
		return i
	}
	return len(fieldOrder)
}

// digest is a short content fingerprint for logs: enough to correlate two
// log lines, too short to be useful to recover anything.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:6])
}
