package redact

import (
	"fmt"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
)

// Report lists what Changeset redacted, for the audit trail and metrics. It
// holds rule ids and line numbers only.
type Report struct {
	Description []Match      // lines of the description
	Files       []FileReport // files with at least one match, in changeset order
	UserEmail   bool         // the author's address was removed (Policy.RedactEmails)
}

// FileReport is what was redacted in one file's diff; lines are lines of
// the diff text.
type FileReport struct {
	DepotPath string
	Matches   []Match
}

// Total is the number of redactions in the report.
func (r Report) Total() int {
	n := len(r.Description)
	for _, f := range r.Files {
		n += len(f.Matches)
	}
	if r.UserEmail {
		n++
	}
	return n
}

// Changeset returns a copy of cs fit for an LLM: the description and every
// diff redacted, and the author's e-mail address removed when the policy
// de-identifies e-mail. Depot paths, actions, types and revisions are kept:
// review findings are reconciled against them. cs itself is not modified.
// On error the returned changeset is empty and must not be used.
func (r *Redactor) Changeset(cs domain.Changeset) (domain.Changeset, Report, error) {
	var rep Report
	out := cs
	desc, ms, err := r.Redact(cs.Description)
	if err != nil {
		return domain.Changeset{}, Report{}, failure.Wrap(failure.Classify(err), fmt.Errorf("changelist %d description: %w", cs.Changelist, err))
	}
	out.Description, rep.Description = desc, ms

	out.Files = make([]domain.FileChange, len(cs.Files))
	for i, f := range cs.Files {
		diff, ms, err := r.Redact(f.Diff)
		if err != nil {
			// The path is not secret; the content that failed is not included.
			return domain.Changeset{}, Report{}, failure.Wrap(failure.Classify(err), fmt.Errorf("changelist %d file %s: %w", cs.Changelist, f.DepotPath, err))
		}
		f.Diff = diff
		out.Files[i] = f
		if len(ms) > 0 {
			rep.Files = append(rep.Files, FileReport{DepotPath: f.DepotPath, Matches: ms})
		}
	}
	if r.redactEmails && out.UserEmail != "" {
		out.UserEmail = "[REDACTED:email]"
		rep.UserEmail = true
	}
	return out, rep, nil
}
