// Package redact owns the redaction of everything Criticizer sends to an LLM:
// a deterministic pass that replaces secrets and confidential identifiers in
// changelist descriptions and diffs with "[REDACTED:<rule-id>]" tokens.
//
// Detection combines gitleaks' default rule set (github.com/zricethezav/gitleaks/v8,
// about 220 rules, evaluated by gitleaks.go) with the classes rule RD-1
// (docs/guarantees.md) requires that gitleaks does not cover reliably:
//
//	password-assignment  password/passphrase/secret assignments: quoted literals
//	                     after = : := == =>, bare config values (password=hunter2),
//	                     XML elements, SQL IDENTIFIED BY '…'
//	pem-private-key      PEM/PGP private key blocks, also when truncated
//	uri-credentials      user:password@ in any URI (smtp://, postgres://, …)
//	smtp-auth            AUTH PLAIN/LOGIN/XOAUTH2 payloads in SMTP transcripts
//	bearer-token         Authorization headers and Bearer/Basic credentials
//	email                e-mail addresses, when Policy.RedactEmails
//	internal-host        host names under Policy.ConfidentialDomains
//	internal-ip          addresses inside Policy.ConfidentialCIDRs
//
// Deliberately not redacted (each has a negative test): code that only names
// a password (password := flag.String("password", "", "…")), placeholders
// (${DB_PASSWORD}, {{ .Values.pw }}, %s, <password>), UUIDs, versions, commit
// and lockfile hashes gitleaks does not flag, prose ("uses Bearer
// authentication"), and depot paths, which findings are matched against.
//
// A replacement never adds or removes a newline, so line numbers survive; a
// multi-line secret becomes one token per line, keeping each line's diff
// marker and indentation. Every occurrence of a detected value of eight or
// more bytes is redacted, not just the one a rule matched. Redaction runs to
// a fixed point (changed lines are rescanned), so Redact(Redact(x)) == Redact(x).
//
// Speed: one Aho-Corasick pass over the lower-cased text finds every rule's
// keywords; a rule's regexp runs only on lines holding one (multiline rules on
// a bounded window). Only runs that look encoded (base64, hex, percent) are
// decoded, and a hit in the decoded text redacts the encoded run. Large inputs
// are split over the cores; nothing is compiled before it is needed.
//
// Policy.BareSecrets adds secrets seen without context (a lone AWS secret
// key, a bare high-entropy token): for diagnostics (package sanitize), where
// over-redaction costs nothing, not for diffs. gitleaks' in-band opt-out
// ("gitleaks:allow") is ignored: whether a secret leaves is not the author's call.
package redact

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"maps"
	"math/bits"
	"net/netip"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"

	ahocorasick "github.com/BobuSumisu/aho-corasick"

	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/settings"
)

// Policy says which confidential, non-secret information to remove as well.
type Policy struct {
	RedactEmails        bool     // replace e-mail addresses (de-identification)
	ConfidentialDomains []string // host names equal to or under these suffixes, e.g. "corp.example.com"
	ConfidentialCIDRs   []string // IP addresses inside these prefixes, e.g. "10.0.0.0/8", "fd00::/8"
	// BareSecrets also redacts secret-shaped values without context; for
	// diagnostics only (see the package comment).
	BareSecrets bool
}

// Match records one redaction: the rule and the input's line (1-based),
// never the redacted text.
type Match struct {
	Rule string
	Line int
}

// Redactor applies a Policy. It is safe for concurrent use.
type Redactor struct {
	policy Policy
	own    []detector // the policy's own rules; gitleaks' are added on first use

	once  sync.Once
	ix    *index
	ixErr error
}

// detector is one rule as the scanner sees it.
type detector struct {
	id       string
	keywords []string // lower-case; the rule runs on lines holding one of them
	// line, for rules without keywords, is a cheap test of the line; nil: every line.
	line      func(line string) bool
	multiline bool // runs on a window around the line rather than the line
	find      func(text string) ([]span, error)
}

