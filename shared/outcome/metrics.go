package outcome

import "github.com/criticizer/criticizer/shared/obs"

// The acceptance metrics a fate's move between classes emits (CloudWatch
// EMF, via obs.Metrics), as deltas, so that over any period
// Sum(AcceptanceMetric) / Sum(JudgedMetric) is the share of findings
// accepted and Sum(JudgedMetric) the findings judged, each finding
// counted once however often it flips:
//
//   - JudgedMetric: +1 when a finding enters a judged class (accepted or
//     dismissed) from neither, -1 when it leaves both, 0 on a flip between
//     them;
//   - AcceptanceMetric: +1 entering accepted, -1 leaving it, 0 otherwise.
//
// Archived then liked is one judged finding, accepted: (+1, 0) then
// (0, +1); fates follow the one precedence (Decide), under which a judged
// finding returns to neither only when a person retracts their dismissal
// (-1, 0), and an accepted one never leaves accepted. A flip lands in the period it happens in, so a period's sum is
// the net change of that period, and sums over adjacent periods add up to
// the sum over their union (a flip across them counts once).
//
// Both are put twice: with PromptVersion and Model (what `criticizer
// promote` compares the canary by) and with Environment only (what the
// rollback alarm, AcceptanceAlarm, watches). Depot path, rule and category
// stay out of the dimensions: each distinct value would be a metric of its
// own (CloudWatch bills and lists per dimension combination); the report
// reads those from the records instead.
const (
	AcceptanceMetric = "FindingAccepted"
	JudgedMetric     = "FindingJudged"
)

// Metrics is where judged fates are told (obs.Metrics); nil tells nobody.
type Metrics interface {
	Put(name string, value float64, unit string, dims map[string]string)
}

// FateMoved emits rec's move from one fate to another as the deltas of the
// acceptance metrics. A move within a class (liked, then addressed), or
// between two unjudged fates, emits nothing.
func FateMoved(m Metrics, rec Record, from, to Fate) {
	judged, accepted := count(to.judged())-count(from.judged()), count(to.Accepted())-count(from.Accepted())
	if m == nil || judged == 0 && accepted == 0 {
		return
	}
	byVersion := map[string]string{"PromptVersion": orNone(rec.PromptVersion), "Model": orNone(rec.Model)}
	// The names are spelled out (they are JudgedMetric and
	// AcceptanceMetric) so infra's TestAlarmMetricsAreEmitted finds the Put
	// of what the alarm watches.
	m.Put("FindingJudged", judged, obs.Count, byVersion)
	m.Put("FindingAccepted", accepted, obs.Count, byVersion)
	m.Put("FindingJudged", judged, obs.Count, nil)
	m.Put("FindingAccepted", accepted, obs.Count, nil)
}

// judged reports whether f is a reaction that counts: accepted or dismissed.
func (f Fate) judged() bool { return f.Accepted() || f.Dismissive() }

func count(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// orNone names a missing value as the report does: CloudWatch rejects an
// empty dimension value.
func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
