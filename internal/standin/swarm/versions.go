package swarm

import (
	"cmp"
	"slices"
	"time"
)

// Version is one version of a review, as the reviews API lists it: the
// change that holds its files (for a pre-commit review the shelved archive
// change), who made it and when, whether it is still shelved, and whether
// it differs from the version before.
type Version struct {
	Change int64
	// ArchiveChange is the field recent releases add beside change; 0 leaves
	// it out, as older releases do (readers must take either).
	ArchiveChange int64
	User          string // default "swarm"
	Time          int64  // Unix seconds; default now
	Pending       bool
	Difference    bool
	// Files are the depot paths shelved in the version's change; nil: asked
	// of Options.ChangeFiles, and where that does not know either, an inline
	// comment on any file is accepted (kinder than Swarm, which refuses a
	// file the change does not hold).
	Files []string
}

// AddVersion appends a version to a review (its head change and version
// follow) and returns the version's number, 1 for the first.
func (s *Server) AddVersion(review int64, v Version) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	rev := s.revs[review]
	rev.ID = review
	if v.User == "" {
		v.User = "swarm"
	}
	if v.Time == 0 {
		v.Time = time.Now().Unix()
	}
	rev.Versions = append(rev.Versions, v)
	rev.Change, rev.Version = v.Change, len(rev.Versions)
	s.revs[review] = rev
	return rev.Version
}

// headVersion is the review's latest version number.
func headVersion(r Review) int {
	if n := len(r.Versions); n > 0 {
		return n
	}
	return max(r.Version, 1)
}

// versionFiles are the files of the review's version n (1 for the first);
// nil when not known. A review added without versions knows its head's
// (Review.Files) only.
func versionFiles(r Review, n int) []string {
	if len(r.Versions) == 0 {
		if n == headVersion(r) {
			return r.Files
		}
		return nil
	}
	if n >= 1 && n <= len(r.Versions) {
		return r.Versions[n-1].Files
	}
	return nil
}

// withFiles is rev with the files of each version added without them
// asked of Options.ChangeFiles: the archive change's (the version's change
// when there is none), which holds every file of the review at that version.
func (s *Server) withFiles(rev Review) Review {
	cf := s.opts.ChangeFiles
	if cf == nil {
		return rev
	}
	if len(rev.Versions) == 0 {
		if rev.Files == nil {
			rev.Files = cf(rev.Change)
		}
		return rev
	}
	vs := slices.Clone(rev.Versions)
	for i := range vs {
		if vs[i].Files == nil {
			vs[i].Files = cf(cmp.Or(vs[i].ArchiveChange, vs[i].Change))
		}
	}
	rev.Versions = vs
	return rev
}

// versionsWire is the review's versions array, oldest first. A review
// added without versions shows its head as a single pending version the way
// Swarm 2022.1 shows a pre-commit review's head: change is the review id
// (the canonical shelf) and archiveChange the archive change
// (docs/reference/swarm.md, "Review versions": Review::normalizeVersions).
func versionsWire(r Review) []any {
	vs := r.Versions
	if len(vs) == 0 {
		vs = []Version{{Change: r.ID, ArchiveChange: r.Change, User: "swarm", Pending: true}}
	}
	out := make([]any, 0, len(vs))
	for _, v := range vs {
		m := map[string]any{"change": v.Change, "user": v.User, "time": v.Time, "pending": v.Pending, "difference": v.Difference}
		if v.ArchiveChange != 0 {
			m["archiveChange"] = v.ArchiveChange
		}
		out = append(out, m)
	}
	return out
}

// changesOf is the review's changes: each version's change, once.
func changesOf(r Review) []int64 {
	if len(r.Versions) == 0 {
		return []int64{r.Change}
	}
	var out []int64
	seen := map[int64]bool{}
	for _, v := range r.Versions {
		if !seen[v.Change] {
			seen[v.Change] = true
			out = append(out, v.Change)
		}
	}
	return out
}
