// Package rerun owns the one comparison of a reviewed version with the one
// before (issue 22, docs/swarm-comments.md "Reruns"): new, still open, resolved,
// not re-checked. E-mail and Swarm summary both show it, so they cannot
// disagree.
//
// Findings match by fingerprint (package finding), never line. "Resolved" needs
// evidence: the file reviewed in full now and the fingerprint gone; otherwise
// "not re-checked".
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

// Earlier is a previous version's finding; Title is empty once that job's result
// is gone (the ledger keeps identities only).
type Earlier struct {
	ledger.Finding
	Title string
}

// Groups is the comparison; nil for a first version.
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

// Compare groups current (Distinct) against prev's ledger entry. full: files
// reviewed in full now; withheld: fingerprints found but not shown
// (ReviewMeta.Withheld), never resolved. A nil prev yields nil.
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

// Name titles resolved and not re-checked findings from the previous result (by
// finding.ID); others keep an empty title.
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

// Distinct keeps the first finding of each fingerprint, in the review's order.
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

// FullyReviewed counts a file as reviewed in full when neither skipped nor cut, and the model called or the
// file carried over from a full review. When the cap hid findings (HiddenByCap)
// without listing them (Withheld), a gone fingerprint proves nothing and no file
// counts.
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
