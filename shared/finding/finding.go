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

// Scheme versions the definition, so fingerprints of different schemes never compare equal.
const Scheme = "fp1"

// Around is the lines either side of a finding's range in its code: enough
// to tell two identical lines apart.
const Around = 1

// maxRange bounds the lines of a long range that are hashed.
const maxRange = 8

// Fingerprint returns f's fingerprint. code maps f.File's new-revision lines
// to their text as the diff shows them (udiff.LineMap); without the
// finding's line, the line number stands in.
func Fingerprint(f domain.Finding, code map[int]string) string {
	h := sha256.New()
	for _, s := range []string{Scheme, f.File, Rule(f), Code(f, code)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ID is a finding's short id in results and e-mails, from its fingerprint.
func ID(fingerprint string) string {
	if len(fingerprint) > 10 {
		fingerprint = fingerprint[:10]
	}
	return "F-" + fingerprint
}

// Rule says what was found: the rule id, else the title lower-cased, whitespace collapsed.
func Rule(f domain.Finding) string {
	if r := strings.TrimSpace(f.RuleID); r != "" {
		return "rule:" + normalize(r)
	}
	return "title:" + strings.ToLower(normalize(f.Title))
}

// Code is the code around f's range (Around lines either side), whitespace
// collapsed; "line:<n>" when code does not hold the finding's line.
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

// Lines returns the new-revision lines of fc its diff shows, and its
// interdiff's (numbered alike) where the diff does not.
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

// CodeOf returns Lines of each file of cs by depot path, read once; nil cs knows none.
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
