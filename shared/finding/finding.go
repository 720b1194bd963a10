// Package finding owns the identity of a review finding: the one
// fingerprint (docs/guarantees.md RC-11) that the review's merge, the
// e-mail's grouping, rerun comparison and comment identity all use. It is
// the SHA-256 of the file, the rule (rule_id, or the normalized title) and
// the whitespace-normalized code around the finding's line, not the line
// number: a finding on code that moved or was re-indented keeps it.
package finding

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/udiff"
)

// Scheme versions the definition: a change to what is hashed changes it, so
// fingerprints of different schemes never compare equal by accident.
const Scheme = "fp1"

// Around is how many lines either side of the finding's range are part of
// its code: enough to tell two identical lines in one file apart.
const Around = 1

// maxRange bounds the lines of a long range that are hashed.
const maxRange = 8

// Fingerprint returns f's fingerprint. code maps new-revision line numbers
// of f.File to their text, as far as the diff shows them
// (udiff.LineMap); nil or a map without the finding's line falls back to
// the line number, the only location then known.
func Fingerprint(f domain.Finding, code map[int]string) string {
	h := sha256.New()
	for _, s := range []string{Scheme, f.File, Rule(f), Code(f, code)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ID is the short id a finding carries in results and e-mails, derived from
// its fingerprint, never from the model's numbering.
func ID(fingerprint string) string {
	if len(fingerprint) > 10 {
		fingerprint = fingerprint[:10]
	}
	return "F-" + fingerprint
}

// Rule is the part of the fingerprint that says what was found: the rule id
// when the finding has one, else its title, lower-cased with whitespace
// collapsed.
func Rule(f domain.Finding) string {
	if r := strings.TrimSpace(f.RuleID); r != "" {
		return "rule:" + normalize(r)
	}
	return "title:" + strings.ToLower(normalize(f.Title))
}

// Code is the normalized code around f's range: the lines from Around
// before to Around after it that code holds, each with its whitespace
// collapsed. When code does not hold the finding's own line it is
// "line:<n>".
func Code(f domain.Finding, code map[int]string) string {
	end := max(f.EndLine, f.Line)
	end = min(end, f.Line+maxRange-1)
	if _, ok := code[f.Line]; !ok {
		return "line:" + strconv.Itoa(f.Line)
	}
	var b strings.Builder
	for n := max(f.Line-Around, 1); n <= end+Around; n++ {
		if t, ok := code[n]; ok {
			b.WriteString(normalize(t))
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func normalize(s string) string { return strings.Join(strings.Fields(s), " ") }

// Lines returns the new-revision lines of fc that a finding's code is read
// from: those its diff shows, and those its interdiff shows (the same
// revision's lines, numbered alike) where the diff does not.
func Lines(fc domain.FileChange) map[int]string {
	m := udiff.LineMap(fc.Diff)
	if fc.Interdiff == "" {
		return m
	}
	for n, t := range udiff.LineMap(fc.Interdiff) {
		if m == nil {
			m = map[int]string{}
		}
		if _, ok := m[n]; !ok {
			m[n] = t
		}
	}
	return m
}

// CodeOf returns Lines of each file of cs, by depot path, read once per
// file; nil cs knows no file.
func CodeOf(cs *domain.Changeset) func(file string) map[int]string {
	files := map[string]domain.FileChange{}
	if cs != nil {
		for _, f := range cs.Files {
			files[f.DepotPath] = f
		}
	}
	cache := map[string]map[int]string{}
	return func(file string) map[int]string {
		m, ok := cache[file]
		if !ok {
			m = Lines(files[file])
			cache[file] = m
		}
		return m
	}
}
