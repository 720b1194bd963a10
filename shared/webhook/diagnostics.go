package webhook

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/criticizer/criticizer/shared/delivery"
)

// Diagnostic is one adjustment Parse made to a request it accepted: a
// coercion (a numeric string read as a number, whitespace trimmed, an
// address canonicalised) or a de-duplication. Each is recorded in the new
// job's history, so that what was asked and what was reviewed can be told
// apart. It names fields and counts, never values (addresses are personal).
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
	numeric(raw, "changelist_id", "changelist_id")
	numeric(raw, "review_version", "review_version")
	for _, f := range []string{"idempotency_key", "source", "requested_by"} {
		var s string
		if json.Unmarshal(raw[f], &s) == nil && s != strings.TrimSpace(s) {
			out = append(out, Diagnostic{Kind: DiagCoercion, Field: f, Detail: "surrounding whitespace trimmed"})
		}
	}
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
		for _, f := range []string{"update", "pass", "fail"} {
			var u string
			if json.Unmarshal(sw[f], &u) == nil && u != strings.TrimSpace(u) {
				out = append(out, Diagnostic{Kind: DiagCoercion, Field: "swarm." + f, Detail: "surrounding whitespace trimmed"})
			}
		}
	}
	return out
}
