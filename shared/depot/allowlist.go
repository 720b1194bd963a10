// Package depot owns the depot path allow-list: which Perforce depot paths
// Criticizer may read at all. It is parsed and validated once at startup;
// every candidate path is normalized and checked against it before any p4
// command names it, and a denial fails closed (failure.PolicyRejected and a
// security event).
//
// An entry is "//depot/projectA/..." (everything under it) or
// "//depot/tools/build.sh" (that file): it starts with "//", names at least a
// depot, has no empty, "." or ".." segments, and its only wildcard is a
// trailing "/..."; "*", "...", "@", "#" and "%" elsewhere would broaden the
// scope or smuggle in a revision specifier or an escape.
//
// Candidates are compared case-sensitively after decoding Perforce's escapes
// (%40 @, %23 #, %25 %, %2A *). Raw wildcards, revision specifiers, doubled
// slashes and "."/".." segments are denied, never cleaned up: a path that
// needs repair did not come from Perforce.
package depot

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/criticizer/criticizer/shared/failure"
)

// ErrDenied is wrapped by every error Check returns (errors.Is).
var ErrDenied = errors.New("depot path not allowed")

// maxPathLen bounds what is checked and logged: an unbounded
// attacker-supplied string has no business in a log.
const maxPathLen = 1024

// entry is one validated allow-list entry.
type entry struct {
	raw    string // as configured, e.g. //depot/projectA/...
	prefix string // "//depot/projectA/" for a subtree entry, "" for a file entry
	file   string // "//depot/tools/build.sh" for a file entry, "" for a subtree
}

// AllowList is the validated set of depot paths the service may read; immutable.
type AllowList struct {
	entries []entry
	digest  string
	log     *slog.Logger
}

// ParseAllowList parses an allow-list as configured: entries separated by
// commas or newlines, blanks around ignored, lines starting with '#' skipped.
func ParseAllowList(spec string, log *slog.Logger) (*AllowList, error) {
	var entries []string
	for _, line := range strings.Split(spec, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		for _, e := range strings.Split(line, ",") {
			if e = strings.TrimSpace(e); e != "" {
				entries = append(entries, e)
			}
		}
	}
	return NewAllowList(entries, log)
}

// NewAllowList validates entries and builds the allow-list. Any invalid entry
// fails the whole list: the service must refuse to start rather than run
// with a scope nobody approved. It logs the entries and their digest
// (event=depot_allowlist_loaded), so every change is in the audit trail.
func NewAllowList(entries []string, log *slog.Logger) (*AllowList, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if len(entries) == 0 {
		return nil, failure.Errorf(failure.InternalBug, "depot allow-list is empty")
	}
	al := &AllowList{log: log}
	for i, raw := range entries {
		e, err := parseEntry(raw)
		if err != nil {
			return nil, failure.Errorf(failure.InternalBug, "depot allow-list entry %d %q: %w", i, truncate(raw), err)
		}
		al.entries = append(al.entries, e)
	}
	// Sorted and without repeats, so that the digest identifies the policy,
	// not the order it was typed in.
	slices.SortFunc(al.entries, func(a, b entry) int { return strings.Compare(a.raw, b.raw) })
	al.entries = slices.CompactFunc(al.entries, func(a, b entry) bool { return a.raw == b.raw })
	h := sha256.New()
	for _, e := range al.entries {
		h.Write([]byte(e.raw))
		h.Write([]byte{'\n'})
	}
	al.digest = hex.EncodeToString(h.Sum(nil))
	log.Info("depot allow-list loaded", "event", "depot_allowlist_loaded", "entries", al.Entries(), "digest", al.digest)
	return al, nil
}

func parseEntry(raw string) (entry, error) {
	if strings.TrimSpace(raw) == "" {
		return entry{}, errors.New("empty entry")
	}
	if raw != strings.TrimSpace(raw) {
		return entry{}, errors.New("surrounding whitespace")
	}
	if len(raw) > maxPathLen {
		return entry{}, errors.New("entry too long")
	}
	if reason := badChars(raw); reason != "" {
		return entry{}, errors.New(reason)
	}
	if !strings.HasPrefix(raw, "//") {
		return entry{}, errors.New("not a depot path: must begin with //")
	}
	for _, c := range []string{"*", "@", "#", "%"} {
		if strings.Contains(raw, c) {
			return entry{}, fmt.Errorf("contains %q: only a trailing /... wildcard is allowed and revision specifiers or escapes are not", c)
		}
	}
	body, subtree := strings.CutSuffix(raw[2:], "/...")
	if strings.Contains(body, "...") {
		return entry{}, errors.New(`"..." is only allowed as the trailing "/..." wildcard`)
	}
	if body == "" {
		return entry{}, errors.New("names no depot")
	}
	if reason := badSegments(body); reason != "" {
		return entry{}, errors.New(reason)
	}
	if subtree {
		return entry{raw: raw, prefix: "//" + body + "/"}, nil
	}
	return entry{raw: raw, file: raw}, nil
}

// Entries returns the configured entries in canonical (sorted) order.
func (a *AllowList) Entries() []string {
	out := make([]string, len(a.entries))
	for i, e := range a.entries {
		out[i] = e.raw
	}
	return out
}

