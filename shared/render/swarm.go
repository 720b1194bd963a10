package render

import (
	"fmt"
	"strings"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/modeltext"
)

// The Swarm review's own comments beside the findings': a version's
// summary, the list of findings past the inline cap, a resolved finding's
// note. Model text in them (titles, files) is made inert (modeltext.Line).

// SwarmSummary is a version's summary comment: counts by severity, since
// (the rerun comparison's line, "" for a first version), coverage, the
// model's tokens and estimated cost, the job page link when the
// environment has one.
func SwarmSummary(version, total int, counts map[string]int, meta domain.ReviewMeta, pageURL, since string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**Criticizer review of version %d:** ", version)
	if total == 0 {
		b.WriteString("no findings.")
	} else {
		var parts []string
		for _, s := range domain.Severities {
			if counts[s] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
			}
		}
		noun := "findings"
		if total == 1 {
			noun = "finding"
		}
		fmt.Fprintf(&b, "%d %s (%s).", total, noun, strings.Join(parts, ", "))
	}
	if since != "" {
		b.WriteString("\n\n" + since)
	}
	if c := meta.Coverage(); c != "" {
		fmt.Fprintf(&b, "\n\nCoverage: %s.", c)
	}
	if u := meta.Usage(); u != "" {
		fmt.Fprintf(&b, "\n\nModel usage: %s.", u)
	}
	if w := meta.DismissedWithheld(); w != "" {
		fmt.Fprintf(&b, "\n\n%s (`criticizer outcomes suppressions` lists them; `criticizer outcomes allow` reports them again).", w)
	}
	if pageURL != "" {
		fmt.Fprintf(&b, "\n\n[The review's job page](%s)", pageURL)
	}
	return b.String()
}

// SinceLine is the summary's line on a rerun: the comparison with the
// previous version, the same counts the e-mail shows.
func SinceLine(previous, fresh, stillOpen, resolved, unrechecked int) string {
	return fmt.Sprintf("Since version %d: %d new, %d still open, %d resolved, %d not re-checked.", previous, fresh, stillOpen, resolved, unrechecked)
}

// NotInline is the summary's list of the findings past the inline cap
// (over, the most severe first; max the cap).
func NotInline(over []domain.Finding, max int) string {
	var b strings.Builder
	noun := "findings were"
	if len(over) == 1 {
		noun = "finding was"
	}
	fmt.Fprintf(&b, "\n\n**%d %s not posted inline** (at most %d inline comments per version; all are in the e-mail):\n", len(over), noun, max)
	for _, f := range over {
		at := "the change as a whole"
		if f.File != "" {
			at = modeltext.Line(f.File)
			if f.Line > 0 {
				at = fmt.Sprintf("%s:%d", at, f.Line)
			}
		}
		fmt.Fprintf(&b, "\n- %s · %s (%s)", strings.ToUpper(domain.SeverityWord(f.Severity)), modeltext.Line(f.Title), at)
	}
	return b.String()
}

// ResolvedNote is the note on a resolved finding's plain comment: title is
// the comment's first line as Swarm has it, file and line where it was in
// version was.
func ResolvedNote(version int, title, file string, line, was int) string {
	return fmt.Sprintf("Resolved in version %d: %s (%s line %d in version %d) is gone from the file, which was reviewed in full.", version, title, modeltext.Line(file), line, was)
}
