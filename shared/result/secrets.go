package result

import (
	"fmt"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/redact"
	"github.com/criticizer/criticizer/shared/udiff"
)

// SecretRulePrefix starts the rule_id of a committed-secret finding; the
// rest is the redaction detector's rule id.
const SecretRulePrefix = "secret/"

// SecretFindings returns one finding per secret the redactor removed from an
// added line of the (redacted) changeset: the pipeline knows these for
// certain, so they are stated whatever the model answers, and whether or not
// the file fit the review. Each names the detector's rule id and the line,
// never the secret: the redacted diff no longer holds it.
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
