package redact

import (
	"slices"
	"strings"
)

// A secret committed to the depot is a finding the pipeline states itself
// (shared/result): only the rule id and place leave, never the secret.

// TokenRules returns the rule ids of the redaction tokens in line of
// redacted text, in order, each once.
func TokenRules(line string) []string {
	if !strings.Contains(line, "[REDACTED:") {
		return nil
	}
	var out []string
	for _, m := range tokenRe().FindAllStringSubmatch(line, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// notSecret are the rules for confidential but non-secret text: nothing
// leaked that rotating a credential would fix.
var notSecret = map[string]bool{"email": true, "internal-host": true, "internal-ip": true}

// criticalPrefixes name the classes whose leak gives direct access to
// infrastructure, source or publishing: private keys, cloud provider
// credentials, source-control and package-registry tokens.
var criticalPrefixes = []string{
	"aws-", "gcp-", "azure-", "alibaba-", "digitalocean-",
	"github-", "gitlab-", "bitbucket-",
	"npm-access-token", "pypi-upload-token", "rubygems-api-token",
}

// SecretSeverity is the severity of a committed secret found by rule:
// "critical" for private keys and criticalPrefixes, "high" otherwise; ok is
// false for notSecret rules, which are not findings.
func SecretSeverity(rule string) (severity string, ok bool) {
	if notSecret[rule] {
		return "", false
	}
	if strings.Contains(rule, "private-key") || rule == "pkcs12-file" || rule == "age-secret-key" {
		return "critical", true
	}
	for _, p := range criticalPrefixes {
		if strings.HasPrefix(rule, p) {
			return "critical", true
		}
	}
	return "high", true
}
