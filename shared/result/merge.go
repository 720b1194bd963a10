package result

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/finding"
	"github.com/criticizer/criticizer/shared/redact"
	"github.com/criticizer/criticizer/shared/udiff"
)

// ChunkResult is one chunk's validated answer, as stored and merged.
type ChunkResult struct {
	Files       []string         `json:"files"`
	Summary     string           `json:"summary,omitempty"`
	Findings    []domain.Finding `json:"findings"`
	Diagnostics map[string]int   `json:"diagnostics,omitempty"` // counts the parser's diagnostics by "kind/reason".
}

var confidenceRank = map[string]int{"high": 0, "medium": 1, "low": 2, "": 3}

// CodeOf returns the new-revision lines of a file as the diff shows them
// (udiff.LineMap), for the finding fingerprint; nil when unknown.
type CodeOf func(file string) map[int]string

// Merge combines chunk results and the pipeline's own findings (committed
// secrets) into one ReviewResult for version. A finding reported twice
// (same fingerprint, package finding) is kept once, the most severe, most
// confident wording; findings are ordered by SortFindings, distinct
// summaries joined in chunk order. Each adjustment is a diagnostic (RC-3):
// finding_merged/duplicate_finding, coercion_applied/finding_id_replaced.
func Merge(parts []ChunkResult, version string, code CodeOf, pipeline ...domain.Finding) (domain.ReviewResult, Diagnostics) {
	if code == nil {
		code = func(string) map[int]string { return nil }
	}
	byKey := map[string]domain.Finding{}
	ours := map[string]bool{} // fingerprints of the pipeline's own findings
	var diags Diagnostics
	add := func(f domain.Finding) {
		k := finding.Fingerprint(f, code(f.File))
		id := finding.ID(k)
		prev, dup := byKey[k]
		switch {
		case dup && ours[k]:
			// What the pipeline knows for certain the model never rewords.
			diags = append(diags, Diagnostic{Kind: KindFindingMerged, Reason: ReasonDuplicateFinding, FindingID: id, Index: -1, File: f.File, Line: f.Line,
				Detail: "restates a finding of the pipeline's own; the pipeline's kept"})
			return
		case dup:
			diags = append(diags, Diagnostic{Kind: KindFindingMerged, Reason: ReasonDuplicateFinding, FindingID: id, Index: -1, File: f.File, Line: f.Line,
				Detail: "reported again with the same fingerprint; the most severe, most confident wording kept"})
			if !better(f, prev) {
				return
			}
		case f.ID != id:
			diags = append(diags, Diagnostic{Kind: KindCoercion, Reason: ReasonFindingIDReplaced, FindingID: id, Index: -1, Field: "id", Old: clip(f.ID, 64), New: id})
		}
		f.ID = id
		byKey[k] = f
	}
	var summaries []string
	// The model's security finding on a committed secret's line says it less surely.
	secretAt := map[string]bool{}
	for _, f := range pipeline {
		add(f)
		ours[finding.Fingerprint(f, code(f.File))] = true
		secretAt[f.File+"\x00"+strconv.Itoa(f.Line)] = true
		secretAt[f.File+"\x00"+strconv.Itoa(f.Line)+"\x00"+f.RuleID] = true
	}
	for _, p := range parts {
		if s := strings.TrimSpace(p.Summary); s != "" && !slices.Contains(summaries, s) {
			summaries = append(summaries, s)
		}
		for _, f := range p.Findings {
			at := f.File + "\x00" + strconv.Itoa(f.Line)
			if (f.Category == "security" && secretAt[at]) || secretAt[at+"\x00"+f.RuleID] {
				continue
			}
			add(f)
		}
	}
	findings := slices.AppendSeq(make([]domain.Finding, 0, len(byKey)), maps.Values(byKey)) // [] when none, never null
	SortFindings(findings)
	return domain.ReviewResult{
		SchemaVersion: SchemaVersion,
		PromptVersion: version,
		Summary:       strings.Join(summaries, "\n"),
		Findings:      findings,
	}, diags
}

// SortFindings orders findings most severe first, then by file, line and id.
func SortFindings(findings []domain.Finding) {
	slices.SortFunc(findings, func(a, b domain.Finding) int {
		return cmp.Or(domain.SeverityRank(a.Severity)-domain.SeverityRank(b.Severity), strings.Compare(a.File, b.File),
			a.Line-b.Line, strings.Compare(a.ID, b.ID))
	})
}

// better reports whether a should replace b as the merged finding.
func better(a, b domain.Finding) bool {
	// A longer message is better.
	if d := cmp.Or(domain.SeverityRank(a.Severity)-domain.SeverityRank(b.Severity),
		confidenceRank[a.Confidence]-confidenceRank[b.Confidence], len(b.Message)-len(a.Message)); d != 0 {
		return d < 0
	}
	return a.Message+a.Suggestion < b.Message+b.Suggestion
}

// SecretRulePrefix starts the rule_id of a committed-secret finding; the
// rest is the redaction detector's rule id.
const SecretRulePrefix = "secret/"

// SecretFindings returns one finding per secret the redactor removed from an
// added line of the redacted changeset: certain, so stated whatever the
// model answers or whether the file fit the review. Each names the rule and
// line, never the secret.
func SecretFindings(cs domain.Changeset) []domain.Finding {
	var out []domain.Finding
	for _, f := range cs.Files {
		for _, l := range udiff.NewLines(f.Diff) {
			if !l.Added {
				continue
			}
			for _, rule := range redact.TokenRules(l.Text) {
				sev, ok := redact.SecretSeverity(rule)
				if !ok {
					continue
				}
				out = append(out, domain.Finding{
					Severity:   sev,
					Category:   "security",
					Title:      fmt.Sprintf("Committed secret (%s)", rule),
					File:       f.DepotPath,
					Line:       l.N,
					Message:    fmt.Sprintf("A secret matching detector rule %q was committed on this line. It was redacted before review and is not shown here, but it is in the depot: treat it as leaked.", rule),
					Suggestion: "Rotate the credential now, load it from a secret store at run time, and remove it from the depot history (p4 obliterate) if your policy requires.",
					Confidence: "high",
					RuleID:     SecretRulePrefix + rule,
				})
			}
		}
	}
	return out
}

// ReasonLineNotShown drops a finding with a line the model was not shown
// (its diff's hunks in that request, after any cut): fabricated or misplaced.
const ReasonLineNotShown = "line_not_shown"

// maxCheckedRange bounds the range checked line by line; a longer one is dropped.
const maxCheckedRange = 10000

// KeepShown keeps the findings whose every line the model was shown (shown:
// file -> line -> text, Chunk.Shown); the others get finding_dropped/line_not_shown.
func KeepShown(fs []domain.Finding, shown map[string]map[int]string) ([]domain.Finding, Diagnostics) {
	var diags Diagnostics
	kept := fs[:0:0]
	for i, f := range fs {
		lines := shown[f.File]
		end := max(f.EndLine, f.Line)
		missing := 0
		if end-f.Line > maxCheckedRange {
			missing = f.Line
		}
		for n := f.Line; missing == 0 && n <= end; n++ {
			if _, ok := lines[n]; !ok {
				missing = n
			}
		}
		if missing == 0 {
			kept = append(kept, f)
			continue
		}
		diags = append(diags, Diagnostic{Kind: KindFindingDropped, Reason: ReasonLineNotShown, FindingID: clip(f.ID, 64),
			Index: i, Field: "line", File: f.File, Line: f.Line,
			Detail: fmt.Sprintf("line %d of the range %d-%d is not in the diff the model was shown", missing, f.Line, end)})
	}
	return kept, diags
}
