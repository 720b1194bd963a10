package domain

import (
	"fmt"
	"sort"
	"strings"
)

// Complete reports whether every file of the changelist was reviewed in
// full by the model. Only then does "no findings" mean a clean bill.
func (m ReviewMeta) Complete() bool {
	return m.WithoutModel == "" && len(m.SkippedFiles) == 0 && len(m.TruncatedFiles) == 0 && m.FilesReviewed == m.FilesTotal
}

// Coverage says how much was reviewed ("reviewed 38 of 40 files; partly reviewed
// 1 (cut to fit); skipped 1: 1 binary"); "" for a result from before coverage
// was recorded.
func (m ReviewMeta) Coverage() string {
	if m.FilesTotal == 0 && m.FilesReviewed == 0 && len(m.SkippedFiles) == 0 {
		return ""
	}
	s := fmt.Sprintf("reviewed %d of %d %s", m.FilesReviewed, m.FilesTotal, Plural(m.FilesTotal, "file"))
	var since []string
	if m.CarriedOver > 0 {
		since = append(since, fmt.Sprintf("%d unchanged since version %d, %s carried over", m.CarriedOver, m.CarriedFrom, PluralOf(m.CarriedOver, "its findings", "their findings")))
	}
	if m.Interdiffs > 0 {
		since = append(since, fmt.Sprintf("%d reviewed as %s since version %d", m.Interdiffs, PluralOf(m.Interdiffs, "its change", "their changes"), m.CarriedFrom))
	}
	if len(since) > 0 {
		s += " (" + strings.Join(since, "; ") + ")"
	}
	if n := len(m.TruncatedFiles); n > 0 {
		s += fmt.Sprintf("; partly reviewed %d (cut to fit)", n)
	}
	if n := len(m.SkippedFiles); n > 0 {
		counts := map[string]int{}
		for _, f := range m.SkippedFiles {
			counts[f.Reason]++
		}
		reasons := make([]string, 0, len(counts))
		for r := range counts {
			reasons = append(reasons, r)
		}
		sort.Strings(reasons)
		parts := make([]string, len(reasons))
		for i, r := range reasons {
			parts[i] = fmt.Sprintf("%d %s", counts[r], SkipLabel(r))
		}
		s += fmt.Sprintf("; skipped %d: %s", n, strings.Join(parts, ", "))
	}
	if m.WithoutModel != "" {
		s += "; the model was not called: " + m.WithoutModel
	}
	return s
}

// Plural is word for one and word+"s" for any other count.
func Plural(n int, word string) string { return PluralOf(n, word, word+"s") }

// PluralOf is one for a count of one, many otherwise.
func PluralOf(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Usage is the review's cost as the e-mail and the Swarm summary state it; ""
// when no model ran.
func (m ReviewMeta) Usage() string {
	if m.InputTokens == 0 && m.OutputTokens == 0 {
		return ""
	}
	s := fmt.Sprintf("tokens %d in, %d out, %d model %s", m.InputTokens, m.OutputTokens, m.ModelCalls, Plural(m.ModelCalls, "call"))
	if m.CachedInputTokens > 0 {
		s += fmt.Sprintf(", %d input from the prompt cache", m.CachedInputTokens)
	}
	if m.EstimatedCostUSD > 0 {
		s += fmt.Sprintf(", est. $%.4f at list prices", m.EstimatedCostUSD)
	}
	return s
}

// DismissedWithheld is what the e-mail and Swarm summary say of findings
// withheld as repeatedly dismissed (never silently); "" when none.
func (m ReviewMeta) DismissedWithheld() string {
	w := m.WithheldAsDismissed
	if w <= 0 {
		return ""
	}
	s := fmt.Sprintf("%d %s withheld as repeatedly dismissed here", w, Plural(w, "finding"))
	for i, k := range m.WithheldKinds {
		sep := ": "
		if i > 0 {
			sep = "; "
		}
		s += fmt.Sprintf("%s%s %s under %s (lift: criticizer outcomes allow %s %s %s)", sep, k.Category, k.Kind, k.Scope, k.Scope, k.Category, k.Kind)
	}
	return s
}

// WithheldKind is one finding kind withheld under a scope as repeatedly
// dismissed (package outcome's Suppression, named).
type WithheldKind struct {
	Category string `json:"category"`
	Kind     string `json:"kind"`
	Scope    string `json:"scope"`
}
