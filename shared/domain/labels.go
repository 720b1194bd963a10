package domain

import (
	"slices"
	"strings"
	"unicode"
)

// The one label table: the words every medium uses for severity, category and
// skip reasons; rendering is shared/render's.

// Severities is the one order of severity, most severe first (the ReviewResult
// schema's enum).
var Severities = []string{"critical", "high", "medium", "low", "info"}

// SeverityOther names an unknown severity: such a finding is still shown.
const SeverityOther = "other"

// SeverityRank is s's place in Severities (case and space ignored); unknown
// ranks last.
func SeverityRank(s string) int {
	if i := slices.Index(Severities, strings.ToLower(strings.TrimSpace(s))); i >= 0 {
		return i
	}
	return len(Severities)
}

// SeverityWord is s as a known word, else SeverityOther: it may name a CSS
// class, so never free text.
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

// skipReasons are each skip reason's words (shared/result's Skip*): short for
// coverage counts, long where a file is listed.
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

// OneLine is s as one line of plain words (a header, label or log field):
// control characters, CR and LF included (header injection), become spaces.
func OneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}
