package swarm

import (
	"cmp"
	"slices"
	"time"
)

// Version is one version of a review, as the reviews API lists it.
type Version struct {
	Change        int64
	ArchiveChange int64  // recent releases' field; 0 leaves it out, as older ones do
	User          string // default "swarm"
	Time          int64  // Unix seconds; default now
	Pending       bool
	Difference    bool
	Files         []string // the change's files; nil: Options.ChangeFiles's
}

// AddVersion appends a version to a review and returns its number (from 1).
func (s *Server) AddVersion(review int64, v Version) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	rev := s.revs[review]
	rev.ID = review
	v.User = cmp.Or(v.User, "swarm")
	v.Time = cmp.Or(v.Time, time.Now().Unix())
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

// versionFiles are the files of the review's version n; nil: not known.
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

// withFiles is rev with missing files asked of Options.ChangeFiles: each
// version's archive change's, which holds every file at that version.
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

// versionsWire is the review's versions, oldest first; without versions its
// head is one pending version, change the review id (the canonical shelf),
// archiveChange the archive change, as Swarm 2022.1 shows a pre-commit head
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
