package webhook

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/criticizer/criticizer/shared/delivery"
)

// Diagnostic is one adjustment Parse made to a request it accepted: a
// coercion (numeric string, whitespace, address canonicalised) or a
// de-duplication, recorded in the job's history so what was asked and what
// was reviewed can be told apart. Fields and counts, never values.
type Diagnostic struct {
	Kind   string // coercion_applied | duplicates_removed
	Field  string
	Detail string // what was done, without the value
	Count  int    // how many items it concerned (list fields)
}

const (
	DiagCoercion   = "coercion_applied"
	DiagDuplicates = "duplicates_removed"
)

func (d Diagnostic) String() string {
	s := d.Kind + " " + d.Field + ": " + d.Detail
	if d.Count > 0 {
		s += fmt.Sprintf(" (%d)", d.Count)
	}
	return s
}

// diagnose compares the raw body with the request Parse made of it.
func diagnose(raw map[string]json.RawMessage, r Request) []Diagnostic {
	var out []Diagnostic
	numeric := func(obj map[string]json.RawMessage, field, name string) {
		var s string
		if json.Unmarshal(obj[field], &s) == nil {
			out = append(out, Diagnostic{Kind: DiagCoercion, Field: name, Detail: "numeric string read as an integer"})
		}
	}
	trimmed := func(obj map[string]json.RawMessage, prefix string, fields []string) {
		for _, f := range fields {
			var s string
			if json.Unmarshal(obj[f], &s) == nil && s != strings.TrimSpace(s) {
				out = append(out, Diagnostic{Kind: DiagCoercion, Field: prefix + f, Detail: "surrounding whitespace trimmed"})
			}
		}
	}
	numeric(raw, "changelist_id", "changelist_id")
	numeric(raw, "review_version", "review_version")
	trimmed(raw, "", []string{"idempotency_key", "source", "requested_by"})
	var rcpts []string
	if json.Unmarshal(raw["recipients"], &rcpts) == nil && len(rcpts) > 0 {
		changed := 0
		for _, a := range rcpts {
			if a != delivery.Canonical(a) {
				changed++
			}
		}
		if changed > 0 {
			out = append(out, Diagnostic{Kind: DiagCoercion, Field: "recipients", Detail: "addresses trimmed and lower-cased", Count: changed})
		}
		if dup := len(rcpts) - len(r.Recipients); dup > 0 {
			out = append(out, Diagnostic{Kind: DiagDuplicates, Field: "recipients", Detail: "the same mailbox listed more than once", Count: dup})
		}
	}
	var sw map[string]json.RawMessage
	if json.Unmarshal(raw["swarm"], &sw) == nil && sw != nil {
		numeric(sw, "review", "swarm.review")
		var status string
		if json.Unmarshal(sw["status"], &status) == nil && r.Swarm != nil && status != r.Swarm.Status {
			out = append(out, Diagnostic{Kind: DiagCoercion, Field: "swarm.status", Detail: "normalised to " + r.Swarm.Status})
		}
		trimmed(sw, "swarm.", []string{"update", "pass", "fail"})
	}
	return out
}
