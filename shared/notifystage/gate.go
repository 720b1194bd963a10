package notifystage

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/swarm"
)

// GateFromEnv reads SWARM_GATE_SEVERITY: the severity at or above which a
// review's findings fail its Swarm test run (so a workflow that requires
// tests to pass blocks the merge). Off ("" or "off") by default: findings
// are advice unless a team opts in.
func GateFromEnv(r *config.Reader) string {
	g := strings.ToLower(strings.TrimSpace(r.Optional("SWARM_GATE_SEVERITY")))
	if g == "off" || g == "" {
		return ""
	}
	if !slices.Contains(domain.Severities, g) {
		r.Fail(fmt.Errorf("SWARM_GATE_SEVERITY=%q: want off or one of %s", g, strings.Join(domain.Severities, ", ")))
	}
	return g
}

// atOrAbove reports whether sev is gate or worse (domain.Severities runs
// worst first); no severity is at or above a gate that is none.
func atOrAbove(sev, gate string) bool {
	g := slices.Index(domain.Severities, gate)
	return g >= 0 && domain.SeverityRank(sev) <= g
}

// outcome is what the Swarm run shows of a finished review: the count,
// and under a gate the findings at or above it with the worst one named
// in our own words (severity, category, file and line: no model prose).
// A finding's gate is the one its file's review rules set (gates, by
// finding ID; "off" for none), else the environment's.
func outcome(count int, findings []domain.Finding, gates map[string]string, envGate, where string) swarm.Outcome {
	o := swarm.Outcome{Findings: count, Where: where}
	worst := -1
	for i, f := range findings {
		gate, ok := gates[f.ID]
		if !ok {
			gate = envGate
		}
		if gate == "" || gate == "off" || !atOrAbove(f.Severity, gate) {
			continue
		}
		o.Blocking++
		if worst < 0 || domain.SeverityRank(f.Severity) < domain.SeverityRank(findings[worst].Severity) {
			worst, o.Gate = i, gate
		}
	}
	if worst >= 0 {
		f := findings[worst]
		o.Worst = fmt.Sprintf("%s %s finding in %s line %d", strings.ToLower(f.Severity), domain.CategoryWord(f.Category), path.Base(f.File), f.Line)
	}
	return o
}
