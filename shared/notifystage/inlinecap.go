package notifystage

import (
	"cmp"
	"slices"
	"strings"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/render"
	"github.com/criticizer/criticizer/shared/swarm"
)

// The inline cap (docs/swarm-comments.md): a version gets at most
// SWARM_MAX_INLINE_COMMENTS finding comments, which bounds the notify
// stage's time inside its budget and a review's noise. Past the cap the
// least severe findings go first (the review's order among equals); the
// summary lists them by title and file:line and says how many were not
// posted inline. The choice depends on the findings alone, so a retry
// posts the same comments, and a finding left out gets no row: a later
// version that still has it comments on it as new, within its own cap.

// capInline keeps at most max finding comments of ds (0: all), the most
// severe, in their order, and adds the ones left out to the summary.
func capInline(ds []commentDelivery, max int) []commentDelivery {
	var findings []int // indexes of finding comments in ds
	for i, d := range ds {
		if d.finding != nil {
			findings = append(findings, i)
		}
	}
	if max <= 0 || len(findings) <= max {
		return ds
	}
	ranked := slices.Clone(findings)
	slices.SortStableFunc(ranked, func(a, b int) int {
		return cmp.Compare(domain.SeverityRank(ds[a].finding.Severity), domain.SeverityRank(ds[b].finding.Severity))
	})
	left := map[int]bool{}
	for _, i := range ranked[max:] {
		left[i] = true
	}
	out := make([]commentDelivery, 0, len(ds)-len(left))
	var over []domain.Finding // in rank order: the most severe of them first
	for _, i := range ranked[max:] {
		over = append(over, *ds[i].finding)
	}
	for i, d := range ds {
		switch {
		case left[i]:
		case strings.HasPrefix(d.item.ID, swarm.KindSummary+"/"):
			d.comment.Body += render.NotInline(over, max)
			out = append(out, d)
		default:
			out = append(out, d)
		}
	}
	return out
}
