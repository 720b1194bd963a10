package redact

import (
	"strings"
	"testing"
)

// mapConfig is a function's environment as the policy reads it.
type mapConfig map[string]string

func (m mapConfig) Optional(name, def string) string {
	if v, ok := m[name]; ok {
		return v
	}
	return def
}

func (m mapConfig) List(name string) []string {
	if m[name] == "" {
		return nil
	}
	return strings.Split(m[name], ",")
}

// Rule RD-1: the per-environment policy (REDACT_EMAILS,
// CONFIDENTIAL_DOMAINS, CONFIDENTIAL_CIDRS, set from cdk.json) is what the
// fetch and llm stages redact with: an environment that asks for
// de-identification gets it, one that does not keeps addresses.
func TestPolicyFromConfig(t *testing.T) {
	const text = "mail alice@example.org about build.corp.example.com at 10.1.2.3"
	tests := []struct {
		name string
		env  mapConfig
		gone []string
		kept []string
	}{
		{name: "de-identification on", env: mapConfig{"REDACT_EMAILS": "true", "CONFIDENTIAL_DOMAINS": "corp.example.com", "CONFIDENTIAL_CIDRS": "10.0.0.0/8"},
			gone: []string{"alice@example.org", "build.corp.example.com", "10.1.2.3"}},
		{name: "off by default", env: mapConfig{}, kept: []string{"alice@example.org", "build.corp.example.com", "10.1.2.3"}},
		{name: "explicitly off", env: mapConfig{"REDACT_EMAILS": "false"}, kept: []string{"alice@example.org"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := New(PolicyFromConfig(tt.env))
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
