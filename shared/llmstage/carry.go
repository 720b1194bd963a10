package llmstage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/finding"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/ledger"
	"github.com/criticizer/criticizer/shared/result"
	"github.com/criticizer/criticizer/shared/udiff"
)

// LedgerWriter records a reviewed version in the rerun ledger (ledger.Store).
type LedgerWriter interface {
	Put(ctx context.Context, v ledger.Version) error
}

// carryOver is what carried and interdiff files bring from the previous
// version: the files and their findings (an interdiff file's moved to where
// its lines are now). The zero value carries nothing.
type carryOver struct {
	from      *domain.PreviousReview
	files     map[string]bool // unchanged: not shown to the model
	interdiff map[string]bool // changed: shown as their interdiff only
	findings  []domain.Finding
}

func (c carryOver) paths(cs domain.Changeset) []string {
	var out []string
	for _, f := range cs.Files {
		if c.files[f.DepotPath] || c.interdiff[f.DepotPath] {
			out = append(out, f.DepotPath)
		}
	}
	return out
}

// carried reads the findings of the files fetch marked carried or diffed
// against the previous shelf. With the previous job or result gone, every
// file is reviewed whole (logged); a transient read failure fails the attempt.
func (r *LLM) carried(ctx context.Context, cs domain.Changeset, rulesDigest string) (carryOver, error) {
	files, inter := cs.Carried(), cs.Interdiffs()
	if len(files)+len(inter) == 0 {
		return carryOver{}, nil
	}
	both := maps.Clone(files)
	maps.Copy(both, inter)
	prev := cs.Previous
	findings, why, err := r.previousFindings(ctx, prev, both, rulesDigest)
	if err != nil {
		return carryOver{}, err
	}
	if why != "" {
		r.Log.WarnContext(ctx, "files reviewed whole again: the previous version's findings cannot be read",
			"reason", why, "previous_version", prev.Version, "previous_job", prev.JobID, "files", len(both))
		return carryOver{}, nil
	}
	shifts := map[string]udiff.Shift{}
	for _, f := range cs.Files {
		if inter[f.DepotPath] {
			shifts[f.DepotPath] = udiff.NewShift(f.Interdiff)
		}
	}
	kept := findings[:0]
	for _, f := range findings {
		if s, ok := shifts[f.File]; ok {
			if f, ok = across(f, s); !ok {
				continue
			}
		}
		kept = append(kept, f)
	}
	r.Log.InfoContext(ctx, "files carried over or shown as their change since the previous version", "carried_files", len(files),
		"interdiff_files", len(inter), "findings_carried", len(kept), "findings_rechecked", len(findings)-len(kept),
		"previous_version", prev.Version, "previous_job", prev.JobID)
	return carryOver{from: prev, files: files, interdiff: inter, findings: kept}, nil
}

// across moves a previous finding across its file's interdiff when its lines
// were left alone. One whose lines changed is not carried: the model sees
// them and repeats what still holds. A carried finding is fingerprinted
// again on the new code (Merge), as a whole review would.
func across(f domain.Finding, s udiff.Shift) (domain.Finding, bool) {
	from, to := f.Line, max(f.EndLine, f.Line)
	now, ok := s.Map(from, to)
	if !ok {
		return f, false
	}
	shift := now - from
	f.Line += shift
	if f.EndLine > 0 {
		f.EndLine += shift
	}
	return f, true
}

