package result

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"gopkg.in/yaml.v3"

	"github.com/criticizer/criticizer/shared/domain"
)

// MaxRulesFileBytes bounds a rules file; a larger one is rejected.
const MaxRulesFileBytes = 64 << 10

//go:embed rules.schema.json
var rulesSchemaJSON []byte

var rulesSchema = sync.OnceValue(func() *jsonschema.Schema {
	return compileSchema("rules schema", rulesSchemaJSON, "urn:criticizer:rules.schema.json", "")[0]
})

// Rules are a team's review rules: what to tell the model about which
// paths, which files not to review, and which findings to report. The zero
// value reports everything the model finds.
type Rules struct {
	Instructions      []Instruction `json:"instructions,omitempty"`
	Ignore            []string      `json:"ignore,omitempty"`             // lists path patterns of files not to review ("ignored by rule").
	SeverityThreshold string        `json:"severity_threshold,omitempty"` // drops model findings less severe than it.
	// MaxFindings caps the findings of one e-mail (most severe kept); 0
	// means no cap.
	MaxFindings        int      `json:"max_findings,omitempty"`
	DisabledCategories []string `json:"disabled_categories,omitempty"` // drops model findings in these categories.
	// GateSeverity: findings at or above it, in the files under these
	// rules, fail the review's Swarm test run; "off" never does; "" leaves
	// it to the environment (SWARM_GATE_SEVERITY).
	GateSeverity string `json:"gate_severity,omitempty"`
	// DismissalSuppression sets the noise filter (package outcome) for the
	// files under these rules; nil leaves it to the environment.
	DismissalSuppression *DismissalSuppression `json:"dismissal_suppression,omitempty"`
}

// DismissalSuppression is a team's say over what it dismissed: After is N (nil:
// the environment's DISMISS_THRESHOLD; 0: nothing withheld); Never lists kinds always reported.
type DismissalSuppression struct {
	After *int     `json:"after,omitempty"`
	Never []string `json:"never,omitempty"`
}

// Instruction is text added to the prompt for the files whose path matches
// one of Paths.
type Instruction struct {
	Paths []string `json:"paths"`
	Text  string   `json:"text"`
}

// Path patterns are matched against a file's path relative to its rules
// file's root (for the defaults, the depot path without "//"): "*" and "?"
// within a segment, "**" and Perforce's "..." across segments ("**/" also
// none), and a pattern without "/" matches the file name at any depth.
func matchPattern(pattern, rel string) bool {
	re, err := patternRE(pattern)
	if err != nil {
		return false
	}
	if !strings.Contains(pattern, "/") {
		return re.MatchString(path.Base(rel))
	}
	return re.MatchString(strings.TrimPrefix(rel, "/"))
}

var patternCache sync.Map // pattern -> *regexp.Regexp

func patternRE(p string) (*regexp.Regexp, error) {
	if v, ok := patternCache.Load(p); ok {
		return v.(*regexp.Regexp), nil
	}
	var b strings.Builder
	b.WriteString("^")
	s := strings.TrimPrefix(p, "/")
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "**/"):
			b.WriteString("(?:.*/)?") // zero or more whole segments
			i += 2
		case strings.HasPrefix(s[i:], "**"):
			b.WriteString(".*")
			i++
		case strings.HasPrefix(s[i:], "..."):
			b.WriteString(".*")
			i += 2
		case s[i] == '*':
			b.WriteString("[^/]*")
		case s[i] == '?':
			b.WriteString("[^/]")
		default:
			b.WriteString(regexp.QuoteMeta(s[i : i+1]))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, err
	}
	patternCache.Store(p, re)
	return re, nil
}