// index is what the scanner needs, built on first use.
type index struct {
	dets        []detector
	trie        *ahocorasick.Trie
	byPattern   [][]int // keyword pattern number -> detectors
	keywordless []int
}

// span is a byte range [start, end) of text to replace, and its rule.
type span struct {
	start, end int
	rule       string
}

const (
	// maxPasses bounds the fixed-point iteration; real input converges after
	// one rescan, so hitting it means a rule misbehaves, which must block.
	maxPasses = 4
	// A multiline rule's window around its keyword's line: before it (a YAML
	// Secret's data: may precede its kind:), after it (a 4096-bit PEM key is ~3.3 KB).
	windowBefore = 1 << 10
	windowAfter  = 16 << 10
	// maxDecodeDepth: encoded text inside encoded text is decoded once more.
	maxDecodeDepth = 2
	// Inputs above parallelMin bytes are split over the cores.
	parallelMin = 256 << 10
	// On lines over longLine, a rule runs on keywordReach bytes either side
	// of its keywords (more than any single-line secret and its key).
	longLine     = 2 << 10
	keywordReach = 512
	maxWindow    = 2 << 10
)

// New builds a Redactor for p; it fails on an invalid policy entry. The
// gitleaks rules load on first use; a failure makes Redact fail, never pass.
func New(p Policy) (*Redactor, error) {
	r := &Redactor{policy: p, own: []detector{
		lineRule("password-assignment", []string{"pass", "pwd", "secret", "identified"}, findPasswordAssignments),
		lineRule("credential-assignment", []string{"secret", "token", "key", "credential", "auth"}, findCredentialAssignments),
		{id: "pem-private-key", keywords: []string{"-----begin"}, multiline: true, find: noErr(findPEMKeys)},
		lineRule("uri-credentials", []string{"://"}, findURICredentials),
		lineRule("smtp-auth", []string{"auth"}, findSMTPAuth),
		lineRule("bearer-token", []string{"bearer", "basic", "authorization"}, findBearerTokens),
	}}
	if p.RedactEmails {
		r.own = append(r.own, lineRule("email", []string{"@"}, findEmails))
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
		r.own = append(r.own, lineRule("internal-host", suffixes, f))
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
		r.own = append(r.own, detector{id: "internal-ip", line: mayHoldIP, find: noErr(ipFinder(prefixes))})
	}
	if p.BareSecrets {
		r.own = append(r.own, detector{id: "bare-secret", find: noErr(findBareSecrets)})
	}
	return r, nil
}

func lineRule(id string, keywords []string, find func(string) []span) detector {
	return detector{id: id, keywords: keywords, find: noErr(find)}
}

func noErr(f func(string) []span) func(string) ([]span, error) {
	return func(s string) ([]span, error) { return f(s), nil }
}

// index builds the keyword automaton over all rules, once.
func (r *Redactor) index() (*index, error) {
	r.once.Do(func() {
		gl, err := gitleaksRules()
		if err != nil {
			r.ixErr = fmt.Errorf("loading gitleaks rules: %w", err)
			return
		}
		ix := &index{}
		for _, g := range gl.rules {
			ix.dets = append(ix.dets, detector{id: g.id, keywords: g.keywords, multiline: g.multiline,
				find: func(text string) ([]span, error) { return g.find(gl, text) }})
		}
		ix.dets = append(ix.dets, r.own...)
		patterns := map[string]int{}
		var words []string
		for i, d := range ix.dets {
			if len(d.keywords) == 0 {
				ix.keywordless = append(ix.keywordless, i)
				continue
			}
			for _, k := range d.keywords {
				n, ok := patterns[k]
				if !ok {
					n = len(words)
					patterns[k] = n
					words = append(words, k)
					ix.byPattern = append(ix.byPattern, nil)
				}
				ix.byPattern[n] = append(ix.byPattern[n], i)
			}
		}
		ix.trie = ahocorasick.NewTrieBuilder().AddStrings(words).Build()
		r.ix = ix
	})
	return r.ix, r.ixErr
}

