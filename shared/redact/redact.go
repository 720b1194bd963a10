// Package redact owns the redaction of everything Criticizer sends to an LLM:
// a deterministic pass that replaces secrets and confidential identifiers in
// changelist descriptions and diffs with "[REDACTED:<rule-id>]" tokens.
//
// Detection combines the default rule set of gitleaks
// (github.com/zricethezav/gitleaks/v8, used as a library: about 220 rules for
// known token formats and generic high-entropy keys) with the classes the
// rule RD-1 (docs/guarantees.md) requires that gitleaks does not cover, or not reliably:
//
//	password-assignment  password/passphrase/secret assignments in code and
//	                     config: quoted literals after = : := == => and bare
//	                     config values (password=hunter2), XML elements, SQL
//	                     IDENTIFIED BY '…'
//	pem-private-key      PEM/PGP private key blocks, also when truncated (a
//	                     BEGIN line with no END)
//	uri-credentials      user:password@ in any URI (smtp://, postgres://, …)
//	smtp-auth            AUTH PLAIN/LOGIN/XOAUTH2 payloads in SMTP transcripts
//	bearer-token         Authorization headers and Bearer/Basic credentials
//	email                e-mail addresses, when Policy.RedactEmails
//	internal-host        host names under Policy.ConfidentialDomains
//	internal-ip          addresses inside Policy.ConfidentialCIDRs
//
// What is deliberately not redacted (each has a negative test): code that
// only names a password (password := flag.String("password", "", "…"),
// Password: cfg.Password, def login(password: str)), placeholders
// (${DB_PASSWORD}, {{ .Values.pw }}, %s, <password>), UUIDs, version strings,
// commit hashes and lockfile integrity hashes that gitleaks itself does not
// flag, and prose such as "uses Bearer authentication". Depot paths are not
// redacted either: review findings are reconciled against them.
//
// Output keeps the line structure: a replacement never removes or adds a
// newline, so line numbers in a redacted diff are the original ones. A secret
// spanning lines (a PEM block) becomes one token per line, keeping each
// line's leading diff marker (+, - or space) and indentation. Every
// occurrence of a detected secret value of eight or more bytes is redacted,
// not just the one a rule matched, so a key repeated elsewhere in the diff
// does not survive. Redaction runs to a fixed point: the output is rescanned
// and must come back clean, so Redact(Redact(x)) == Redact(x).
//
// gitleaks' in-band opt-out ("gitleaks:allow" comments) is ignored: whether
// a secret leaves the building is not the author's call.
package redact

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"

	"github.com/criticizer/criticizer/shared/failure"
)

// Policy says which confidential, non-secret information to remove as well.
type Policy struct {
	RedactEmails        bool     // replace e-mail addresses (de-identification)
	ConfidentialDomains []string // host names equal to or under these suffixes, e.g. "corp.example.com"
	ConfidentialCIDRs   []string // IP addresses inside these prefixes, e.g. "10.0.0.0/8", "fd00::/8"
}

// Match records one redaction: which rule fired and on which line (1-based,
// of the input). It never carries the redacted text.
type Match struct {
	Rule string
	Line int
}

// Redactor applies a Policy. It is safe for concurrent use.
type Redactor struct {
	rules        []rule
	redactEmails bool
}

// rule finds the byte ranges of text to replace.
type rule struct {
	id   string
	find func(text string) []span
}

// span is a byte range [start, end) of text to replace, and the rule that
// asked for it. multiline spans are never searched for elsewhere.
type span struct {
	start, end int
	rule       string
}

// maxPasses bounds the fixed-point iteration; real input converges after one
// rescan, and hitting the bound means a rule misbehaves, which must block.
const maxPasses = 4

