package redact

import (
	"sync"
	"testing"
)

// A cold start pays for no rule: New compiles nothing, and a rule's regexp
// is compiled only once a line holds one of its keywords.
func TestRulesCompileOnFirstUse(t *testing.T) {
	glOnce, glRules, glErr = sync.Once{}, nil, nil
	t.Cleanup(func() { glOnce, glRules, glErr = sync.Once{}, nil, nil })
	r := newRedactor(t, plainPolicy)
	if glRules != nil {
		t.Fatal("New loaded the gitleaks rules")
	}
	compiled := func() (ids []string) {
		for _, g := range glRules.rules {
			if g.re != nil {
				ids = append(ids, g.id)
			}
		}
		return ids
	}
	if _, _, err := r.Redact("func main() {\n\tfmt.Println(1)\n}\n"); err != nil {
		t.Fatal(err)
	}
	if ids := compiled(); len(ids) != 0 {
		t.Errorf("text without keywords compiled %v", ids)
	}
	if _, _, err := r.Redact("k := \"AKIAQX7N3PLV2KD5RTWE\"\n"); err != nil {
		t.Fatal(err)
	}
	ids := compiled()
	if len(ids) == 0 || len(ids) > 10 {
		t.Errorf("one AWS key line compiled %d rules: %v", len(ids), ids)
	}
	t.Logf("%d of %d gitleaks rules compiled: %v", len(ids), len(glRules.rules), ids)
}
