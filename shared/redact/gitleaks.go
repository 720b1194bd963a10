package redact

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/pelletier/go-toml/v2"
	"github.com/zricethezav/gitleaks/v8/config"
)

// The gitleaks rule set is read from the TOML the gitleaks module embeds
// (config.DefaultConfig) and evaluated here, not by gitleaks' detector:
// nothing is compiled at start-up (a rule's regexp, and its allowlists', on
// the first line holding one of its keywords, so a cold start pays nothing
// for ~220 rules), and the keyword prefilter works per line, not per fragment.
//
// The semantics are gitleaks' for content without a path: the secret is the
// rule's secretGroup (or the first non-empty group), its Shannon entropy must
// exceed the rule's minimum, and a finding the global or the rule's
// allowlists allow (regexes on secret, match or line; stopwords; AND/OR) is
// dropped. Path-only rules and path/commit conditions never apply, and
// "gitleaks:allow" is ignored. TestRecallAtLeastGitleaks holds this engine
// to gitleaks' own findings.

// glRule is one gitleaks rule, compiled on first use.
type glRule struct {
	id          string
	pattern     string
	secretGroup int
	entropy     float64
	keywords    []string
	multiline   bool // the pattern can span lines: it runs on a window, not a line
	allow       []*glAllowlist

	// back is N when the pattern starts with a lazy [\w.-]{0,N}? prefix
	// (~100 rules do): it is left out of the compiled expression (several
	// times faster) and the match start found by extending back over [\w.-],
	// the start leftmost-first matching gives.
	back int

	once sync.Once
	re   *regexp.Regexp
	err  error
}

// lazyPrefixRe finds the lazy [\w.-]{0,N}? prefix, after an optional (?i).
var lazyPrefixRe = lazy(`^(\(\?i\))?\[\\w\.-\]\{0,([0-9]+)\}\?`)

type glAllowlist struct {
	and         bool
	target      string // "" (the secret), "match" or "line"
	patterns    []string
	stopwords   []string // lower-case
	unsatisfied bool     // an AND list with path or commit conditions never allows content
	once        sync.Once
	re          *regexp.Regexp
	err         error
}

type tomlAllowlist struct {
	Condition   string   `toml:"condition"`
	RegexTarget string   `toml:"regexTarget"`
	Regexes     []string `toml:"regexes"`
	StopWords   []string `toml:"stopwords"`
	Paths       []string `toml:"paths"`
	Commits     []string `toml:"commits"`
	TargetRules []string `toml:"targetRules"`
}

type tomlConfig struct {
	Allowlist  *tomlAllowlist  `toml:"allowlist"`
	Allowlists []tomlAllowlist `toml:"allowlists"`
	Rules      []struct {
		ID          string          `toml:"id"`
		Regex       string          `toml:"regex"`
		Path        string          `toml:"path"`
		SecretGroup int             `toml:"secretGroup"`
		Entropy     float64         `toml:"entropy"`
		Keywords    []string        `toml:"keywords"`
		Allowlist   *tomlAllowlist  `toml:"allowlist"`
		Allowlists  []tomlAllowlist `toml:"allowlists"`
		SkipReport  bool            `toml:"skipReport"`
	} `toml:"rules"`
}

// glSet is the parsed gitleaks rule set, shared by every Redactor.
type glSet struct {
	rules  []*glRule
	global []*glAllowlist
}

var (
	glOnce  sync.Once
	glRules *glSet
	glErr   error
)

// gitleaksRules parses the embedded gitleaks config once per process.
func gitleaksRules() (*glSet, error) {
	glOnce.Do(func() { glRules, glErr = parseGitleaks(config.DefaultConfig) })
	return glRules, glErr
}

func parseGitleaks(src string) (*glSet, error) {
	var c tomlConfig
	if err := toml.Unmarshal([]byte(src), &c); err != nil {
		return nil, fmt.Errorf("gitleaks config: %w", err)
	}
	set := &glSet{}
	targeted := map[string][]*glAllowlist{}
	globals := c.Allowlists
	if c.Allowlist != nil {
		globals = append(globals, *c.Allowlist)
	}
	for _, a := range globals {
		al, err := newAllowlist(a)
		if err != nil {
			return nil, err
		}
		if len(a.TargetRules) == 0 {
			set.global = append(set.global, al)
		}
		for _, id := range a.TargetRules {
			targeted[id] = append(targeted[id], al)
		}
	}
	for _, r := range c.Rules {
		if r.Regex == "" || r.Path != "" || r.SkipReport {
			continue // path rules need a file path; skipReport rules only serve composites
		}
		gr := &glRule{id: r.ID, pattern: r.Regex, secretGroup: r.SecretGroup, entropy: r.Entropy,
			multiline: strings.Contains(r.Regex, `[\s\S`) || strings.Contains(r.Regex, `(?s`)}
		for _, k := range r.Keywords {
			gr.keywords = append(gr.keywords, strings.ToLower(k))
		}
		als := r.Allowlists
		if r.Allowlist != nil {
			als = append(als, *r.Allowlist)
		}
		for _, a := range als {
			al, err := newAllowlist(a)
			if err != nil {
				return nil, fmt.Errorf("gitleaks rule %s: %w", r.ID, err)
			}
			gr.allow = append(gr.allow, al)
		}
		gr.allow = append(gr.allow, targeted[r.ID]...)
		set.rules = append(set.rules, gr)
	}
	if len(set.rules) == 0 {
		return nil, fmt.Errorf("gitleaks config has no content rules")
	}
	return set, nil
}