// ParseRules reads a rules file (YAML or JSON) and validates it against the
// embedded schema; an invalid file yields the zero Rules and why.
func ParseRules(data []byte) (Rules, []string) {
	if len(data) > MaxRulesFileBytes {
		return Rules{}, []string{fmt.Sprintf("file is %d bytes, limit %d", len(data), MaxRulesFileBytes)}
	}
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return Rules{}, []string{"not valid YAML or JSON: " + oneLineErr(err)}
	}
	if doc == nil {
		return Rules{}, nil // an empty file: no rules
	}
	// Through JSON, so the schema sees JSON types (YAML's ints, maps).
	js, err := json.Marshal(doc)
	if err != nil {
		return Rules{}, []string{"not representable as JSON (use string keys): " + oneLineErr(err)}
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return Rules{}, []string{oneLineErr(err)}
	}
	if err := rulesSchema().Validate(inst); err != nil {
		return Rules{}, rulesViolations(err)
	}
	var r Rules
	if err := json.Unmarshal(js, &r); err != nil {
		return Rules{}, []string{oneLineErr(err)}
	}
	for _, p := range allPatterns(r) {
		if _, err := patternRE(p); err != nil {
			return Rules{}, []string{fmt.Sprintf("pattern %q: %v", p, err)}
		}
	}
	return r, nil
}

func allPatterns(r Rules) []string {
	out := slices.Clone(r.Ignore)
	for _, in := range r.Instructions {
		out = append(out, in.Paths...)
	}
	return out
}

var englishPrinter = message.NewPrinter(language.English)

