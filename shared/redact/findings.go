package redact

import (
	"regexp"
	"slices"
	"strings"
)

// What the redactor removed is known for certain before any model is
// called: a secret committed to the depot is a finding the pipeline states
// itself (shared/result turns these into findings). Only the rule id and the
// place are exported, never the secret or any part of it.

// tokenRE matches the token writeToken leaves in place of a secret.
var tokenRE = regexp.MustCompile(`\[REDACTED:([a-z0-9][a-z0-9._-]*)\]`)

// TokenRules returns the rule ids of the redaction tokens in line of
// redacted text, in order, each once.
func TokenRules(line string) []string {
	if !strings.Contains(line, "[REDACTED:") {
		return nil
	}
	var out []string
	for _, m := range tokenRE.FindAllStringSubmatch(line, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// notSecret are the rules that remove confidential but non-secret text
// (de-identification, internal names): redacted, but nothing was leaked
// that rotating a credential would fix.
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
// "critical" for private keys and infrastructure, source-control and
// registry credentials, "high" for every other secret. ok is false for the
// rules that redact non-secret confidential text (e-mail addresses,
// internal host names and addresses), which are not findings.
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
