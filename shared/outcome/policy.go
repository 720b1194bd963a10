package outcome

import (
	"context"

	"github.com/criticizer/criticizer/shared/domain"
)

// Policy is how the noise filter is set for one review: the environment's
// N and scope depth (DISMISS_THRESHOLD, DISMISS_SCOPE_DEPTH) and, per
// finding, what the review rules file of its path says
// (dismissal_suppression). The zero Policy is the defaults.
type Policy struct {
	// Threshold is N, the dismissals with no acceptance after which a kind
	// is withheld; DismissThreshold when 0.
	Threshold int
	// Depth is how many directories below the depot make a scope: 1 is
	// //depot/<first dir>/...; the default (ScopeDepth) when 0.
	Depth int
	// For returns the N a finding's review rules set for it (0: never
	// withheld there), and whether they set one; nil: none do.
	For func(f domain.Finding) (n int, set bool)
}

// ScopeAt is the scope of a finding on file at depth directories below the
// depot (depth 1: //depot/<first dir>/...).
func ScopeAt(file string, depth int) string { return PathGroup(file, depth+1) }

// Scope is the scope a record counts under.
func (p Policy) Scope(file string) string {
	if p.Depth <= 0 {
		return Scope(file)
	}
	return ScopeAt(file, p.Depth)
}

// threshold is N for f: its rules', else the environment's.
func (p Policy) threshold(f domain.Finding) int {
	if p.For != nil {
		if n, set := p.For(f); set {
			return n
		}
	}
	if p.Threshold > 0 {
		return p.Threshold
	}
	return DismissThreshold
}

// ActiveAt reports whether the kind is withheld under its scope with N = n
// (0: never).
func (s Suppression) ActiveAt(n int) bool {
	return n > 0 && !s.Allowed && s.Accepted == 0 && s.Dismissed >= int64(n)
}

// tallyScope is the scope the record's fate counts under.
func (r Record) tallyScope() string {
	if r.Scope != "" {
		return r.Scope
	}
	return Scope(r.File)
}

// WithheldBy is WithheldHere under p: each finding against its own N and
// its scope at p's depth. Committed secrets are never withheld; a finding
// whose rules set N to 0 is always reported.
func (s *Store) WithheldBy(ctx context.Context, findings []domain.Finding, p Policy) (keep, withheld []domain.Finding, err error) {
	tallied := map[string]map[string]Suppression{} // scope → category#kind
	for _, f := range findings {
		sc := p.Scope(f.File)
		if _, read := tallied[sc]; read || committedSecret(f) || p.threshold(f) == 0 {
			continue
		}
		ts, err := s.Tallies(ctx, sc)
		if err != nil {
			return nil, nil, err
		}
		tallied[sc] = map[string]Suppression{}
		for _, t := range ts {
			tallied[sc][t.Category+"#"+t.Kind] = t
		}
	}
	for _, f := range findings {
		t, ok := tallied[p.Scope(f.File)][f.Category+"#"+Kind(f)]
		if ok && !committedSecret(f) && t.ActiveAt(p.threshold(f)) {
			withheld = append(withheld, f)
		} else {
			keep = append(keep, f)
		}
	}
	return keep, withheld, nil
}