// rulesViolations names each rejected rule by its location in the file.
func rulesViolations(err error) []string {
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return []string{oneLineErr(err)}
	}
	var out []string
	for _, e := range leafErrors(ve) {
		loc := "/" + strings.Join(e.InstanceLocation, "/")
		out = append(out, fmt.Sprintf("%s: %s", loc, oneLineErr(e.ErrorKind.LocalizedString(englishPrinter))))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func oneLineErr(v any) string {
	s := strings.Join(strings.Fields(fmt.Sprint(v)), " ") // an error's Sprint is its Error()
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// RuleSet is the rules of one changelist: each allow-listed root's rules
// file (domain.RulesFileName) as the depot held it before the change (read
// by shared/p4), and the environment's defaults for files under none.
type RuleSet struct {
	Defaults Rules       `json:"defaults"`
	Roots    []RootRules `json:"roots,omitempty"`
}

// RootRules is one allow-listed root's rules file.
type RootRules struct {
	Root   string `json:"root"`   // the depot path prefix, ending in "/", e.g. "//depot/game/".
	Source string `json:"source"` // names the file and revision read, e.g. "//depot/game/.criticizer.yaml@41".
	Rules  Rules  `json:"rules"`
	// Rejected says why the file was rejected (Rules is then unused and the
	// defaults apply to the root's files).
	Rejected []string `json:"rejected,omitempty"`
}

// For returns the rules of file (its nearest root's if accepted, else the
// defaults) and the path relative to their root.
func (s RuleSet) For(file string) (Rules, string) {
	best := -1
	for i, r := range s.Roots {
		if strings.HasPrefix(file, r.Root) && (best < 0 || len(r.Root) > len(s.Roots[best].Root)) {
			best = i
		}
	}
	if best >= 0 && len(s.Roots[best].Rejected) == 0 {
		return s.Roots[best].Rules, strings.TrimPrefix(file, s.Roots[best].Root)
	}
	root := "//"
	if best >= 0 && s.Roots[best].Root != "" {
		root = s.Roots[best].Root
	}
	return s.Defaults, strings.TrimPrefix(file, root)
}

// Gates maps each finding's ID to the gate severity its file's rules set
// (GateSeverity), for the findings whose rules set one.
func (s RuleSet) Gates(fs []domain.Finding) map[string]string {
	var out map[string]string
	for _, f := range fs {
		if r, _ := s.For(f.File); r.GateSeverity != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[f.ID] = r.GateSeverity
		}
	}
	return out
}

// SuppressAfter maps each finding's ID to the N its file's
// dismissal_suppression sets (0 when its kind is in never), for the
// findings whose rules say anything; the others follow the environment.
func (s RuleSet) SuppressAfter(fs []domain.Finding, kind func(domain.Finding) string) map[string]int {
	var out map[string]int
	for _, f := range fs {
		r, _ := s.For(f.File)
		d := r.DismissalSuppression
		if d == nil {
			continue
		}
		n := -1
		switch {
		case slices.Contains(d.Never, kind(f)):
			n = 0
		case d.After != nil:
			n = *d.After
		}
		if n < 0 {
			continue
		}
		if out == nil {
			out = map[string]int{}
		}
		out[f.ID] = n
	}
	return out
}

// Ignored reports whether file matches an ignore pattern of its rules.
func (s RuleSet) Ignored(file string) bool {
	r, rel := s.For(file)
	return slices.ContainsFunc(r.Ignore, func(p string) bool { return matchPattern(p, rel) })
}

// InstructionsFor returns the instruction texts that apply to file, in the
// order the rules list them.
func (s RuleSet) InstructionsFor(file string) []string {
	r, rel := s.For(file)
	var out []string
	for _, in := range r.Instructions {
		for _, p := range in.Paths {
			if matchPattern(p, rel) {
				out = append(out, in.Text)
				break
			}
		}
	}
	return out
}

// Describe lists the rules files applied and those rejected, for the
// result's meta and the e-mail.
func (s RuleSet) Describe() (applied, rejected []string) {
	for _, r := range s.Roots {
		if len(r.Rejected) > 0 {
			for _, why := range r.Rejected {
				rejected = append(rejected, fmt.Sprintf("%s: %s (defaults applied)", r.Source, why))
			}
			continue
		}
		applied = append(applied, r.Source)
	}
	return applied, rejected
}

// Filter applies each file's rules to the model's findings (the pipeline's,
// committed secrets, are certain and never filtered), orders them most
// severe first and applies the smallest max_findings in play. It returns
// the findings kept, those threshold and categories removed, and those the cap hid.
func (s RuleSet) Filter(fs []domain.Finding) (kept, filtered, hidden []domain.Finding) {
	for _, f := range fs {
		if !strings.HasPrefix(f.RuleID, SecretRulePrefix) {
			r, _ := s.For(f.File)
			if r.SeverityThreshold != "" && domain.SeverityRank(f.Severity) > domain.SeverityRank(r.SeverityThreshold) ||
				slices.Contains(r.DisabledCategories, f.Category) {
				filtered = append(filtered, f)
				continue
			}
		}
		kept = append(kept, f)
	}
	SortFindings(kept)
	limit := s.Defaults.MaxFindings
	for _, r := range s.Roots {
		if len(r.Rejected) == 0 && r.Rules.MaxFindings > 0 && (limit == 0 || r.Rules.MaxFindings < limit) {
			limit = r.Rules.MaxFindings
		}
	}
	if limit > 0 && len(kept) > limit {
		hidden = kept[limit:]
		kept = kept[:limit:limit]
	}
	return kept, filtered, hidden
}

// Digest identifies the rules in play, rejected parts included: reviews
// under equal digests keep and withhold findings alike.
func (s RuleSet) Digest() string {
	b, _ := json.Marshal(s) // plain fields always marshal
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ResolveRules parses each rules file into the RuleSet's roots; an
// unreadable or invalid one is kept with why, for the e-mail.
func ResolveRules(files []domain.RulesFile) RuleSet {
	var rs RuleSet
	for _, f := range files {
		rr := RootRules{Root: f.Root, Source: f.Source}
		if f.Unreadable != "" {
			rr.Rejected = []string{f.Unreadable}
		} else {
			rr.Rules, rr.Rejected = ParseRules([]byte(f.Content))
		}
		rs.Roots = append(rs.Roots, rr)
	}
	return rs
}
