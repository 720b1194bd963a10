package review

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"

	"github.com/criticizer/criticizer/shared/domain"
)

// ChunkResult is one chunk's validated answer, as stored and merged.
type ChunkResult struct {
	Files    []string         `json:"files"`
	Summary  string           `json:"summary,omitempty"`
	Findings []domain.Finding `json:"findings"`
	// Diagnostics counts the parser's diagnostics by "kind/reason".
	Diagnostics map[string]int `json:"diagnostics,omitempty"`
}

var severityRank = map[string]int{"critical": 0, "high": 1, "medium": 2, "low": 3, "info": 4}
var confidenceRank = map[string]int{"high": 0, "medium": 1, "low": 2, "": 3}

// findingKey identifies a finding across chunks and runs: the same defect
// reported twice (a file split across chunks, a replay) has the same key.
func findingKey(f domain.Finding) string {
	title := strings.Join(strings.Fields(strings.ToLower(f.Title)), " ")
	return f.File + "\x00" + strconv.Itoa(f.Line) + "\x00" + f.Category + "\x00" + title
}

// StableID is a finding's id in the merged result: derived from what it says
// and where, never from the model's numbering, which restarts in each chunk.
func StableID(f domain.Finding) string {
	sum := sha256.Sum256([]byte(findingKey(f)))
	return "F-" + hex.EncodeToString(sum[:5])
}

// Merge combines chunk results into one ReviewResult for version: findings
// get stable ids, duplicates are merged (the most severe, most confident
// wording wins), findings are ordered by file, line and severity, and the
// distinct chunk summaries are combined in chunk order.
func Merge(parts []ChunkResult, version string) domain.ReviewResult {
	byKey := map[string]domain.Finding{}
	var summaries []string
	for _, p := range parts {
		if s := strings.TrimSpace(p.Summary); s != "" && !slices.Contains(summaries, s) {
			summaries = append(summaries, s)
		}
		for _, f := range p.Findings {
			k := findingKey(f)
			if prev, ok := byKey[k]; ok && !better(f, prev) {
				continue
			}
			byKey[k] = f
		}
	}
	findings := make([]domain.Finding, 0, len(byKey))
	for _, f := range byKey {
		f.ID = StableID(f)
		findings = append(findings, f)
	}
	slices.SortFunc(findings, func(a, b domain.Finding) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		if d := severityRank[a.Severity] - severityRank[b.Severity]; d != 0 {
			return d
		}
		return strings.Compare(a.ID, b.ID)
	})
	return domain.ReviewResult{
		SchemaVersion: SchemaVersion,
		PromptVersion: version,
		Summary:       strings.Join(summaries, "\n"),
		Findings:      findings,
	}
}

// better reports whether a should replace b as the merged finding.
func better(a, b domain.Finding) bool {
	if d := severityRank[a.Severity] - severityRank[b.Severity]; d != 0 {
		return d < 0
	}
	if d := confidenceRank[a.Confidence] - confidenceRank[b.Confidence]; d != 0 {
		return d < 0
	}
	if len(a.Message) != len(b.Message) {
		return len(a.Message) > len(b.Message)
	}
	return a.Message+a.Suggestion < b.Message+b.Suggestion
}