// previousFindings returns the previous job's findings on files, or why
// not: they stand only if reviewed under the same rules with none hidden by
// the cap.
func (r *LLM) previousFindings(ctx context.Context, prev *domain.PreviousReview, files map[string]bool, rulesDigest string) ([]domain.Finding, string, error) {
	if r.Jobs == nil {
		return nil, "no job store configured", nil
	}
	pj, err := r.Jobs.Get(ctx, prev.JobID)
	switch {
	case errors.Is(err, job.ErrNotFound):
		return nil, "the previous job has expired", nil
	case err != nil:
		return nil, "", fmt.Errorf("previous job %s: %w", prev.JobID, err)
	case pj.ExpiresAt > 0 && pj.ExpiresAt <= job.Now().Unix():
		return nil, "the previous job has expired", nil
	case pj.Artifacts.Result == "":
		return nil, "the previous job has no stored result", nil
	}
	var res domain.ReviewResult
	switch err := r.Redacted.GetJSON(ctx, pj.Artifacts.Result, &res); {
	case failure.Classify(err) == failure.NotFound:
		return nil, "the previous job's result has expired", nil
	case err != nil:
		return nil, "", fmt.Errorf("previous job %s's result: %w", prev.JobID, err)
	}
	switch meta := domain.ReadReviewMeta(res.Meta); {
	case meta.RulesDigest != rulesDigest:
		return nil, "the review rules differ from the previous version's", nil
	case meta.HiddenByCap > 0:
		return nil, "the previous version's result is capped: the review rules hid some of its findings", nil
	}
	return slices.DeleteFunc(res.Findings, func(f domain.Finding) bool { return !files[f.File] }), "", nil
}

// shownToModel is cs without the carried files, interdiff files as their interdiff.
func shownToModel(cs domain.Changeset, c carryOver) domain.Changeset {
	if len(c.files)+len(c.interdiff) == 0 {
		return cs
	}
	out := cs
	out.Files = make([]domain.FileChange, 0, len(cs.Files))
	for _, f := range cs.Files {
		switch {
		case c.files[f.DepotPath]:
		case c.interdiff[f.DepotPath]:
			if f.Interdiff != "" {
				f.Diff = f.Interdiff
				out.Files = append(out.Files, f)
			}
		default:
			out.Files = append(out.Files, f)
		}
	}
	return out
}

// ledgerEntry is what the ledger keeps of this version.
func ledgerEntry(j *job.Job, cs domain.Changeset, result domain.ReviewResult, skipped []domain.SkippedFile, truncated []domain.TruncatedFile, codeOf result.CodeOf) ledger.Version {
	partial := map[string]bool{}
	for _, s := range skipped {
		partial[s.File] = true
	}
	for _, t := range truncated {
		partial[t.File] = true
	}
	v := ledger.Version{Thread: ledger.ThreadOf(j), Version: max(j.ReviewVersion, 1), JobID: j.ID, Change: j.Changelist,
		Files: make([]ledger.File, 0, len(cs.Files)), Findings: make([]ledger.Finding, 0, len(result.Findings))}
	for _, fc := range cs.Files {
		lf := ledger.FileOf(fc)
		lf.FullyReviewed = !partial[fc.DepotPath]
		v.Files = append(v.Files, lf)
	}
	for _, f := range result.Findings {
		v.Findings = append(v.Findings, ledger.Finding{Fingerprint: finding.Fingerprint(f, codeOf(f.File)), File: f.File, Line: f.Line, Severity: f.Severity})
	}
	return v
}

// record writes the ledger entry before the stage completes (notify and the
// next fetch read it); a version another job recorded first is kept, and said.
func (r *LLM) record(ctx context.Context, v ledger.Version) (string, error) {
	if r.Ledger == nil {
		return "", nil
	}
	err := r.Ledger.Put(ctx, v)
	switch taken, isTaken := errors.AsType[*ledger.VersionTakenError](err); {
	case isTaken:
		r.Log.WarnContext(ctx, "this version is already in the rerun ledger from another job; its entry is kept",
			"thread", v.Thread.String(), "version", v.Version, "ledger_job", taken.JobID)
		return fmt.Sprintf("; rerun ledger keeps version %d of job %s", v.Version, taken.JobID), nil
	case err != nil:
		return "", fmt.Errorf("rerun ledger: %w", err)
	}
	return "", nil
}
