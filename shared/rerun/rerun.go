// Package rerun owns the one comparison of a reviewed version with the
// version before it (issue 22, docs/swarm-comments.md "Reruns"): which of
// this version's findings are new and which still open, which earlier ones
// are resolved and which were not re-checked. The e-mail and the Swarm
// summary both show this comparison, so they cannot disagree.
//
// Findings are matched by the one fingerprint (package finding), never by
// line, so a finding whose code moved is still the same finding. "Resolved"
// is a claim about the code, so it needs evidence: the file was reviewed in
// full in the new version and the fingerprint is gone. Anything else (the
// file skipped, cut to fit, deleted, not part of the version) is "not
// re-checked".
package rerun

import (
	"sort"
	"strings"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/finding"
	"github.com/criticizer/criticizer/shared/ledger"
)

// Current is one distinct finding of the version being notified, with its
// fingerprint.
type Current struct {
	Fingerprint string
	domain.Finding
}

// Earlier is a finding of the previous version. Title is the finding's
// title while that version's job result can still be read, else empty:
// the ledger keeps only identities (file, line, severity).
type Earlier struct {
	ledger.Finding
	Title string
}

// Groups is the comparison. It is nil for a first version (no previous
// entry): there is nothing to compare with, and the e-mail and the summary
// look as they do for any first review.
type Groups struct {
	// Previous is the version compared with.
	PreviousVersion int
	PreviousJob     string
	New, StillOpen  []Current
	Resolved        []Earlier
	NotRechecked    []Earlier
}

// Coverage says whether a file was reviewed in full in the version being
// notified.
type Coverage func(file string) bool

// Compare groups current (distinct findings, as Distinct returns them)
// against prev, the previous version's ledger entry. full says which files
// were reviewed in full in this version; withheld lists the fingerprints
// this version found but its review rules did not show (below the
// threshold, a disabled category, past the cap: ReviewMeta.Withheld),
// which are not resolved however full their file. A nil prev yields nil.
func Compare(prev *ledger.Version, current []Current, full Coverage, withheld []string) *Groups {
	if prev == nil {
		return nil
	}
	g := &Groups{PreviousVersion: prev.Version, PreviousJob: prev.JobID}
	before := map[string]bool{}
	for _, f := range prev.Findings {
		before[f.Fingerprint] = true
	}
	hidden := map[string]bool{}
	for _, fp := range withheld {
		hidden[fp] = true
	}
	now := map[string]bool{}
	for _, c := range current {
		now[c.Fingerprint] = true
		if before[c.Fingerprint] {
			g.StillOpen = append(g.StillOpen, c)
		} else {
			g.New = append(g.New, c)
		}
	}
	seen := map[string]bool{}
	for _, f := range prev.Findings {
		if now[f.Fingerprint] || seen[f.Fingerprint] {
			continue
		}
		seen[f.Fingerprint] = true
		if full != nil && full(f.File) && !hidden[f.Fingerprint] {
			g.Resolved = append(g.Resolved, Earlier{Finding: f})
		} else {
			g.NotRechecked = append(g.NotRechecked, Earlier{Finding: f})
		}
	}
	for _, l := range [][]Earlier{g.Resolved, g.NotRechecked} {
		sort.SliceStable(l, func(i, j int) bool {
			if l[i].File != l[j].File {
				return l[i].File < l[j].File
			}
			if l[i].Line != l[j].Line {
				return l[i].Line < l[j].Line
			}
			return l[i].Fingerprint < l[j].Fingerprint
		})
	}
	return g
}

// IsStillOpen reports whether the finding with fingerprint fp was found in
// the previous version too. False on a nil Groups.
func (g *Groups) IsStillOpen(fp string) bool {
	if g == nil {
		return false
	}
	for _, c := range g.StillOpen {
		if c.Fingerprint == fp {
			return true
		}
	}
	return false
}

// Name gives resolved and not re-checked findings their titles from the
// previous version's result (its findings carry finding.ID of their
// fingerprint). Findings the result does not hold keep an empty title.
func (g *Groups) Name(previous domain.ReviewResult) {
	if g == nil {
		return
	}
	titles := map[string]string{}
	for _, f := range previous.Findings {
		titles[f.ID] = strings.Join(strings.Fields(f.Title), " ")
	}
	for _, l := range [][]Earlier{g.Resolved, g.NotRechecked} {
		for i := range l {
			l[i].Title = titles[finding.ID(l[i].Fingerprint)]
		}
	}
}

// Distinct fingerprints a review's findings against the changeset they
// were made from and keeps the first of each fingerprint, in the review's
// order: one finding, one entry, whoever reported it.
func Distinct(fs []domain.Finding, cs *domain.Changeset) []Current {
	code := finding.CodeOf(cs)
	seen := map[string]bool{}
	out := make([]Current, 0, len(fs))
	for _, f := range fs {
		fp := finding.Fingerprint(f, code(f.File))
		if seen[fp] {
			continue
		}
		seen[fp] = true
		out = append(out, Current{Fingerprint: fp, Finding: f})
	}
	return out
}

// FullyReviewed is the coverage a review's meta states for cs: a file of
// the changeset that was neither skipped nor cut to fit, and either the
// model was called or the file was carried over unchanged from a version
// where it was reviewed in full (its findings are that version's, complete).
// When the review rules' cap hid findings (HiddenByCap) and the result does
// not list which (Withheld, recorded since), it does not list every finding
// of any file, so a gone fingerprint proves nothing and no file counts.
func FullyReviewed(cs *domain.Changeset, meta domain.ReviewMeta) Coverage {
	in := map[string]bool{}
	if cs != nil && (meta.HiddenByCap == 0 || len(meta.Withheld) >= meta.FilteredByRules+meta.HiddenByCap) {
		carried := cs.Carried()
		for _, f := range cs.Files {
			if meta.WithoutModel == "" || carried[f.DepotPath] {
				in[f.DepotPath] = true
			}
		}
		for _, s := range meta.SkippedFiles {
			delete(in, s.File)
		}
		for _, t := range meta.TruncatedFiles {
			delete(in, t.File)
		}
	}
	return func(file string) bool { return in[file] }
}