// New builds a Redactor for p. It fails on an invalid policy entry and when
// the gitleaks rule set cannot be loaded.
func New(p Policy) (*Redactor, error) {
	gl, err := loadGitleaks()
	if err != nil {
		return nil, failure.Wrap(failure.InternalBug, fmt.Errorf("redact: loading gitleaks rules: %w", err))
	}
	r := &Redactor{redactEmails: p.RedactEmails, rules: []rule{
		{"gitleaks", gl.find},
		{"password-assignment", byLine(anyOf("pass", "pwd", "secret", "identified"), findPasswordAssignments)},
		{"pem-private-key", findPEMKeys},
		{"uri-credentials", byLine(allOf("://", "@"), findURICredentials)},
		{"smtp-auth", byLine(anyOf("auth"), findSMTPAuth)},
		{"bearer-token", byLine(anyOf("bearer", "basic", "authorization"), findBearerTokens)},
	}}
	if p.RedactEmails {
		r.rules = append(r.rules, rule{"email", byLine(anyOf("@"), findEmails)})
	}
	if len(p.ConfidentialDomains) > 0 {
		f, err := hostFinder(p.ConfidentialDomains)
		if err != nil {
			return nil, failure.Wrap(failure.InternalBug, fmt.Errorf("redact: policy: %w", err))
		}
		var suffixes []string
		for _, d := range p.ConfidentialDomains {
			suffixes = append(suffixes, strings.Trim(strings.ToLower(strings.TrimSpace(d)), "."))
		}
		r.rules = append(r.rules, rule{"internal-host", byLine(anyOf(suffixes...), f)})
	}
	if len(p.ConfidentialCIDRs) > 0 {
		prefixes := make([]netip.Prefix, 0, len(p.ConfidentialCIDRs))
		for _, c := range p.ConfidentialCIDRs {
			pfx, err := netip.ParsePrefix(strings.TrimSpace(c))
			if err != nil {
				return nil, failure.Wrap(failure.InternalBug, fmt.Errorf("redact: policy: confidential CIDR %q: %w", c, err))
			}
			prefixes = append(prefixes, pfx.Masked())
		}
		r.rules = append(r.rules, rule{"internal-ip", byLine(mayHoldIP, ipFinder(prefixes))})
	}
	return r, nil
}

// Redact returns text with every detected secret replaced by
// "[REDACTED:<rule-id>]", and what was replaced where. An error means the
// text could not be vetted and must not be sent anywhere.
func (r *Redactor) Redact(text string) (string, []Match, error) {
	if text == "" {
		return "", nil, nil
	}
	out := text
	var matches []Match
	for pass := 0; pass < maxPasses; pass++ {
		spans, err := r.scan(out)
		if err != nil {
			return "", nil, failure.Wrap(failure.InternalBug, fmt.Errorf("redact: %w", err))
		}
		if len(spans) == 0 {
			return out, dedupe(matches), nil
		}
		// Replacements keep every newline, so line numbers of later passes
		// are still the input's.
		lines := lineStarts(out)
		for _, s := range spans {
			matches = append(matches, Match{Rule: s.rule, Line: lineOf(lines, s.start) + 1})
		}
		out = apply(out, spans)
	}
	return "", nil, failure.Errorf(failure.InternalBug, "redact: output still matches after %d passes", maxPasses)
}

// scan runs every rule and returns the spans to replace, merged and sorted.
func (r *Redactor) scan(text string) (spans []span, err error) {
	defer func() {
		// A detector that panics on hostile input must block the
		// submission, not crash the stage.
		if p := recover(); p != nil {
			spans, err = nil, fmt.Errorf("detector panic: %v", p)
		}
	}()
	for _, rl := range r.rules {
		for _, s := range rl.find(text) {
			if s.rule == "" {
				s.rule = rl.id
			}
			if s = trim(text, s); s.start < s.end {
				spans = append(spans, s)
			}
		}
	}
	spans = append(spans, repeats(text, spans)...)
	return merge(dropInsideTokens(text, spans)), nil
}

// minRepeat is the shortest secret value searched for elsewhere in the text;
// shorter values are too likely to be ordinary substrings.
const minRepeat = 8

// repeats finds further occurrences of single-line secret values.
func repeats(text string, spans []span) []span {
	var out []span
	seen := map[string]bool{}
	for _, s := range spans {
		switch s.rule {
		case "email", "internal-host", "internal-ip":
			continue // their rules already find every occurrence
		}
		v := text[s.start:s.end]
		if len(v) < minRepeat || strings.Contains(v, "\n") || seen[v] {
			continue
		}
		seen[v] = true
		for i := 0; ; {
			j := strings.Index(text[i:], v)
			if j < 0 {
				break
			}
			out = append(out, span{i + j, i + j + len(v), s.rule})
			i += j + len(v)
		}
	}
	return out
}

// tokenRe matches the replacement tokens this package writes.
var tokenRe = regexp.MustCompile(`\[REDACTED:[a-z0-9-]+\]`)

// dropInsideTokens discards spans that lie entirely within an existing
// token, so a rescan of redacted text does not redact the redaction.
func dropInsideTokens(text string, spans []span) []span {
	if !strings.Contains(text, "[REDACTED:") {
		return spans
	}
	tokens := tokenRe.FindAllStringIndex(text, -1)
	return slices.DeleteFunc(spans, func(s span) bool {
		for _, t := range tokens {
			if s.start >= t[0] && s.end <= t[1] {
				return true
			}
		}
		return false
	})
}

