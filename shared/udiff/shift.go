package udiff

import (
	"strconv"
	"strings"
)

// Shift maps line numbers of a diff's old revision to its new revision:
// where code the diff left alone is now. A rerun uses it to carry an
// earlier version's findings across the interdiff of the two versions.
type Shift struct {
	hunks []shiftHunk
}

type shiftHunk struct {
	oldStart, oldEnd int          // old lines oldStart..oldEnd-1 are inside the hunk
	delta            int          // new minus old, after the hunk
	context          map[int]int  // old line -> new line, for the hunk's context lines
	removed          map[int]bool // old lines the hunk removes
	inserted         map[int]bool // lines are inserted right before this old line
}

// NewShift reads the hunks of a unified diff. "" (identical revisions)
// maps every line to itself.
func NewShift(diff string) Shift {
	var s Shift
	var h *shiftHunk
	oldN, newN := 0, 0
	for _, l := range strings.Split(strings.TrimSuffix(diff, "\n"), "\n") {
		if m := hunkRE.FindStringSubmatch(l); m != nil {
			s.close(h, oldN, newN)
			oldN, _ = strconv.Atoi(m[1])
			newN, _ = strconv.Atoi(m[3])
			if m[2] == "0" { // "-k,0": an insertion after old line k
				oldN++
			}
			if m[4] == "0" {
				newN++
			}
			h = &shiftHunk{oldStart: oldN, context: map[int]int{}, removed: map[int]bool{}, inserted: map[int]bool{}}
			continue
		}
		if h == nil || l == "" {
			continue
		}
		switch l[0] {
		case ' ':
			h.context[oldN] = newN
			oldN++
			newN++
		case '-':
			h.removed[oldN] = true
			oldN++
		case '+':
			h.inserted[oldN] = true
			newN++
		case '\\':
		default:
			s.close(h, oldN, newN)
			h = nil
		}
	}
	s.close(h, oldN, newN)
	return s
}

func (s *Shift) close(h *shiftHunk, oldN, newN int) {
	if h == nil {
		return
	}
	h.oldEnd, h.delta = oldN, newN-oldN
	s.hunks = append(s.hunks, *h)
}

// Map returns the new line number of old line `from` when the diff leaves
// old lines from..to alone: none of them removed or changed, and nothing
// inserted between two of them. ok is false otherwise.
func (s Shift) Map(from, to int) (line int, ok bool) {
	if from < 1 || to < from {
		return 0, false
	}
	first := 0
	for n := from; n <= to; n++ {
		m, ok := s.line(n, n > from)
		if !ok {
			return 0, false
		}
		if n == from {
			first = m
		}
	}
	return first, true
}

// line maps one old line; inner says an insertion right before it breaks
// the range being mapped.
func (s Shift) line(n int, inner bool) (int, bool) {
	delta := 0
	for _, h := range s.hunks {
		if n < h.oldStart {
			break
		}
		if n < h.oldEnd || (n == h.oldEnd && h.inserted[n]) {
			if h.removed[n] || (inner && h.inserted[n]) {
				return 0, false
			}
			if m, ok := h.context[n]; ok {
				return m, true
			}
			// An insertion at the hunk's end, before an old line the
			// hunk does not show: the line follows the hunk.
			return n + h.delta, true
		}
		delta = h.delta
	}
	return n + delta, true
}
