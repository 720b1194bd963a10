package redact

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

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
// review findings are matched against them. cs itself is not modified.
// On error the returned changeset is empty and must not be used.
func (r *Redactor) Changeset(cs domain.Changeset) (domain.Changeset, Report, error) {
	var rep Report
	out := cs
	desc, ms, err := r.Redact(cs.Description)
	if err != nil {
		return domain.Changeset{}, Report{}, failure.Wrap(failure.Classify(err), fmt.Errorf("changelist %d description: %w", cs.Changelist, err))
	}
	out.Description, rep.Description = desc, ms

	// Files are independent: spread them over the cores, keep their order.
	out.Files = make([]domain.FileChange, len(cs.Files))
	fileMatches := make([][]Match, len(cs.Files))
	errs := make([]error, len(cs.Files))
	next := atomic.Int64{}
	var wg sync.WaitGroup
	for w := min(runtime.GOMAXPROCS(0), len(cs.Files)); w > 0; w-- {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(cs.Files); i = int(next.Add(1) - 1) {
				f := cs.Files[i]
				f.Diff, fileMatches[i], errs[i] = r.Redact(f.Diff)
				out.Files[i] = f
			}
		}()
	}
	wg.Wait()
	for i, f := range cs.Files {
		if err := errs[i]; err != nil {
			// The path is not secret; the content that failed is not included.
			return domain.Changeset{}, Report{}, failure.Wrap(failure.Classify(err), fmt.Errorf("changelist %d file %s: %w", cs.Changelist, f.DepotPath, err))
		}
		if len(fileMatches[i]) > 0 {
			rep.Files = append(rep.Files, FileReport{DepotPath: f.DepotPath, Matches: fileMatches[i]})
		}
	}
	if r.policy.RedactEmails && out.UserEmail != "" {
		out.UserEmail = "[REDACTED:email]"
		rep.UserEmail = true
	}
	return out, rep, nil
}
