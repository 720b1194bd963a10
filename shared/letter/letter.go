// Package letter owns what a review e-mail says: its subject and its text
// and HTML bodies, written from the decided review (package decide, in the
// llm stage) the same for every recipient. Every model-written field is
// made inert here. The message each recipient gets — headers, MIME, the
// reference line with their delivery token — is shared/notify's.
package letter

import (
	"fmt"
	htmlpkg "html"
	"strings"
	"unicode/utf8"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/modeltext"
	"github.com/criticizer/criticizer/shared/render"
	"github.com/criticizer/criticizer/shared/rerun"
)

// maxSubjectSuffix is how many runes of the description the subject keeps.
const maxSubjectSuffix = 60

// Content is what a review e-mail says.
type Content struct {
	Author string
	// Description is the redacted changelist description (first line used).
	Description string
	JobID       string
	Review      domain.ReviewResult
	// Changeset is the REDACTED changeset: each finding shows its lines of code.
	Changeset  *domain.Changeset
	ReviewURL  string // the Swarm review, when the job came from one
	JobPageURL string // the job's read-only page ("View this review"), when on
	// Rerun is the comparison with the previous version (nil for a first):
	// the findings are grouped new / still open / resolved.
	Rerun *rerun.Groups
	// Current is the findings by fingerprint (rerun.Distinct of Review and
	// Changeset) when the caller has them; nil: worked out here.
	Current []rerun.Current
}

// Letter is what a review e-mail says, written once, when the review is
// decided (package decide), and the same for each recipient: each one's
// message (shared/notify) ends it with their reference (Ended).
type Letter struct {
	Subject string `json:"subject"`
	JobID   string `json:"job_id"` // the X-Criticizer-Job header
	Text    string `json:"text"`   // the text/plain body, up to its reference line
	HTML    string `json:"html"`   // the text/html alternative, up to its reference
}

// Ended is the letter's text and HTML bodies ended with a recipient's
// reference: their delivery token.
func (l Letter) Ended(token string) (text, html string) {
	return l.Text + "\nReference: " + token + "\n", l.HTML + " &middot; Reference: " + htmlpkg.EscapeString(token) + "</small></p>\n</body></html>\n"
}

// Write writes the letter of a changelist's review version from in.
func Write(changelist int64, version int, in Content) Letter {
	current := in.Current
	if current == nil {
		current = rerun.Distinct(in.Review.Findings, in.Changeset)
	}
	// Every model-written field is made inert once, here, for both parts
	// (the HTML part escapes after): no URL a mail client would link.
	findings := make([]domain.Finding, len(current))
	for i, c := range current {
		findings[i] = inertFinding(c.Finding)
	}
	meta := domain.ReadReviewMeta(in.Review.Meta)
	counts := render.Counts(findings)
	v := view{
		Changelist:  changelist,
		Version:     version,
		Author:      domain.OneLine(in.Author),
		Description: firstLine(in.Description),
		JobID:       domain.OneLine(in.JobID),
		ReviewURL:   safeURL(in.ReviewURL),
		JobPageURL:  safeURL(in.JobPageURL),
		Summary:     modeltext.Plain(strings.TrimSpace(in.Review.Summary)),
		Total:       len(findings),
		Counts:      render.CountLine(counts),
		Files:       render.ByFile(findings, in.Changeset, 0),
		Meta:        meta,
		Schema:      domain.OneLine(in.Review.SchemaVersion),
		Prompt:      domain.OneLine(in.Review.PromptVersion),
	}
	if in.Rerun != nil {
		v.Rerun = rerunOf(in.Rerun, current, in.Changeset)
	}
	return Letter{Subject: subject(changelist, version, counts, len(findings), v.Description, meta, v.Rerun), JobID: v.JobID, Text: renderText(v), HTML: renderHTML(v)}
}

// subject is e.g. "[Criticizer] CL 12345 v1: 3 findings (1 high) - Fix login":
// only critical and high counted (they decide whether it is opened now); a
// rerun adds what changed ("; since v1: 1 new, 2 resolved").
func subject(changelist int64, version int, cs []render.Count, total int, desc string, meta domain.ReviewMeta, rr *rerunView) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[Criticizer] CL %d v%d: ", changelist, version)
	if total == 0 {
		b.WriteString("no findings")
	} else {
		fmt.Fprintf(&b, "%d %s", total, domain.Plural(total, "finding"))
	}
	var urgent []string
	for _, c := range cs {
		if domain.SeverityRank(c.Severity) <= domain.SeverityRank("high") {
			urgent = append(urgent, fmt.Sprintf("%d %s", c.N, c.Severity))
		}
	}
	if len(urgent) > 0 {
		b.WriteString(" (" + strings.Join(urgent, ", ") + ")")
	}
	if meta.Coverage() != "" && !meta.Complete() {
		// Never a clean bill for a review that did not see everything.
		fmt.Fprintf(&b, " [partial: %d of %d files reviewed]", meta.FilesReviewed, meta.FilesTotal)
	}
	if rr != nil {
		fmt.Fprintf(&b, "; since v%d: %d new, %d resolved", rr.Previous, rr.NNew, len(rr.Resolved))
	}
	if desc != "" {
		if utf8.RuneCountInString(desc) > maxSubjectSuffix {
			desc = strings.TrimSpace(string([]rune(desc)[:maxSubjectSuffix-3])) + "..."
		}
		b.WriteString(" - " + desc)
	}
	return b.String()
}

// firstLine returns the first non-blank line of s, cleaned for a header.
func firstLine(s string) string {
	for _, line := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
		if l := domain.OneLine(line); l != "" {
			return l
		}
	}
	return ""
}

// inertFinding is f with the fields the model wrote made inert for e-mail.
func inertFinding(f domain.Finding) domain.Finding {
	f.Title, f.Message, f.Suggestion = modeltext.Plain(f.Title), modeltext.Plain(f.Message), modeltext.Plain(f.Suggestion)
	f.Category, f.RuleID, f.Confidence = modeltext.Plain(f.Category), modeltext.Plain(f.RuleID), modeltext.Plain(f.Confidence)
	return f
}
