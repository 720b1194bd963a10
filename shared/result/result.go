// Package result owns the result contract with the LLM: the versioned
// prompt that asks for a ReviewResult, and the parser that turns a model's
// answer into a validated domain.ReviewResult plus machine-readable
// diagnostics.
//
// The contract is rules RC-1..RC-5 (docs/guarantees.md): the
// canonical JSON schema is embedded verbatim (reviewresult.schema.json) and is
// the single source of truth for field names, types and enum sets. Both
// BuildPrompt and Parse pin StablePromptVersion and SchemaVersion; changing either
// follows the rollout order (parser support first, then the prompt).
package result

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Versions pinned by this build, each prompt version named for what its
// text adds. The stable version is served to every job outside a canary; a canary serves the
// configured candidate (PROMPT_CANDIDATE_VERSION, see Rollout), which is any
// of these by value, never a constant. The parser accepts answers for any of
// them; SchemaVersion is the output schema's (x.y).
const (
	// BasePromptVersion states the output contract and nothing more.
	BasePromptVersion = "1.0.0"
	// ChunkAwarePromptVersion adds guidance for a review in parts (the
	// message may hold part of a large changelist) and orders findings
	// most severe first with concrete suggestions.
	ChunkAwarePromptVersion = "1.1.0"
	// RulesPromptVersion is ChunkAwarePromptVersion plus the team-rules
	// guidance (prompt_rules.go) and the canonical schema verbatim: a
	// static part above the 1,024 tokens providers need before they cache
	// a prefix, so a review's chunks pay for it once (prompt.go, schemaSection).
	// It is the first version that carries a team's instructions.
	RulesPromptVersion = "1.2.0"

	// StablePromptVersion is the version every job gets unless a rollout
	// picks the candidate: one of the above, so promoting a version is
	// this one line.
	StablePromptVersion = BasePromptVersion

	SchemaVersion = "1.0"
)

//go:embed reviewresult.schema.json
var schemaJSON []byte

// SchemaJSON returns a copy of the embedded canonical ReviewResult schema
// (sent as the json_schema response format to providers that support it).
func SchemaJSON() []byte { return bytes.Clone(schemaJSON) }

const schemaURL = "urn:criticizer:reviewresult.schema.json"

// The schema is compiled on first use, not at init, so a cold start that
// never parses does not pay for it. The findings item schema validates each
// finding on its own, which lets the parser drop a bad finding instead of
// failing the whole response.
var schemas = sync.OnceValues(func() (top, finding *jsonschema.Schema) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err == nil {
		err = c.AddResource(schemaURL, doc)
	}
	if err == nil {
		top, err = c.Compile(schemaURL)
	}
	if err == nil {
		finding, err = c.Compile(schemaURL + "#/properties/findings/items")
	}
	if err != nil { // embedded at build time: a build defect
		panic(fmt.Sprintf("result: embedded schema does not compile: %v", err))
	}
	return top, finding
})

func topSchema() *jsonschema.Schema     { t, _ := schemas(); return t }
func findingSchema() *jsonschema.Schema { _, f := schemas(); return f }

// schemaFacts are the parts of the schema the prompt restates and the parser
// needs by name, read from the embedded schema so they cannot drift from it.
type schemaFacts struct {
	topRequired, topOptional         []string
	findingRequired, findingOptional []string
	findingFields                    map[string]bool
	enums                            map[string][]string // finding field -> allowed values
}

var factsOnce = sync.OnceValue(mustFacts)

func mustFacts() schemaFacts {
	var s struct {
		Required   []string `json:"required"`
		Properties map[string]struct {
			Items struct {
				Required   []string `json:"required"`
				Properties map[string]struct {
					Enum []string `json:"enum"`
				} `json:"properties"`
			} `json:"items"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(schemaJSON, &s); err != nil {
		panic(fmt.Sprintf("result: embedded schema: %v", err))
	}
	f := schemaFacts{
		topRequired:     s.Required,
		findingRequired: s.Properties["findings"].Items.Required,
		findingFields:   map[string]bool{},
		enums:           map[string][]string{},
	}
	f.topOptional = optional(slices.Sorted(maps.Keys(s.Properties)), f.topRequired)
	items := s.Properties["findings"].Items.Properties
	names := make([]string, 0, len(items))
	for name, p := range items {
		names = append(names, name)
		f.findingFields[name] = true
		if len(p.Enum) > 0 {
			f.enums[name] = p.Enum
		}
	}
	f.findingOptional = optional(names, f.findingRequired)
	return f
}

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
