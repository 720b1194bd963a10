package outcome

import "github.com/criticizer/criticizer/shared/obs"

// AcceptanceMetric is the metric a settled fate emits (CloudWatch EMF, via
// obs.Metrics): 1 when a finding is accepted, 0 when it is dismissed, so
// over any period its Average is the acceptance share and its SampleCount
// the findings settled. It is put twice: with PromptVersion and Model (what
// `criticizer promote` compares the canary by) and with Environment only
// (what the rollback alarm, AcceptanceAlarm, watches). Depot path, rule and
// category stay out of the dimensions: each distinct value would be a
// metric of its own (CloudWatch bills and lists per dimension combination);
// the report reads those from the records instead.
const AcceptanceMetric = "FindingAccepted"

// Metrics is where settled fates are told (obs.Metrics); nil tells nobody.
type Metrics interface {
	Put(name string, value float64, unit string, dims map[string]string)
}

// Settled emits rec's move from one fate to another when it settles it:
// into accepted from anything not accepted, or into dismissed from anything
// not dismissed. A move within a class (liked, then addressed) emits
// nothing, so a finding counts once; one that flips class (liked, then
// archived) counts in both, as the later reaction is news the earlier
// count did not have.
func Settled(m Metrics, rec Record, from, to Fate) {
	if m == nil {
		return
	}
	var v float64
	switch {
	case to.Accepted() && !from.Accepted():
		v = 1
	case to.Dismissive() && !from.Dismissive():
		v = 0
	default:
		return
	}
	// The name is spelled out (it is AcceptanceMetric) so infra's
	// TestAlarmMetricsAreEmitted finds the Put of what the alarm watches.
	m.Put("FindingAccepted", v, obs.Count, map[string]string{"PromptVersion": orNone(rec.PromptVersion), "Model": orNone(rec.Model)})
	m.Put("FindingAccepted", v, obs.Count, nil)
}

// orNone names a missing value as the report does: CloudWatch rejects an
// empty dimension value.
func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