// Redact returns text with every detected secret replaced by
// "[REDACTED:<rule-id>]", and what was replaced where. An error means the
// text was not vetted and must not be sent anywhere.
func (r *Redactor) Redact(text string) (string, []Match, error) {
	if text == "" {
		return "", nil, nil
	}
	spans, err := r.scan(text, 0)
	if err != nil {
		return "", nil, failure.Wrap(failure.InternalBug, fmt.Errorf("redact: %w", err))
	}
	if len(spans) == 0 {
		return text, nil, nil
	}
	starts := lineStarts(text)
	var matches []Match
	out := text
	for pass := 0; ; pass++ {
		if pass == maxPasses {
			return "", nil, failure.Errorf(failure.InternalBug, "redact: output still matches after %d passes", maxPasses)
		}
		// Replacements keep every newline: later passes' lines are the input's.
		touched := map[int]bool{}
		for _, s := range spans {
			first, last := lineOf(starts, s.start), lineOf(starts, max(s.start, s.end-1))
			matches = append(matches, Match{Rule: s.rule, Line: first + 1})
			for l := first; l <= last; l++ {
				touched[l] = true
			}
		}
		out = apply(out, spans)
		starts = lineStarts(out)
		// Only the changed lines can hold something new.
		spans = nil
		for _, l := range slices.Sorted(maps.Keys(touched)) {
			ls, le := starts[l], len(out)
			if l+1 < len(starts) {
				le = starts[l+1] - 1
			}
			found, err := r.scan(out[ls:le], 0)
			if err != nil {
				return "", nil, failure.Wrap(failure.InternalBug, fmt.Errorf("redact: %w", err))
			}
			for _, s := range found {
				spans = append(spans, span{s.start + ls, s.end + ls, s.rule})
			}
		}
		if len(spans) == 0 {
			return out, dedupe(matches), nil
		}
		spans = merge(spans)
	}
}

// scan returns the spans to replace in text, merged and sorted.
func (r *Redactor) scan(text string, depth int) (spans []span, err error) {
	defer func() { // a detector panic on hostile input blocks, not crashes
		if p := recover(); p != nil {
			spans, err = nil, fmt.Errorf("detector panic: %v", p)
		}
	}()
	ix, err := r.index()
	if err != nil {
		return nil, err
	}
	lower := asciiLower(text)
	if len(text) < parallelMin || depth > 0 {
		spans, err = r.scanLines(ix, text, lower, 0, len(text), depth)
	} else {
		spans, err = r.scanParallel(ix, text, lower)
	}
	if err != nil {
		return nil, err
	}
	for i := range spans {
		spans[i] = trim(text, spans[i])
	}
	spans = slices.DeleteFunc(spans, func(s span) bool { return s.start >= s.end })
	spans = dropFallbackOverlaps(spans)
	spans = append(spans, repeats(text, spans)...)
	return merge(dropInsideTokens(text, spans)), nil
}

// scanParallel splits text at line boundaries into one piece per core.
func (r *Redactor) scanParallel(ix *index, text string, lower []byte) ([]span, error) {
	n := runtime.GOMAXPROCS(0)
	if n < 2 {
		return r.scanLines(ix, text, lower, 0, len(text), 0)
	}
	bounds := []int{0}
	for i := 1; i < n; i++ {
		at := len(text) * i / n
		if nl := strings.IndexByte(text[at:], '\n'); nl >= 0 && at+nl+1 > bounds[len(bounds)-1] {
			bounds = append(bounds, at+nl+1)
		}
	}
	bounds = append(bounds, len(text))
	results := make([][]span, len(bounds)-1)
	errs := make([]error, len(bounds)-1)
	var wg sync.WaitGroup
	for i := 0; i+1 < len(bounds); i++ {
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					errs[i] = fmt.Errorf("detector panic: %v", p)
				}
			}()
			results[i], errs[i] = r.scanLines(ix, text, lower, bounds[i], bounds[i+1], 0)
		})
	}
	wg.Wait()
	var spans []span
	for i := range results {
		if errs[i] != nil {
			return nil, errs[i]
		}
		spans = append(spans, results[i]...)
	}
	return spans, nil
}