func newAllowlist(a tomlAllowlist) (*glAllowlist, error) {
	al := &glAllowlist{patterns: a.Regexes}
	switch strings.ToUpper(a.Condition) {
	case "AND", "&&":
		al.and = true
	case "", "OR", "||":
	default:
		return nil, fmt.Errorf("allowlist condition %q", a.Condition)
	}
	switch a.RegexTarget {
	case "", "secret":
	case "match", "line":
		al.target = a.RegexTarget
	default:
		return nil, fmt.Errorf("allowlist regexTarget %q", a.RegexTarget)
	}
	for _, w := range a.StopWords {
		al.stopwords = append(al.stopwords, strings.ToLower(w))
	}
	al.unsatisfied = al.and && (len(a.Paths) > 0 || len(a.Commits) > 0)
	return al, nil
}

func (r *glRule) compiled() (*regexp.Regexp, error) {
	r.once.Do(func() {
		pattern := r.pattern
		if m := lazyPrefixRe().FindStringSubmatch(pattern); m != nil {
			if n, err := strconv.Atoi(m[2]); err == nil && n > 0 {
				r.back = n
				pattern = m[1] + pattern[len(m[0]):]
			}
		}
		r.re, r.err = regexp.Compile(pattern)
		if r.err != nil {
			r.err = fmt.Errorf("gitleaks rule %s: %w", r.id, r.err)
		}
	})
	return r.re, r.err
}

func (a *glAllowlist) compiled() (*regexp.Regexp, error) {
	a.once.Do(func() {
		if len(a.patterns) > 0 {
			a.re, a.err = regexp.Compile("(?:" + strings.Join(a.patterns, ")|(?:") + ")")
		}
	})
	return a.re, a.err
}

// allows reports whether the allowlist drops a finding.
func (a *glAllowlist) allows(secret, match, line string) (bool, error) {
	if a.unsatisfied {
		return false, nil
	}
	re, err := a.compiled()
	if err != nil {
		return false, err
	}
	target := secret
	switch a.target {
	case "match":
		target = match
	case "line":
		target = line
	}
	regexOK := re != nil && target != "" && re.MatchString(target)
	lower := strings.ToLower(secret)
	stopOK := secret != "" && slices.ContainsFunc(a.stopwords, func(w string) bool { return strings.Contains(lower, w) })
	if !a.and {
		return regexOK || stopOK, nil
	}
	hasRe, hasStop := len(a.patterns) > 0, len(a.stopwords) > 0
	return (hasRe || hasStop) && (regexOK || !hasRe) && (stopOK || !hasStop), nil
}

// find returns the secrets the rule finds in text (a line, or a multiline
// rule's window): the secret group, so the context naming it stays.
func (r *glRule) find(set *glSet, text string) ([]span, error) {
	re, err := r.compiled()
	if err != nil {
		return nil, err
	}
	var spans []span
	prevEnd := 0
	for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
		if r.back > 0 {
			lo := max(prevEnd, m[0]-r.back)
			for m[0] > lo && isWordDotDash(text[m[0]-1]) {
				m[0]--
			}
		}
		prevEnd = m[1]
		start, end := m[0], m[1]
		// As gitleaks: the chosen group, or the first non-empty one, or the match.
		if g := r.secretGroup; len(m) > 2 {
			if g > 0 {
				if 2*g+1 >= len(m) || m[2*g] < 0 {
					continue
				}
				start, end = m[2*g], m[2*g+1]
			} else {
				for g := 1; 2*g+1 < len(m); g++ {
					if m[2*g] >= 0 && m[2*g+1] > m[2*g] {
						start, end = m[2*g], m[2*g+1]
						break
					}
				}
			}
		}
		secret := text[start:end]
		if r.entropy != 0 && shannon(secret) <= r.entropy {
			continue
		}
		match := strings.Trim(text[m[0]:m[1]], "\n")
		ls := strings.LastIndexByte(text[:m[0]], '\n') + 1
		le := strings.IndexByte(text[m[1]:], '\n')
		if le < 0 {
			le = len(text)
		} else {
			le += m[1]
		}
		line := text[ls:le]
		allowed := false
		for _, a := range slices.Concat(set.global, r.allow) {
			ok, err := a.allows(secret, match, line)
			if err != nil {
				return nil, fmt.Errorf("gitleaks rule %s allowlist: %w", r.id, err)
			}
			if allowed = ok; ok {
				break
			}
		}
		if !allowed {
			spans = append(spans, span{start: start, end: end, rule: r.id})
		}
	}
	return spans, nil
}

func isWordDotDash(c byte) bool { return isAlnum(c) || c == '_' || c == '.' || c == '-' }

// shannon is gitleaks' entropy (rune frequencies over the byte length), so its thresholds hold.
func shannon(s string) float64 {
	if s == "" {
		return 0
	}
	var ascii [128]int
	var other map[rune]int
	for _, c := range s {
		if c < 128 {
			ascii[c]++
			continue
		}
		if other == nil {
			other = map[rune]int{}
		}
		other[c]++
	}
	inv := 1.0 / float64(len(s))
	e := 0.0
	add := func(n int) {
		if n > 0 {
			f := float64(n) * inv
			e -= f * math.Log2(f)
		}
	}
	for _, n := range ascii {
		add(n)
	}
	for _, n := range other {
		add(n)
	}
	return e
}
