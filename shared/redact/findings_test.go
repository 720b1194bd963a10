package redact

import (
	"slices"
	"testing"
)

func TestTokenRulesAndSecretSeverity(t *testing.T) {
	red, err := New(Policy{RedactEmails: true})
	if err != nil {
		t.Fatal(err)
	}
	// What the redactor leaves is what TokenRules reads: the round trip.
	out, ms, err := red.Redact(`key := "AKIAQX7N3PLV2KD5RTWE" // owner alice@example.com`)
	if err != nil || len(ms) != 2 {
		t.Fatalf("redact: %q %v %v", out, ms, err)
	}
	if got := TokenRules(out); !slices.Equal(got, []string{"aws-access-token", "email"}) {
		t.Errorf("TokenRules(%q) = %v", out, got)
	}
	if got := TokenRules("[REDACTED:x] and [REDACTED:x] [redacted:y] [REDACTED:]"); !slices.Equal(got, []string{"x"}) {
		t.Errorf("TokenRules = %v", got)
	}
	for rule, want := range map[string]string{
		"aws-access-token": "critical", "pem-private-key": "critical", "private-key": "critical", "github-pat": "critical",
		"gcp-api-key": "critical", "generic-api-key": "high", "password-assignment": "high", "uri-credentials": "high",
		"slack-bot-token": "high", "email": "", "internal-host": "", "internal-ip": "",
	} {
		sev, ok := SecretSeverity(rule)
		if sev != want || ok != (want != "") {
			t.Errorf("SecretSeverity(%s) = %q %v, want %q", rule, sev, ok, want)
		}
	}
}

// Every rule's token reads back as its rule: the token regexp's character
// class holds every id, ours and gitleaks', so a committed secret is never
// lost as a finding because its rule id has a character the class lacks.
func TestEveryRuleTokenReadsBack(t *testing.T) {
	red, err := New(Policy{RedactEmails: true, ConfidentialDomains: []string{"corp.example.com"}, ConfidentialCIDRs: []string{"10.0.0.0/8"}, BareSecrets: true})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := red.index()
	if err != nil {
		t.Fatal(err)
	}
	if len(ix.dets) < 200 {
		t.Fatalf("%d rules: want gitleaks' as well as ours", len(ix.dets))
	}
	for _, d := range ix.dets {
		if got := TokenRules("x [REDACTED:" + d.id + "] y"); !slices.Equal(got, []string{d.id}) {
			t.Errorf("rule %q: its token reads back as %v", d.id, got)
		}
	}
}
