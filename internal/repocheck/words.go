package repocheck

import (
	"fmt"
	"go/token"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// againWords are the glossary's words for doing something again, as they
// appear in identWords (ReEnqueue is re_enqueue). "returns" (SQS handing a
// message out again) has none: every function "returns".
var againWords = map[string]*regexp.Regexp{
	"retry":      regexp.MustCompile(`(^|_)(retry|retries|retried|retrying|retryable)(_|$)`),
	"re-enqueue": regexp.MustCompile(`(^|_)re_?enqueue`),
	"replay":     regexp.MustCompile(`(^|_)re_?play`),
	"restart":    regexp.MustCompile(`(^|_)re_?start`),
	"redeliver":  regexp.MustCompile(`(^|_)re_?deliver`),
	"requeue":    regexp.MustCompile(`(^|_)re_?queue`),
	"resend":     regexp.MustCompile(`(^|_)re_?sen[dt]`),
	"settle":     regexp.MustCompile(`(^|_)settl`),
	"reconcile":  regexp.MustCompile(`(^|_)reconcil`),
	"rerun":      regexp.MustCompile(`(^|_)re_?run`),
}

// keptTerms are other vocabularies' names a word rule skips: the webhook's
// replay window (the glossary's own paragraph) and HTTP's Retry-After
// header (RFC 9110 §10.2.3).
var keptTerms = []string{"replay_window", "retry_after"}

// uncheckedAgainWords are glossary rows of the again table no name rule
// follows (see againWords).
var uncheckedAgainWords = []string{"returns"}

// WordUse allows a word in a package the glossary's row does not cite: Dir
// is the package's directory, Why says how the use is the word's one meaning.
type WordUse struct {
	Word, Dir, Why string
}

// MisusedWords checks ix's exported and package names against the glossary's
// again table: a name may use a word only in the packages its row cites, or
// where allowed lists it. One line per misuse, then per unneeded allowance.
func MisusedWords(doc string, ix *codeIndex, allowed []WordUse) []string {
	rows, err := glossaryTable(doc, 2) // the table of words for doing something again
	if err == "" && len(rows) == 0 {
		err = "glossary: no table of words for doing something again"
	}
	var out []string
	if err != "" {
		out = append(out, err)
	}
	cited := map[string][]string{} // word -> directories its row cites
	for word, spans := range rows {
		if againWords[word] == nil && !slices.Contains(uncheckedAgainWords, word) {
			out = append(out, fmt.Sprintf("glossary: %q has no name rule: add it to againWords", word))
		}
		for _, s := range spans {
			cited[word] = append(cited[word], ix.citedDirs(s)...)
		}
	}
	for word := range againWords {
		if _, ok := rows[word]; !ok {
			out = append(out, fmt.Sprintf("againWords has %q, which the glossary's again table does not list", word))
		}
	}
	used := map[WordUse]bool{}
	for _, n := range ix.exported {
		split := identWords(n.name)
		for _, k := range keptTerms {
			split = strings.ReplaceAll(split, k, "")
		}
		for word, re := range againWords {
			if !re.MatchString(split) || slices.Contains(cited[word], n.dir) {
				continue
			}
			if i := slices.IndexFunc(allowed, func(a WordUse) bool { return a.Word == word && a.Dir == n.dir }); i >= 0 {
				used[allowed[i]] = true
				continue
			}
			out = append(out, fmt.Sprintf("%s: %s %s says %q outside its glossary meaning (its row cites %s)",
				n.at, n.kind, n.name, word, strings.Join(orNone(cited[word]), ", ")))
		}
	}
	for _, a := range allowed {
		if !used[a] {
			out = append(out, fmt.Sprintf("allowed %q in %s, but no exported name there needs it: remove the allowance", a.Word, a.Dir))
		}
	}
	return out
}

// glossaryTable reads the glossary's n-th table: each row's bold word
// ("**review** (alone)" is review) and its meaning's code spans.
func glossaryTable(doc string, n int) (map[string][]string, string) {
	section, ok := glossarySection(doc)
	if !ok {
		return nil, `docs/design.md has no "## Words with one meaning" section`
	}
	rows, tables, in := map[string][]string{}, 0, false
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "|") {
			in = false
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		switch {
		case !in:
			in, tables = true, tables+1
		case tables == n && len(cells) >= 2 && !strings.HasPrefix(strings.TrimSpace(cells[0]), "---"):
			_, word, _ := strings.Cut(cells[0], "**")
			word, _, _ = strings.Cut(word, "**")
			rows[word] = backquoted(cells[1])
		}
	}
	return rows, ""
}

// reviewTypes are the type names that say "review" alone.
var reviewTypes = []string{"Review", "Reviews"}

// ReviewTypes checks that an exported type named Review or Reviews is a
// Swarm review: declared where the glossary's "review" row cites one, or
// where allowed lists it. One line per other such type, then per unneeded allowance.
func ReviewTypes(doc string, ix *codeIndex, allowed []WordUse) []string {
	rows, err := glossaryTable(doc, 1)
	if err != "" {
		return []string{err}
	}
	var swarm []string // directories the row cites a Review type in
	for _, span := range rows["review"] {
		if m := qualified.FindStringSubmatch(span); m != nil && slices.Contains(reviewTypes, m[2]) {
			swarm = append(swarm, ix.declaring(m[1], m[2])...)
		}
	}
	var out []string
	used := map[WordUse]bool{}
	for _, n := range ix.exported {
		if n.kind != "type" || !slices.Contains(reviewTypes, n.name) || slices.Contains(swarm, n.dir) {
			continue
		}
		if i := slices.IndexFunc(allowed, func(a WordUse) bool { return a.Word == "review" && a.Dir == n.dir }); i >= 0 {
			used[allowed[i]] = true
			continue
		}
		out = append(out, fmt.Sprintf("%s: type %s is not a Swarm review (the glossary's review row cites %s): name it for what it is",
			n.at, n.name, strings.Join(orNone(swarm), ", ")))
	}
	for _, a := range allowed {
		if a.Word == "review" && !used[a] {
			out = append(out, fmt.Sprintf("allowed type %s in %s, but there is none there: remove the allowance", strings.Join(reviewTypes, "/"), a.Dir))
		}
	}
	return out
}

// citedDirs are the directories a code span of the glossary points at.
func (ix *codeIndex) citedDirs(span string) []string {
	if words, ok := strings.CutPrefix(span, "criticizer "); ok && ix.command(strings.Fields(words)) == "" {
		return []string{"cmd/criticizer"}
	}
	if strings.Contains(span, "/") {
		return []string{span}
	}
	if m := qualified.FindStringSubmatch(span); m != nil {
		return ix.declaring(m[1], m[2])
	}
	if token.IsExported(span) { // not a status or mode string, which any package may hold
		return ix.declared[span]
	}
	return nil
}

// identWords splits a Go name into lower-case words joined by "_":
// RequeueReconciled is requeue_reconciled, HTTPRetryAfter http_retry_after.
func identWords(name string) string {
	var b strings.Builder
	r := []rune(name)
	for i, c := range r {
		upper := unicode.IsUpper(c)
		if i > 0 && (c == '_' || c == '.' ||
			upper && (!unicode.IsUpper(r[i-1]) || i+1 < len(r) && unicode.IsLower(r[i+1]))) {
			if r[i-1] != '_' && r[i-1] != '.' {
				b.WriteByte('_')
			}
		}
		if c != '_' && c != '.' {
			b.WriteRune(unicode.ToLower(c))
		}
	}
	return b.String()
}

func orNone(s []string) []string {
	if len(s) == 0 {
		return []string{"no package"}
	}
	return s
}
