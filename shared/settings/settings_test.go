package settings

import (
	"os"
	"strings"
	"testing"
)

// TestDocsMatchDeclaration fails when docs/configuration.md's settings tables
// differ from the declaration: edit Declared, then go generate ./shared/settings.
func TestDocsMatchDeclaration(t *testing.T) {
	b, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := Docs(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if want != string(b) {
		t.Errorf("docs/configuration.md's settings tables are not the declaration's: run go generate ./shared/settings")
	}
}

// TestEveryKeyDeclaredOnce: a key in two rows would be documented twice.
func TestEveryKeyDeclaredOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Declared {
		if s.StackVars == "" && (len(s.Keys) == 0 || s.Default == "") {
			t.Errorf("%v: every setting has a key and a default", s.Keys)
		}
		if len(s.Vars) > 0 && len(s.ReadBy) == 0 {
			t.Errorf("%v: variables %v without the functions reading them", s.Keys, s.Vars)
		}
		for _, k := range s.Keys {
			if seen[k] {
				t.Errorf("%s declared twice", k)
			}
			seen[k] = true
		}
	}
}

func TestPlaceholders(t *testing.T) {
	cases := []struct {
		p    *Placeholder
		v    string
		want bool
	}{
		{AllZero, "00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00", true},
		{AllZero, strings.Repeat("0", 64), true},
		{AllZero, "AB:CD:00:00", false},
		{AllZero, "", false},
		{ExampleDomain, "criticizer@example.com", true},
		{ExampleDomain, "ssl:perforce.example.com:1666", true},
		{ExampleDomain, "https://swarm.example.org/", true},
		{ExampleDomain, "*.corp.example.net", true},
		{ExampleDomain, "example.com", true},
		{ExampleDomain, "criticizer@studio-example.com", false},
		{ExampleDomain, "ssl:p4.studio.io:1666", false},
		{ExampleDomain, "example.company.io", false},
	}
	for _, c := range cases {
		if got := c.p.Holds(c.v); got != c.want {
			t.Errorf("%q: placeholder = %v, want %v", c.v, got, c.want)
		}
	}
}

func TestCheckNamesEveryPlaceholder(t *testing.T) {
	values := map[string][]string{
		"p4TrustFingerprint": {"00:00:00:00"},
		"smtpFrom":           {"criticizer@studio.io"},
		"recipientDomains":   {"studio.io", "example.com"},
	}
	got := Check(func(k string) []string { return values[k] })
	if len(got) != 2 || !strings.HasPrefix(got[0], "p4TrustFingerprint ") || !strings.HasPrefix(got[1], `recipientDomains "example.com"`) {
		t.Errorf("Check = %q, want the fingerprint and the example.com domain", got)
	}
}
