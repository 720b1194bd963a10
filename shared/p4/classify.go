package p4

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/criticizer/criticizer/shared/failure"
)

// p4's generic error codes (EV_*), from the client API. They back up the
// text patterns when a marshalled error record carries one.
const (
	evIllegal = 0x04 // no permission
	evProtect = 0x06 // protections prevented the operation
	evFault   = 0x21 // inexplicable program fault
	evAdmin   = 0x23 // server administrative action required
	evComm    = 0x26 // communications error
)

// Patterns are matched against the lower-cased message, in this order: a
// changed server key (a security failure), a protections refusal is a policy matter (fail closed, never retried), then
// credentials, then client-side connection trouble, then our own
// configuration, then things that do not exist. The rows come from
// docs/reference/p4-cli.md.
var (
	// The server's key differs from the fingerprint pinned in P4TRUST: a
	// possible interception, never a network fault to retry (the client
	// source's msgs/msgrpc.cc, HostKeyMismatch; reference, "Keywords, trust,
	// tickets, edge servers").
	securityPatterns = []string{
		"p4port identification has changed",
		"someone is intercepting your connection",
	}
	// The server's protections refused a file: fail closed, never retried
	// (a re-login cannot change protections). Both are E_WARN / EV_EMPTY
	// (severity 2, generic 17): "protected namespace" as the reference's
	// message table records it, and the client source's message catalog
	// msgs/msgdm.cc ExPROTECT / ExPROTECT2 ("[%argc% - no|No] permission
	// for operation on file(s).").
	policyPatterns = []string{
		"protected namespace - access denied",
		"no permission for operation on file(s)",
	}
	authPatterns = []string{
		"password (p4passwd) invalid or unset",
		"perforce password",
		"session has expired",
		"you don't have permission",
		"access for user",
		"password invalid",
		"please login again",
	}
	networkPatterns = []string{
		"perforce client error:",
		"can't be established", // ssl: server not (yet) in P4TRUST
		"tcp connect",
		"connection refused",
		"connect to server failed",
		"connection reset",
		"tcp receive failed",
		"tcp send failed",
		"ssl receive failed",
		"ssl send failed",
		"partner exited unexpectedly",
		"timed out",
		"timeout",
		"no route to host",
		"network is unreachable",
		"name or service not known",
		"temporary failure in name resolution",
	}
	// The service's P4CLIENT or its view is wrong: an operator must fix the
	// deployment, a retry cannot.
	configPatterns = []string{
		"use 'client' command to create it",
		"must refer to client",
		"file(s) not in client view",
		"file(s) not on client",
	}
	// msgs/msgdm.cc: ExATREVISION ("[%argc% - no|No] file(s) at that
	// revision.", E_WARN / EV_EMPTY), what a file deleted at the revision
	// asked for may answer (a removed rules file: none is read).
	notFoundPatterns = []string{
		"no such changelist",
		"no such file(s)",
		"no file(s) at that changelist number",
		"file(s) at that revision",
	}
	notFoundRe = regexp.MustCompile(`change \d+ unknown`)
	noUserRe   = regexp.MustCompile(`user \S+ doesn't exist`)
)

// classify maps a failed command to an error class from what p4 said (a
// server message's text, or the client's stderr), its exit status (-1 when
// killed by a signal) and the message's generic code, if any.
func classify(msg string, exitCode, generic int) failure.Class {
	m := strings.ToLower(msg)
	switch {
	case containsAny(m, securityPatterns):
		return failure.SecurityFailure
	case containsAny(m, policyPatterns):
		return failure.PolicyRejected
	case containsAny(m, authPatterns) || noUserRe.MatchString(m):
		return failure.AuthDenied
	case containsAny(m, networkPatterns):
		return failure.NetworkTimeout
	case containsAny(m, configPatterns):
		return failure.InternalBug
	case containsAny(m, notFoundPatterns) || notFoundRe.MatchString(m):
		return failure.NotFound
	}
	switch generic {
	case evIllegal, evProtect:
		return failure.AuthDenied
	case evComm:
		return failure.NetworkTimeout
	case evFault, evAdmin:
		return failure.Upstream5xx
	}
	// p4 exits 1 for any failed command; a crash, a signal or an exit status
	// it never uses points at the server or the client install, not at our
	// arguments. So does an error the client explicitly attributes to the server.
	if exitCode < 0 || exitCode > 1 || strings.Contains(m, "perforce server error") {
		return failure.Upstream5xx
	}
	return failure.InternalBug
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// maxMessage bounds the p4 text carried in an error: enough to diagnose,
// not enough to smuggle a file's content into a dead-letter payload.
const maxMessage = 512

var (
	// p4 tickets are 32 upper-case hex digits; a client may echo one.
	ticketRe = regexp.MustCompile(`\b[0-9A-F]{32}\b`)
	// Anything that looks like "password=..." or "ticket: ..." in a message.
	credentialRe = regexp.MustCompile(`(?i)\b(passw(?:or)?d|p4passwd|ticket|token)(\s*[=:]\s*)\S+`)
)

// sanitize makes p4's stderr (or error records) fit for an error message and
// a log: the configured password and ticket-like strings masked, control
// characters other than newline and tab replaced, whitespace runs folded, and
// the result truncated.
func sanitize(text, password string) string {
	if password != "" {
		text = strings.ReplaceAll(text, password, "[REDACTED]")
	}
	text = ticketRe.ReplaceAllString(text, "[REDACTED]")
	text = credentialRe.ReplaceAllString(text, "${1}${2}[REDACTED]")
	text = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return ' '
		}
		if unicode.IsControl(r) || r == utf8.RuneError {
			return '?'
		}
		return r
	}, text)
	text = strings.Join(strings.Fields(text), " ")
	if len(text) > maxMessage {
		cut := maxMessage
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut] + "…(truncated)"
	}
	return text
}