// scanLines runs the rules over the whole lines of text[from:to];
// multiline windows may reach outside it.
func (r *Redactor) scanLines(ix *index, text string, lower []byte, from, to, depth int) ([]span, error) {
	s := &lineScan{r: r, ix: ix, text: text, lower: lower, depth: depth, hits: make([]uint64, (len(ix.dets)+63)/64)}
	s.markHit = s.mark // one func value for every line's trie walk
	for ls := from; ls < to; {
		le := strings.IndexByte(text[ls:to], '\n')
		if le < 0 {
			le = to
		} else {
			le += ls
		}
		var err error
		if le-ls <= longLine {
			err = s.segment(ls, le)
		} else {
			err = s.long(ls, le)
		}
		if err != nil {
			return nil, err
		}
		ls = le + 1
	}
	return s.spans, nil
}

// lineScan is one scanLines call and its scratch space.
type lineScan struct {
	r     *Redactor
	ix    *index
	text  string
	lower []byte
	depth int
	spans []span

	hits    []uint64 // a short line's rules to run: one bit per rule
	markHit func(_, _, pattern int64) bool
	wins    [][][2]int // a long line's windows, per rule
}

// mark sets the bits of the rules whose keyword (pattern) the trie found.
func (s *lineScan) mark(_, _, pattern int64) bool {
	for _, d := range s.ix.byPattern[pattern] {
		s.hits[d>>6] |= 1 << (d & 63)
	}
	return true
}

// run runs rule d on text[ls:le] (a multiline rule on its window).
func (s *lineScan) run(d int, ls, le int) error {
	det := &s.ix.dets[d]
	off, t := ls, s.text[ls:le]
	if det.multiline {
		off = windowStart(s.text, ls)
		t = s.text[off:min(len(s.text), le+windowAfter)]
	}
	found, err := det.find(t)
	if err != nil {
		return err
	}
	for _, sp := range found {
		sp.rule = cmp.Or(sp.rule, det.id)
		s.spans = append(s.spans, span{sp.start + off, sp.end + off, sp.rule})
	}
	return nil
}

// decodeLine runs the rules on what text[ls:le] hides encoded, to maxDecodeDepth.
func (s *lineScan) decodeLine(ls, le int) error {
	if s.depth >= maxDecodeDepth {
		return nil
	}
	found, err := s.r.decoded(s.text[ls:le], s.depth)
	if err != nil {
		return err
	}
	for _, sp := range found {
		s.spans = append(s.spans, span{sp.start + ls, sp.end + ls, sp.rule})
	}
	return nil
}

// segment scans a line of at most longLine bytes with every rule whose
// keyword it holds, and every keywordless rule that accepts it.
func (s *lineScan) segment(ls, le int) error {
	clear(s.hits)
	s.ix.trie.Walk(s.lower[ls:le], s.markHit)
	line := s.text[ls:le]
	for _, d := range s.ix.keywordless {
		if f := s.ix.dets[d].line; f == nil || f(line) {
			s.hits[d>>6] |= 1 << (d & 63)
		}
	}
	for w, word := range s.hits {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			word &= word - 1
			if err := s.run(w*64+b, ls, le); err != nil {
				return err
			}
		}
	}
	return s.decodeLine(ls, le)
}

