package settings

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Placeholder says why a value only holds a place ("" when it does not).
// Outside local, synth refuses a setting whose value (or any element of its
// list) is one: such a value passes every other check and fails the first job.
type Placeholder func(value string) (why string)

// AllZero refuses a checksum or fingerprint of zeros only: the checked-in
// stand-in for the real one (p4LayerSha256, p4TrustFingerprint).
func AllZero(v string) string {
	if v != "" && strings.Trim(v, "0:") == "" {
		return "all zeros is a placeholder"
	}
	return ""
}

// exampleDomainRe matches a host or address in a domain RFC 2606 reserves
// for documentation (example.com, .net, .org and their subdomains): no mail
// is delivered there and no server answers.
var exampleDomainRe = regexp.MustCompile(`(?i)(^|[@./:*])example\.(com|net|org)($|[:/])`)

// ExampleDomain refuses a host, URL, address or domain in a reserved example
// domain.
func ExampleDomain(v string) string {
	if exampleDomainRe.MatchString(v) {
		return "example.com, .net and .org are reserved for documentation (RFC 2606)"
	}
	return ""
}

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
				if why := s.Placeholder(v); why != "" {
					out = append(out, k+" "+strconv.Quote(v)+": "+why+"; give the real value (docs/configuration.md)")
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// Samples are the declared real-shaped values, by key: laid over a checked-in
// environment, they replace its placeholders so tests can synthesize it.
func Samples() map[string]any {
	out := map[string]any{}
	for _, s := range Declared {
		if s.Sample != nil {
			out[s.Keys[0]] = s.Sample
		}
	}
	return out
}