// trim shrinks a span to exclude surrounding whitespace, so a token never
// swallows a newline or indentation.
func trim(text string, s span) span {
	s.start = max(0, min(s.start, len(text)))
	s.end = max(s.start, min(s.end, len(text)))
	for s.start < s.end && isSpace(text[s.start]) {
		s.start++
	}
	for s.end > s.start && isSpace(text[s.end-1]) {
		s.end--
	}
	return s
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// merge sorts spans and joins overlapping ones. The earliest, then longest,
// then alphabetically first rule names the merged span, so the result does
// not depend on the order rules ran in.
func merge(spans []span) []span {
	if len(spans) == 0 {
		return nil
	}
	slices.SortFunc(spans, func(a, b span) int {
		if a.start != b.start {
			return a.start - b.start
		}
		if a.end != b.end {
			return b.end - a.end
		}
		return strings.Compare(a.rule, b.rule)
	})
	out := []span{spans[0]}
	for _, s := range spans[1:] {
		last := &out[len(out)-1]
		if s.start < last.end {
			last.end = max(last.end, s.end)
			continue
		}
		out = append(out, s)
	}
	return out
}

// apply replaces sorted, disjoint spans with tokens, line by line.
func apply(text string, spans []span) string {
	var b strings.Builder
	b.Grow(len(text))
	prev := 0
	for _, s := range spans {
		b.WriteString(text[prev:s.start])
		lineStart := strings.LastIndexByte(text[:s.start], '\n') + 1
		diff := lineStart < s.start && strings.IndexByte("+- ", text[lineStart]) >= 0
		writeToken(&b, text[s.start:s.end], s.rule, diff)
		prev = s.end
	}
	b.WriteString(text[prev:])
	return b.String()
}

// What a line inside a multiline span keeps: indentation and, when the span
// starts on a diff line, the line's diff marker; neither is secret. Telling
// the two cases apart matters because a PEM armor line also starts with "-".
var (
	indentPrefix   = regexp.MustCompile(`^[ \t]*`)
	diffLinePrefix = regexp.MustCompile(`^[+\- ]?[ \t]*`)
)

func writeToken(b *strings.Builder, secret, rule string, diff bool) {
	token := "[REDACTED:" + rule + "]"
	prefix := indentPrefix
	if diff {
		prefix = diffLinePrefix
	}
	for i, line := range strings.Split(secret, "\n") {
		if i > 0 {
			b.WriteByte('\n')
			p := prefix.FindString(line)
			b.WriteString(p)
			line = line[len(p):]
		}
		cr := strings.HasSuffix(line, "\r")
		if strings.TrimSpace(line) != "" {
			b.WriteString(token)
		}
		if cr {
			b.WriteByte('\r')
		}
	}
}

func lineStarts(text string) []int {
	starts := []int{0}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// lineOf returns the 0-based line containing byte offset off.
func lineOf(starts []int, off int) int {
	i, found := slices.BinarySearch(starts, off)
	if found {
		return i
	}
	return i - 1
}

func dedupe(ms []Match) []Match {
	slices.SortFunc(ms, func(a, b Match) int {
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return strings.Compare(a.Rule, b.Rule)
	})
	return slices.Compact(ms)
}

// byLine runs a single-line rule on each line that passes a cheap keyword
// test. Regular expressions scan short lines far faster than a whole diff,
// and most lines have none of a rule's keywords.
func byLine(want func(lowerLine string) bool, find func(line string) []span) func(string) []span {
	return func(text string) []span {
		lower := asciiLower(text)
		var spans []span
		for start := 0; start < len(text); {
			end := strings.IndexByte(text[start:], '\n')
			if end < 0 {
				end = len(text)
			} else {
				end += start
			}
			if want(lower[start:end]) {
				for _, s := range find(text[start:end]) {
					s.start += start
					s.end += start
					spans = append(spans, s)
				}
			}
			start = end + 1
		}
		return spans
	}
}

func anyOf(words ...string) func(string) bool {
	return func(line string) bool {
		for _, w := range words {
			if strings.Contains(line, w) {
				return true
			}
		}
		return false
	}
}

func allOf(words ...string) func(string) bool {
	return func(line string) bool {
		for _, w := range words {
			if !strings.Contains(line, w) {
				return false
			}
		}
		return true
	}
}

func mayHoldIP(line string) bool {
	return strings.Count(line, ".") >= 3 || strings.Count(line, ":") >= 2
}

// asciiLower lower-cases ASCII letters only, so that byte offsets stay
// those of the original text (strings.ToLower may change lengths).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// Sanitize redacts s for text that leaves the system as diagnostics (error
// reasons and stacks in the job record and DLQ payloads). If redaction
// fails, the text is withheld rather than passed through.
func (r *Redactor) Sanitize(s string) string {
	out, _, err := r.Redact(s)
	if err != nil {
		return "[text withheld: redaction failed]"
	}
	return out
}
