package outcome

import (
	"fmt"
	"slices"
	"strings"

	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/swarm"
)

// Policy is the noise filter, stated once and read by everything that withholds
// or lists a withheld kind, built by PolicyFromEnv alone, with per finding what
// its review rules say (WithRules).
//
// A kind is withheld under its scope when, with none accepted there, its
// dismissals with standing number at least Threshold, by at least MinPeople
// people across MinReviews reviews, and under Confirm an operator confirmed it.
// Never withheld: a finding at or above its gate severity (high when off),
// security, a committed secret.
type Policy struct {
	// Threshold is N (DISMISS_THRESHOLD): dismissals with standing.
	Threshold int
	// Depth (DISMISS_SCOPE_DEPTH): directories below the depot making a scope.
	Depth int
	// MinPeople, MinReviews (DISMISS_MIN_PEOPLE, DISMISS_MIN_REVIEWS): one
	// person or review never withholds alone.
	MinPeople, MinReviews int
	// Gate (SWARM_GATE_SEVERITY; "" when off): findings at or above it (or high)
	// are never withheld, so withholding never changes a gate result.
	Gate string
	// Confirm (DISMISS_CONFIRM): a suppression waits for `criticizer outcomes
	// confirm`.
	Confirm bool
	// Bots (DISMISS_BOT_LOGINS): logins whose reactions never count.
	Bots []string
	// Deciders (DISMISS_DECIDERS) may decide on every review: logins, and groups
	// as swarm-group-<name> whose members (subgroups too) count.
	Deciders []string
	// rules and gates are the review rules' per finding (WithRules).
	rules map[string]int
	gates map[string]string
}

// PolicyFromEnv is the one loader (defaults and ranges: shared/settings).
func PolicyFromEnv(r *config.Reader) Policy {
	p := Policy{Threshold: r.Int("DISMISS_THRESHOLD"), Depth: r.Int("DISMISS_SCOPE_DEPTH"),
		MinPeople: r.Int("DISMISS_MIN_PEOPLE"), MinReviews: r.Int("DISMISS_MIN_REVIEWS"),
		Confirm: r.Bool("DISMISS_CONFIRM"), Bots: r.List("DISMISS_BOT_LOGINS"), Deciders: r.List("DISMISS_DECIDERS")}
	g := strings.ToLower(strings.TrimSpace(r.Optional("SWARM_GATE_SEVERITY")))
	switch {
	case g == "off" || g == "":
	case slices.Contains(domain.Severities, g):
		p.Gate = g
	default:
		r.Fail(fmt.Errorf("SWARM_GATE_SEVERITY=%q: want off or one of %s", g, strings.Join(domain.Severities, ", ")))
	}
	return p
}

// DefaultPolicy is the policy of an environment that sets none of it.
func DefaultPolicy() Policy { return PolicyFromEnv(config.NewReaderFrom(nil)) }

// WithRules is p for one review: per finding the rules file's
// dismissal_suppression (0: never withheld) and gate_severity.
func (p Policy) WithRules(meta domain.ReviewMeta) Policy {
	p.rules, p.gates = meta.SuppressAfter, meta.Gates
	return p
}

// ScopeAt is file's scope at depth directories below the depot.
func ScopeAt(file string, depth int) string { return PathGroup(file, depth+1) }

// Scope is the depot path pattern a finding on file counts under.
func (p Policy) Scope(file string) string { return ScopeAt(file, max(p.Depth, 1)) }

// PathDepth is the report's PathGroup depth that makes a group a scope.
func (p Policy) PathDepth() int { return max(p.Depth, 1) + 1 }

// threshold is N for f: its rules', else the environment's.
func (p Policy) threshold(f domain.Finding) int {
	if n, set := p.rules[f.ID]; set {
		return n
	}
	return p.Threshold
}

// Floor is the severity at and above which f is never withheld: its rules' gate,
// else the environment's, else high.
func (p Policy) Floor(f domain.Finding) string {
	g, set := p.gates[f.ID]
	if !set {
		g = p.Gate
	}
	if g == "" || g == "off" {
		return "high"
	}
	return g
}

// NeverWithheld reports whether f is at or above its floor, security, or a committed secret.
func (p Policy) NeverWithheld(f domain.Finding) bool {
	floor := slices.Index(domain.Severities, p.Floor(f))
	return committedSecret(f) || strings.EqualFold(f.Category, "security") ||
		floor < 0 || domain.SeverityRank(f.Severity) <= floor
}

// Withholds reports whether f is withheld by its kind's tally s.
func (p Policy) Withholds(s Suppression, f domain.Finding) bool {
	return !p.NeverWithheld(f) && p.activeAt(s, p.threshold(f))
}

// Active reports whether s withholds at the environment's N.
func (p Policy) Active(s Suppression) bool { return p.activeAt(s, p.Threshold) }

// Awaiting reports whether s would withhold but waits for confirmation.
func (p Policy) Awaiting(s Suppression) bool {
	return p.Confirm && !s.Confirmed && p.meets(s, p.Threshold)
}

func (p Policy) activeAt(s Suppression, n int) bool {
	return p.meets(s, n) && (!p.Confirm || s.Confirmed)
}

// meets: the dismissals with standing suffice and nothing was accepted.
func (p Policy) meets(s Suppression, n int) bool {
	if n <= 0 || s.Allowed || s.Accepted > 0 {
		return false
	}
	count, people, reviews := s.Standing()
	return count >= n && people >= max(p.MinPeople, 1) && reviews >= max(p.MinReviews, 1)
}

// Standing keeps of by the deciders (decidersOf), never the service (self) or a
// bot.
func (p Policy) Standing(by []string, self string, deciders []string) []string {
	var out []string
	for _, u := range by {
		if u != "" && u != self && !slices.Contains(p.Bots, u) && slices.Contains(deciders, u) {
			out = append(out, u)
		}
	}
	return out
}

// decidersNamed splits Deciders into logins and group names.
func (p Policy) decidersNamed() (users, groups []string) {
	for _, d := range p.Deciders {
		if g, ok := strings.CutPrefix(d, swarm.GroupPrefix); ok {
			groups = append(groups, g)
		} else {
			users = append(users, d)
		}
	}
	return users, groups
}

// Describe says the policy in one sentence, for listings and digests.
func (p Policy) Describe() string {
	s := fmt.Sprintf("a kind is withheld under its scope (%d director%s below the depot) after %d dismissals, with none accepted, by at least %d people with a say on their review across at least %d reviews",
		max(p.Depth, 1), domain.PluralOf(max(p.Depth, 1), "y", "ies"), p.Threshold, max(p.MinPeople, 1), max(p.MinReviews, 1))
	if p.Confirm {
		s += ", once an operator confirms it (criticizer outcomes confirm)"
	}
	floor := "high"
	if p.Gate != "" {
		floor = p.Gate
	}
	return s + fmt.Sprintf("; findings at or above %s, security findings and committed secrets are never withheld", floor)
}
