package redact

import (
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/config"
)

// Rule RD-1: the per-environment policy (REDACT_EMAILS,
// CONFIDENTIAL_DOMAINS, CONFIDENTIAL_CIDRS, set from cdk.json) is what the
// fetch and llm stages redact with: an environment that asks for
// de-identification gets it, one that does not keeps addresses.
func TestPolicyFromConfig(t *testing.T) {
	const text = "mail alice@example.org about build.corp.example.com at 10.1.2.3"
	tests := []struct {
		name string
		env  map[string]string
		gone []string
		kept []string
	}{
		{name: "de-identification on", env: map[string]string{"REDACT_EMAILS": "true", "CONFIDENTIAL_DOMAINS": "corp.example.com", "CONFIDENTIAL_CIDRS": "10.0.0.0/8"},
			gone: []string{"alice@example.org", "build.corp.example.com", "10.1.2.3"}},
		// The declared default (shared/settings): addresses are redacted unless the environment says not.
		{name: "addresses by default", env: map[string]string{}, gone: []string{"alice@example.org"}, kept: []string{"build.corp.example.com", "10.1.2.3"}},
		{name: "explicitly off", env: map[string]string{"REDACT_EMAILS": "false"}, kept: []string{"alice@example.org"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := New(PolicyFromConfig(config.NewReaderFrom(tt.env)))
			if err != nil {
				t.Fatal(err)
			}
			out, _, err := r.Redact(text)
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range tt.gone {
				if strings.Contains(out, g) {
					t.Errorf("%q survived redaction under %v: %s", g, tt.env, out)
				}
			}
			for _, k := range tt.kept {
				if !strings.Contains(out, k) {
					t.Errorf("%q redacted though the policy %v does not ask for it: %s", k, tt.env, out)
				}
			}
		})
	}
}
