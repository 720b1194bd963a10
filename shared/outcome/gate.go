package outcome

import (
	"errors"
	"fmt"
)

// The rollout gate's defaults (cdk.json acceptanceMargin, acceptanceMinSample):
// at most 5 points below stable, on at least 30 judged findings each.
const (
	DefaultMargin    = 0.05
	DefaultMinSample = 30
)

// Measured is a version's acceptance over a window: findings judged
// (accepted or dismissed) and the share accepted.
type Measured struct {
	Judged int
	Share  float64
}

// Gate judges a candidate's acceptance against the version it would
// replace (issue 32's rollout gate).
type Gate struct {
	Margin    float64 // how far below the stable share the candidate may be
	MinSample int     // judged findings each side needs, at least 1
}

// ErrWorseAcceptance is the refusal of Promotable.
var ErrWorseAcceptance = errors.New("candidate acceptance not promotable")

// Promotable refuses too few judged findings on either side, or a share below
// stable's by more than the margin; the error gives both.
func (g Gate) Promotable(candidate, stable Measured) error {
	minimum := max(g.MinSample, 1)
	both := fmt.Sprintf("candidate %s, current %s", candidate, stable)
	switch {
	case candidate.Judged < minimum:
		return fmt.Errorf("%w: %s: the candidate has %d judged finding(s), at least %d needed (acceptanceMinSample)", ErrWorseAcceptance, both, candidate.Judged, minimum)
	case stable.Judged < minimum:
		return fmt.Errorf("%w: %s: the current version has %d judged finding(s) to compare with, at least %d needed (acceptanceMinSample)", ErrWorseAcceptance, both, stable.Judged, minimum)
	case candidate.Share < stable.Share-g.Margin:
		return fmt.Errorf("%w: %s: the candidate is %.1f points below the current version, more than the margin of %.1f (acceptanceMargin)",
			ErrWorseAcceptance, both, 100*(stable.Share-candidate.Share), 100*g.Margin)
	}
	return nil
}

func (m Measured) String() string {
	return fmt.Sprintf("%.1f%% accepted of %d judged", 100*m.Share, m.Judged)
}
