package settings

import (
	"math"
	"os"
	"strconv"
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

// TestAcceptsWellFormed: a declared choice's default is one of its choices,
// a number's default is a number and its range is not empty, and each
// variable is declared once (the loaders read the first declaration only).
func TestAcceptsWellFormed(t *testing.T) {
	vars := map[string]bool{}
	for _, s := range Declared {
		a := s.Accepts
		switch a.Kind {
		case Choice:
			if err := a.Check(a.Default); err != nil {
				t.Errorf("%v: default %q %v", s.Keys, a.Default, err)
			}
		case Integer, Number:
			if _, err := strconv.ParseFloat(a.Default, 64); err != nil || a.Min > a.Max {
				t.Errorf("%v: default %q or range %s is not a number's", s.Keys, a.Default, a.Span())
			}
		}
		if a.Kind != Text && len(s.Keys) == 0 && len(s.Vars) == 0 {
			t.Errorf("a row accepts %v but names neither a key nor a variable", a)
		}
		for _, v := range s.Vars {
			if vars[v] {
				t.Errorf("%s declared twice", v)
			}
			vars[v] = true
		}
	}
}

func TestAcceptsCheck(t *testing.T) {
	cases := []struct {
		a       Accepts
		v, want string // want "" = accepted
	}{
		{Int(60, 5, 900), "5", ""},
		{Int(60, 5, 900), " 900 ", ""},
		{Int(60, 5, 900), "4", "must be an integer in 5–900"},
		{Int(60, 5, 900), "60.5", "must be an integer in 5–900"},
		{Float(0, 1, 16), "3.5", ""},
		{Float(0, 1, 16), "16.01", "must be a number in 1–16"},
		{FloatBelow(0.05, 0, 1), "0", ""},
		{FloatBelow(0.05, 0, 1), "0.999", ""},
		{FloatBelow(0.05, 0, 1), "1", "must be a number from 0 to below 1"},
		{FloatBelow(0.05, 0, 1), "-0.01", "must be a number from 0 to below 1"},
		{IntAtLeast(30, 0), "0", ""},
		{IntAtLeast(30, 0), "9000000000", ""},
		{IntAtLeast(30, 0), "-1", "must be an integer, at least 0"},
		{IntOrZero(365, 365, 36500), "0", ""},
		{IntOrZero(365, 365, 36500), "365", ""},
		{IntOrZero(365, 365, 36500), "364", "must be an integer, 0 or 365–36500"},
		{IntOrZero(365, 365, 36500), "36501", "must be an integer, 0 or 365–36500"},
		{IntOrZero(0, 10, math.MaxInt), "1", "must be an integer, 0 or at least 10"},
		{Bool(false), "true", ""},
		{Bool(false), "1", "must be true or false"},
		{Enum("smtp", "smtp", "ses"), "ses", ""},
		{Enum("smtp", "smtp", "ses"), "SES", "must be one of smtp, ses"},
		{Str("x"), "anything", ""},
	}
	for _, c := range cases {
		err := c.a.Check(c.v)
		if (c.want == "") != (err == nil) || (err != nil && err.Error() != c.want) {
			t.Errorf("%+v.Check(%q) = %v, want %q", c.a, c.v, err, c.want)
		}
	}
}

// TestStackNamesDocumented: each name a *stack* row lets the functions read
// (config.Reader's Stack) is in that row's docs text, by name or as
// `<STAGE>_…`, is declared once, and is no setting's variable.
func TestStackNamesDocumented(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Declared {
		for _, n := range s.Names {
			stage, _, _ := strings.Cut(n, "_")
			if !strings.Contains(s.StackVars, "`"+n+"`") && !strings.Contains(s.StackVars, "`<STAGE>"+strings.TrimPrefix(n, stage)+"`") {
				t.Errorf("stack name %s is not in its row's text %q", n, s.StackVars)
			}
			if _, ok := Variable(n); ok || seen[n] {
				t.Errorf("stack name %s declared twice", n)
			}
			seen[n] = true
		}
	}
}
