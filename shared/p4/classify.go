package p4

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
)

// p4's generic error codes (EV_*, client API): a fallback for the patterns.
const (
	evIllegal = 0x04 // no permission
	evProtect = 0x06 // protections prevented the operation
	evFault   = 0x21 // inexplicable program fault
	evAdmin   = 0x23 // server administrative action required
	evComm    = 0x26 // communications error
)

// patterns are matched against the lower-cased message, in this order: a
// changed server key, a protections refusal, credentials, connection
// trouble, our own configuration, things that do not exist. The rows come
// from docs/reference/p4-cli.md.
var patterns = []struct {
	class failure.Class
	texts []string
	re    *regexp.Regexp
}{
	// The server's key differs from the one pinned in P4TRUST: possible
	// interception, never retried (msgs/msgrpc.cc, HostKeyMismatch;
	// reference, "Keywords, trust, tickets, edge servers").
	{failure.SecurityFailure, []string{
		"p4port identification has changed",
		"someone is intercepting your connection",
	}, nil},
	// Protections refused a file: fail closed, never retried. Both E_WARN /
	// EV_EMPTY: the reference's message table, and msgs/msgdm.cc ExPROTECT /
	// ExPROTECT2 ("[%argc% - no|No] permission for operation on file(s).").
	{failure.PolicyRejected, []string{
		"protected namespace - access denied",
		"no permission for operation on file(s)",
	}, nil},
	{failure.AuthDenied, []string{
		"password (p4passwd) invalid or unset",
		"perforce password",
		"session has expired",
		"you don't have permission",
		"access for user",
		"password invalid",
		"please login again",
	}, regexp.MustCompile(`user \S+ doesn't exist`)},
	{failure.NetworkTimeout, []string{
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
	}, nil},
	// P4CLIENT or its view is wrong: an operator must fix the deployment.
	{failure.InternalBug, []string{
		"use 'client' command to create it",
		"must refer to client",
		"file(s) not in client view",
		"file(s) not on client",
	}, nil},
	// msgs/msgdm.cc ExATREVISION ("[%argc% - no|No] file(s) at that
	// revision."): a file deleted at that revision (a removed rules file).
	{failure.NotFound, []string{
		"no such changelist",
		"no such file(s)",
		"no file(s) at that changelist number",
		"file(s) at that revision",
	}, regexp.MustCompile(`change \d+ unknown`)},
}

// classify maps a failed command to a class from what p4 said, its exit
// status (-1: killed) and the message's generic code, if any.
func classify(msg string, exitCode, generic int) failure.Class {
	m := strings.ToLower(msg)
	for _, p := range patterns {
		if slices.ContainsFunc(p.texts, func(t string) bool { return strings.Contains(m, t) }) || (p.re != nil && p.re.MatchString(m)) {
			return p.class
		}
	}
	switch generic {
	case evIllegal, evProtect:
		return failure.AuthDenied
	case evComm:
		return failure.NetworkTimeout
	case evFault, evAdmin:
		return failure.Upstream5xx
	}
	// p4 exits 1 for any failed command; a crash, a signal, another status
	// or a "server error" points at the server or the install, not at us.
	if exitCode < 0 || exitCode > 1 || strings.Contains(m, "perforce server error") {
		return failure.Upstream5xx
	}
	return failure.InternalBug
}

// maxMessage bounds p4 text in an error: enough to diagnose, too little to
// smuggle a file's content into a dead letter.
const maxMessage = 512

var (
	// p4 tickets are 32 upper-case hex digits; a client may echo one.
	ticketRe = regexp.MustCompile(`\b[0-9A-F]{32}\b`)
	// Anything that looks like "password=..." or "ticket: ..." in a message.
	credentialRe = regexp.MustCompile(`(?i)\b(passw(?:or)?d|p4passwd|ticket|token)(\s*[=:]\s*)\S+`)
)

// sanitize makes p4's text fit for an error and a log: password and
// ticket-like strings masked, control characters replaced, whitespace
// folded, truncated.
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
		text = domain.Clip(text, maxMessage) + "…(truncated)"
	}
	return text
}
