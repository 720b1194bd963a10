// Package result owns the result contract with the LLM (rules RC-1..RC-5,
// docs/guarantees.md): the versioned prompt that asks for a ReviewResult,
// and the parser that turns a model's answer into a validated
// domain.ReviewResult and diagnostics. The embedded schema
// (reviewresult.schema.json) is the one source of field names, types and
// enums; changing a version follows the rollout order (parser, then prompt).
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

// Versions pinned by this build, each prompt version named for what its text
// adds. A canary serves the configured candidate (PROMPT_CANDIDATE_VERSION,
// see Rollout), any of these by value; the parser accepts all of them.
const (
	// BasePromptVersion states the output contract and nothing more.
	BasePromptVersion = "1.0.0"
	// ChunkAwarePromptVersion adds guidance for a review in parts, and
	// findings most severe first with concrete suggestions.
	ChunkAwarePromptVersion = "1.1.0"
	// RulesPromptVersion adds the team-rules guidance (prompt_rules.go) and
	// the schema verbatim, a static prefix providers cache (schemaSection).
	RulesPromptVersion = "1.2.0"

	// StablePromptVersion is every job's unless a rollout picks the
	// candidate: promoting a version is this one line.
	StablePromptVersion = BasePromptVersion

	SchemaVersion = "1.0"
)

//go:embed reviewresult.schema.json
var schemaJSON []byte

// SchemaJSON returns a copy of the embedded schema (the json_schema
// response format, where providers support it).
func SchemaJSON() []byte { return bytes.Clone(schemaJSON) }

const schemaURL = "urn:criticizer:reviewresult.schema.json"

// The schema is compiled on first use, not at init, so a cold start that
// never parses does not pay for it. The findings item schema validates each
// finding on its own, which lets the parser drop a bad finding instead of
// failing the whole response.
var schemas = sync.OnceValue(func() []*jsonschema.Schema {
	return compileSchema("schema", schemaJSON, schemaURL, "", "#/properties/findings/items")
})

func topSchema() *jsonschema.Schema     { return schemas()[0] }
func findingSchema() *jsonschema.Schema { return schemas()[1] }

// compileSchema compiles the embedded schema raw, registered at url, at
// each of the fragments of it; name says which schema a panic is about.
func compileSchema(name string, raw []byte, url string, fragments ...string) []*jsonschema.Schema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err == nil {
		err = c.AddResource(url, doc)
	}
	out := make([]*jsonschema.Schema, len(fragments))
	for i, f := range fragments {
		if err == nil {
			out[i], err = c.Compile(url + f)
		}
	}
	if err != nil { // embedded at build time: a build defect
		panic(fmt.Sprintf("result: embedded %s does not compile: %v", name, err))
	}
	return out
}

// schemaFacts are the parts of the schema the prompt and parser need by
// name, read from it so they cannot drift.
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
		topRequired:     byFieldOrder(s.Required),
		findingRequired: byFieldOrder(s.Properties["findings"].Items.Required),
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

// optional returns the names in all (which it reuses) not in required, in fieldOrder.
func optional(all, required []string) []string {
	return byFieldOrder(slices.DeleteFunc(all, func(n string) bool { return slices.Contains(required, n) }))
}

// byFieldOrder returns names sorted in fieldOrder.
func byFieldOrder(names []string) []string {
	return slices.SortedFunc(slices.Values(names), func(a, b string) int { return fieldRank(a) - fieldRank(b) })
}

// fieldOrder is the schema's field order (rule RC-1), which prompts keep.
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

// digest is a short fingerprint for logs: enough to correlate, too short to recover.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:6])
}