// Digest is a SHA-256 over the canonical entries: equal digests, equal policies.
func (a *AllowList) Digest() string { return a.digest }

// Check returns nil when the normalized path is inside an entry, else a
// failure.PolicyRejected error wrapping ErrDenied, after logging a security
// event (event=depot_access_denied) with the path and the reason.
func (a *AllowList) Check(path string) error {
	norm, reason := Normalize(path)
	if reason == "" {
		if a.allows(norm) {
			return nil
		}
		reason = "outside the allow-list"
	}
	a.log.Warn("depot access denied", "event", "depot_access_denied", "path", truncate(path),
		"reason", reason, "allowlist_digest", a.digest)
	return failure.Wrap(failure.PolicyRejected, fmt.Errorf("%w: %q: %s", ErrDenied, truncate(path), reason))
}

func (a *AllowList) allows(norm string) bool {
	for _, e := range a.entries {
		if e.file != "" && norm == e.file {
			return true
		}
		if e.prefix != "" && strings.HasPrefix(norm, e.prefix) && len(norm) > len(e.prefix) {
			return true
		}
	}
	return false
}

// Normalize validates a candidate depot file path and returns it with
// Perforce's escapes decoded, or why it cannot be trusted; it never repairs one.
func Normalize(path string) (norm, reason string) {
	switch {
	case path == "":
		return "", "empty path"
	case len(path) > maxPathLen:
		return "", "path too long"
	case !strings.HasPrefix(path, "//"):
		return "", "not a depot path: must begin with //"
	}
	if r := badChars(path); r != "" {
		return "", r
	}
	body := path[2:]
	if strings.Contains(body, "...") || strings.Contains(body, "*") {
		return "", "wildcard in path"
	}
	if strings.ContainsAny(body, "@#") {
		return "", "revision specifier in path"
	}
	if r := badSegments(body); r != "" {
		return "", r
	}
	decoded, ok := unescape(body)
	if !ok {
		return "", "invalid % escape"
	}
	return "//" + decoded, ""
}

// ValidSyntax reports whether path is a well-formed depot file path, for
// deciding what may be logged, not what may be read.
func ValidSyntax(path string) bool {
	_, reason := Normalize(path)
	return reason == ""
}

// badSegments checks the part of a path after the leading "//".
func badSegments(body string) string {
	for _, seg := range strings.Split(body, "/") {
		switch seg {
		case "":
			return "empty path segment (doubled or trailing slash)"
		case ".", "..":
			return `"." or ".." path segment`
		}
	}
	return ""
}

func badChars(s string) string {
	if !utf8.ValidString(s) {
		return "invalid UTF-8"
	}
	for _, r := range s {
		if unicode.IsControl(r) || r == '\\' {
			return "control character or backslash in path"
		}
	}
	return ""
}

// unescape decodes Perforce's four escapes; any other % sequence is refused:
// Perforce never writes one, so it can only be an attempt to sneak past.
func unescape(s string) (string, bool) {
	if !strings.Contains(s, "%") {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", false
		}
		c, ok := escapes[strings.ToUpper(s[i+1:i+3])]
		if !ok {
			return "", false
		}
		b.WriteByte(c)
		i += 2
	}
	return b.String(), true
}

var escapes = map[string]byte{"40": '@', "23": '#', "25": '%', "2A": '*'}

// truncate keeps untrusted paths bounded in errors and logs.
func truncate(s string) string {
	if len(s) <= maxPathLen {
		return s
	}
	return s[:maxPathLen] + "…"
}

// A Perforce path pattern (a protections or view line) may hold "...", "*"
// and "%%n" anywhere. Covers and MayOverlap judge by its literal prefix and
// err on the side that keeps a security check closed: Covers says yes only
// for a sole trailing "...", MayOverlap no only when no file could match both.

// literal returns the pattern's text before its first wildcard, and whether it has one.
func literal(pattern string) (string, bool) {
	i := strings.IndexAny(pattern, "*%")
	if j := strings.Index(pattern, "..."); j >= 0 && (i < 0 || j < i) {
		i = j
	}
	if i < 0 {
		return pattern, false
	}
	return pattern[:i], true
}

// Covers reports whether pattern matches every file the allow-list entry
// (a "//x/..." subtree or one file) names.
func Covers(pattern, entry string) bool {
	lit, wild := literal(pattern)
	if !wild {
		return pattern == entry
	}
	if lit+"..." != pattern {
		return false // a wildcard before the end: not provably everything
	}
	e, _ := literal(entry)
	return strings.HasPrefix(e, lit)
}

// MayOverlap reports whether some file could match both pattern and the
// allow-list entry.
func MayOverlap(pattern, entry string) bool {
	lit, wild := literal(pattern)
	e, subtree := literal(entry)
	switch {
	case wild && subtree:
		return strings.HasPrefix(e, lit) || strings.HasPrefix(lit, e)
	case wild:
		return strings.HasPrefix(entry, lit)
	case subtree:
		return strings.HasPrefix(pattern, e)
	}
	return pattern == entry
}
