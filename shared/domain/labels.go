package domain

import (
	"slices"
	"strings"
	"unicode"
)

// The one label table: the words every reader-facing medium (e-mail,
// digest, job page, Swarm comments, the coverage line) uses for a finding's
// severity and category and for a file's skip reason. Rendering them is
// shared/render's.

// Severities is the one order of a finding's severity, most severe first
// (the ReviewResult schema's enum): ranking, grouping, gates and tasks all
// follow it.
var Severities = []string{"critical", "high", "medium", "low", "info"}

// SeverityOther is the word for a severity not in Severities (validation
// should have dropped it): such a finding is still shown, never hidden.
const SeverityOther = "other"

// SeverityRank is s's place in Severities, 0 the most severe, ignoring case
// and surrounding space; an unknown word ranks last, len(Severities).
func SeverityRank(s string) int {
	if i := slices.Index(Severities, strings.ToLower(strings.TrimSpace(s))); i >= 0 {
		return i
	}
	return len(Severities)
}

// SeverityWord is s as a known lower-case word, SeverityOther otherwise: it
// may name a CSS class or a heading, so it is never the model's free text.
func SeverityWord(s string) string {
	if r := SeverityRank(s); r < len(Severities) {
		return Severities[r]
	}
	return SeverityOther
}

// CategoryWord keeps a model-chosen category to letters, digits, - and _
// (24 at most): a label, never a sentence or a link.
func CategoryWord(s string) string {
	s = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return -1
	}, s)
	return s[:min(len(s), 24)]
}

// skipReasons are the words for each reason a file was not reviewed
// (shared/result's Skip* reasons): short for the coverage line's counts
// ("skipped 2: 1 binary, …"), long where a file is listed with its reason.
var skipReasons = map[string]struct{ short, long string }{
	"no_textual_diff":   {"no textual diff", "no textual diff: binary, deleted or empty"},
	OverFileBytes:       {"larger than the per-file limit (p4MaxFileBytes)", "larger than the per-file limit (p4MaxFileBytes, 2 MiB by default): not fetched"},
	"binary":            {"binary", "binary"},
	"deleted":           {"deleted", "deleted"},
	"over_file_limit":   {"over the file limit", "over the per-changelist file limit"},
	"over_byte_limit":   {"over the size limit", "over the per-changelist size limit"},
	"too_large":         {"too large", "too large to review"},
	"ignored_by_rule":   {"ignored by rule", "ignored by the review rules"},
	"over_budget":       {"over the token budget", "over the review's token budget"},
	"over_daily_budget": {"daily budget spent", "the environment's daily model budget is spent"},
	"model_refused":     {"model refused", "the model refused to review it"},
}

// SkipLabel is a skip reason's short label; an unknown reason as written,
// on one line.
func SkipLabel(r string) string {
	if l, ok := skipReasons[r]; ok {
		return l.short
	}
	return strings.Join(strings.Fields(r), " ")
}

// SkipReason is a skip reason as a listed file states it.
func SkipReason(r string) string {
	if l, ok := skipReasons[r]; ok {
		return l.long
	}
	return strings.Join(strings.Fields(r), " ")
}

// OneLine is s as one line of plain words, for a mail header, a label or
// a log field: control characters (CR and LF included: header injection)
// become spaces and runs of white space collapse.
func OneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}
