package settings

import (
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Placeholder is a kind of value that only holds a place. Outside local,
// synth refuses a setting whose value (or any element of its list) is one:
// such a value passes every other check and fails the first job. Doc says
// what is refused, in the docs' table and synth's error.
type Placeholder struct {
	Doc   string
	Holds func(value string) bool
}

// AllZero is a checksum or fingerprint of zeros only: the checked-in stand-in
// for the real one (p4LayerSha256, p4TrustFingerprint).
var AllZero = &Placeholder{Doc: "all zeros", Holds: func(v string) bool {
	return v != "" && strings.Trim(v, "0:") == ""
}}

// exampleDomainRe matches a host or address in a domain RFC 2606 reserves
// for documentation (example.com, .net, .org and their subdomains): no mail
// is delivered there and no server answers.
var exampleDomainRe = regexp.MustCompile(`(?i)(^|[@./:*])example\.(com|net|org)($|[:/])`)

// ExampleDomain is a host, URL, address or domain in a reserved example domain.
var ExampleDomain = &Placeholder{Doc: "a name in example.com, .net or .org (reserved for documentation, RFC 2606)", Holds: exampleDomainRe.MatchString}

// Check returns, for each declared setting with a placeholder, the values of
// it that are placeholders, as `key "value": why`, sorted. value gives a key's value
// (a string, or the elements of a list) as cdk.json holds it.
func Check(value func(key string) []string) []string {
	var out []string
	for _, s := range Declared {
		if s.Placeholder == nil {
			continue
		}
		for _, k := range s.Keys {
			for _, v := range value(k) {
				if s.Placeholder.Holds(v) {
					out = append(out, k+" "+strconv.Quote(v)+": a placeholder, refused outside local: "+s.Placeholder.Doc+"; give the real value (docs/configuration.md)")
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// SamplesUnder is overrides with the declared samples under them (the
// declared real-shaped values, by key): laid over a checked-in environment,
// they replace its placeholders so tests can synthesize it; a sample for
// every key overrides does not give.
func SamplesUnder(overrides map[string]any) map[string]any {
	out := map[string]any{}
	for _, s := range Declared {
		if s.Sample != nil {
			out[s.Keys[0]] = s.Sample
		}
	}
	maps.Copy(out, overrides)
	return out
}
