package outcome

import "github.com/criticizer/criticizer/shared/obs"

// The acceptance metrics a fate's move between classes emits (CloudWatch EMF),
// as deltas, so over any period Sum(AcceptanceMetric) / Sum(JudgedMetric) is the
// share accepted, each finding counted once however often it flips:
//
//   - JudgedMetric: +1 entering a judged class (accepted or dismissed) from neither, -1 leaving both, 0 between them;
//   - AcceptanceMetric: +1 entering accepted, -1 leaving it.
//
// Archived then liked is (+1, 0) then (0, +1). A flip lands in its period, so
// adjacent periods' sums add up.
//
// Both are put with PromptVersion and Model (what `criticizer promote` compares)
// and with Environment only (AcceptanceAlarm). Path, rule and category stay out:
// each value would be a billed metric of its own; the report reads them from the
// records.
const (
	AcceptanceMetric = "FindingAccepted"
	JudgedMetric     = "FindingJudged"
)

// Metrics is where judged fates are told (obs.Metrics); nil tells nobody.
type Metrics interface {
	Put(name string, value float64, unit string, dims map[string]string)
}

// FateMoved emits rec's move as the metrics' deltas; a move within a class emits
// nothing.
func FateMoved(m Metrics, rec Record, from, to Fate) {
	judged, accepted := count(to.judged())-count(from.judged()), count(to.Accepted())-count(from.Accepted())
	if m == nil || judged == 0 && accepted == 0 {
		return
	}
	byVersion := map[string]string{"PromptVersion": orNone(rec.PromptVersion), "Model": orNone(rec.Model)}
	// Spelled out so infra's TestAlarmMetricsAreEmitted finds the alarm's
	// metric.
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