// long scans a long line (minified code, a blob): a rule runs only on
// windows of keywordReach bytes around its keywords; keywordless rules and
// the decoder still see the whole line.
func (s *lineScan) long(ls, le int) error {
	if s.wins == nil {
		s.wins = make([][][2]int, len(s.ix.dets))
	}
	wins := s.wins
	for d := range wins {
		wins[d] = wins[d][:0]
	}
	s.ix.trie.Walk(s.lower[ls:le], func(end, n, pattern int64) bool {
		ws, we := max(ls, ls+int(end-n+1)-keywordReach), min(le, ls+int(end)+1+keywordReach)
		for _, d := range s.ix.byPattern[pattern] {
			// Windows stay short (regexps are much faster on short inputs).
			if k := len(wins[d]); k > 0 && wins[d][k-1][1] >= ws && we-wins[d][k-1][0] <= maxWindow {
				wins[d][k-1][1] = we
			} else {
				wins[d] = append(wins[d], [2]int{ws, we})
			}
		}
		return true
	})
	for d, ws := range wins {
		for _, w := range ws {
			if err := s.run(d, w[0], w[1]); err != nil {
				return err
			}
		}
	}
	line := s.text[ls:le]
	for _, d := range s.ix.keywordless {
		if f := s.ix.dets[d].line; f == nil || f(line) {
			if err := s.run(d, ls, le); err != nil {
				return err
			}
		}
	}
	return s.decodeLine(ls, le)
}

// windowStart is windowBefore bytes before ls, at a line start if one is that near.
func windowStart(text string, ls int) int {
	off := max(0, ls-windowBefore)
	if nl := strings.IndexByte(text[off:ls], '\n'); nl >= 0 && off > 0 && text[off-1] != '\n' {
		return off + nl + 1
	}
	return off
}

// minRepeat is the shortest secret value searched for elsewhere in the
// text; shorter ones are too likely ordinary substrings.
const minRepeat = 8

// repeats finds further occurrences of single-line secret values.
func repeats(text string, spans []span) []span {
	var values []string
	var rules []string
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
		values = append(values, v)
		rules = append(rules, s.rule)
	}
	if len(values) == 0 {
		return nil
	}
	var out []span
	if len(values) <= 16 {
		// A few values: a search each beats an automaton (2 KB per state).
		for k, v := range values {
			for i := 0; ; {
				j := strings.Index(text[i:], v)
				if j < 0 {
					break
				}
				out = append(out, span{i + j, i + j + len(v), rules[k]})
				i += j + len(v)
			}
		}
		return out
	}
	// Many values: index them by their first eight bytes, and look at the
	// positions whose first two bytes start some value.
	byPrefix := map[uint64][]int{}
	var first [(1 << 16) / 64]uint64
	for k, v := range values {
		key := binary.LittleEndian.Uint64([]byte(v[:8]))
		byPrefix[key] = append(byPrefix[key], k)
		b := uint16(v[0]) | uint16(v[1])<<8
		first[b>>6] |= 1 << (b & 63)
	}
	for i := 0; i+minRepeat <= len(text); i++ {
		b := uint16(text[i]) | uint16(text[i+1])<<8
		if first[b>>6]&(1<<(b&63)) == 0 {
			continue
		}
		for _, k := range byPrefix[binary.LittleEndian.Uint64([]byte(text[i:i+8]))] {
			if strings.HasPrefix(text[i:], values[k]) {
				out = append(out, span{i, i + len(values[k]), rules[k]})
			}
		}
	}
	return out
}

// fallback rules catch what specific rules miss; where they overlap, the
// specific one decides what is cut and its name.
func fallback(rule string) bool {
	return strings.HasPrefix(rule, "generic-") || rule == "credential-assignment"
}

func dropFallbackOverlaps(spans []span) []span {
	specific := slices.DeleteFunc(slices.Clone(spans), func(s span) bool { return fallback(s.rule) })
	if len(specific) == 0 || len(specific) == len(spans) {
		return spans
	}
	covered := merge(specific) // sorted and disjoint
	return slices.DeleteFunc(spans, func(s span) bool {
		if s.rule != "credential-assignment" {
			return false // gitleaks' generic spans keep gitleaks' own behaviour
		}
		i, _ := slices.BinarySearchFunc(covered, s.end, func(o span, end int) int { return o.start - end })
		return i > 0 && covered[i-1].end > s.start
	})
}

// tokenRe matches the token writeToken leaves in place of a secret, its
// rule id the first group: the one form, rescans and TokenRules alike.
// Every rule id, ours and gitleaks', is lower-case kebab; a wider class
// would let more text that only looks like a token shield a secret.
var tokenRe = lazy(`\[REDACTED:([a-z0-9-]+)\]`)

// dropInsideTokens discards spans inside an existing token, so a rescan
// does not redact the redaction.
func dropInsideTokens(text string, spans []span) []span {
	if len(spans) == 0 || !strings.Contains(text, "[REDACTED:") {
		return spans
	}
	tokens := tokenRe().FindAllStringIndex(text, -1)
	return slices.DeleteFunc(spans, func(s span) bool {
		i, _ := slices.BinarySearchFunc(tokens, s.start, func(t []int, x int) int { return t[0] - x })
		for _, k := range []int{i - 1, i} {
			if k >= 0 && k < len(tokens) && s.start >= tokens[k][0] && s.end <= tokens[k][1] {
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

// merge sorts spans and joins overlapping ones, named by the earliest, then
// longest, then non-generic, then alphabetically first rule: the result
// does not depend on the order rules ran in.
func merge(spans []span) []span {
	if len(spans) == 0 {
		return nil
	}
	slices.SortFunc(spans, func(a, b span) int {
		if c := cmp.Or(a.start-b.start, b.end-a.end); c != 0 {
			return c
		}
		// As in gitleaks' report: a specific rule names the secret rather
		// than the generic one that also matched it.
		if ga, gb := fallback(a.rule), fallback(b.rule); ga != gb {
			if ga {
				return 1
			}
			return -1
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

// A line inside a multiline span keeps its indentation and, when the span
// starts on a diff line, its diff marker (a PEM armor line also starts "-").
var (
	indentPrefix   = lazy(`^[ \t]*`)
	diffLinePrefix = lazy(`^[+\- ]?[ \t]*`)
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
			p := prefix().FindString(line)
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
	for i := 0; ; {
		j := strings.IndexByte(text[i:], '\n')
		if j < 0 {
			return starts
		}
		i += j + 1
		starts = append(starts, i)
	}
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
	slices.SortFunc(ms, func(a, b Match) int { return cmp.Or(a.Line-b.Line, strings.Compare(a.Rule, b.Rule)) })
	return slices.Compact(ms)
}

func mayHoldIP(line string) bool {
	return strings.Count(line, ".") >= 3 || strings.Count(line, ":") >= 2
}

// asciiLower lower-cases ASCII only, so byte offsets stay the text's.
func asciiLower(s string) []byte {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return b
}

// Sanitize redacts diagnostic text under r's own policy (confidential hosts,
// say) on top of package sanitize; if redaction fails, the text is withheld.
func (r *Redactor) Sanitize(s string) string {
	out, _, err := r.Redact(s)
	if err != nil {
		return "[text withheld: redaction failed]"
	}
	return out
}

// ConfigReader is the part of a function's configuration reader the policy
// needs (config.Reader).
type ConfigReader interface {
	Bool(settings.FlagVar) bool
	List(settings.TextVar) []string
}

// PolicyFromConfig reads the policy fetch and review share (a proof made
// under one policy does not vouch for another): REDACT_EMAILS,
// CONFIDENTIAL_DOMAINS and CONFIDENTIAL_CIDRS (comma-separated).
func PolicyFromConfig(c ConfigReader) Policy {
	return Policy{RedactEmails: c.Bool(settings.RedactEmails),
		ConfidentialDomains: c.List(settings.ConfidentialDomains), ConfidentialCIDRs: c.List(settings.ConfidentialCIDRs)}
}

// lazy returns a package-level regular expression compiled on first use, so
// a function's cold start pays for none of this package's expressions (every
// function links the package through the sanitizer).
func lazy(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
