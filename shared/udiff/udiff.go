// Package udiff renders unified diffs of text: the hunks that `p4 diff2 -du`
// prints. The fetch stage diffs revisions it printed in batches (fewer p4
// round trips than one diff2 per file); the p4 stand-in serves diff2 with it.
package udiff

import (
	"fmt"
	"strconv"
	"strings"
)

// Unified renders the hunks of a unified diff from a to b with ctx lines of
// context as `p4 diff2 -du` prints them (no file header: p4 puts the names
// in the tagged header record); "" when the contents are identical.
func Unified(a, b string, ctx int) string {
	al, bl := splitLines(a), splitLines(b)
	ops := editScript(al, bl)
	var out strings.Builder
	// A hunk spans from ctx lines before a change to ctx lines after the last
	// change within 2*ctx unchanged lines of the previous one.
	i := 0
	for i < len(ops) {
		for i < len(ops) && ops[i].kind == ' ' {
			i++
		}
		if i == len(ops) {
			break
		}
		start := max(i-ctx, 0)
		end := i
		for {
			for end < len(ops) && ops[end].kind != ' ' {
				end++
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run < len(ops) && run-end <= 2*ctx {
				end = run
				continue
			}
			end = min(end+ctx, len(ops))
			break
		}
		writeHunk(&out, ops[start:end])
		i = end
	}
	return out.String()
}

func writeHunk(out *strings.Builder, ops []op) {
	aStart, bStart := ops[0].a, ops[0].b
	var aLen, bLen int
	for _, o := range ops {
		if o.kind != '+' {
			aLen++
		}
		if o.kind != '-' {
			bLen++
		}
	}
	fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
	for _, o := range ops {
		out.WriteByte(o.kind)
		out.WriteString(o.text)
		if !strings.HasSuffix(o.text, "\n") {
			out.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// hunkRange formats one side of a hunk header: 1-based, an empty range
// naming the line before it.
func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// op is one line of an edit script, at 0-based positions in a and b.
type op struct {
	kind byte // ' ', '-' or '+'
	text string
	a, b int
}

// splitLines splits s into lines that keep their "\n", so a missing final
// newline shows up in the diff.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// maxCells bounds the LCS table; past it the diff replaces everything.
const maxCells = 1 << 22

// editScript computes a shortest edit script from a to b by LCS, after
// trimming the common prefix and suffix.
func editScript(a, b []string) []op {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ops := make([]op, 0, len(a)+len(b))
	for k := 0; k < pre; k++ {
		ops = append(ops, op{' ', a[k], k, k})
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	n, m := len(ma), len(mb)
	if (n+1)*(m+1) > maxCells {
		for k, l := range ma {
			ops = append(ops, op{'-', l, pre + k, pre})
		}
		for k, l := range mb {
			ops = append(ops, op{'+', l, pre + n, pre + k})
		}
	} else {
		// lcs[i][j] is the LCS length of ma[i:] and mb[j:].
		lcs := make([][]int32, n+1)
		for i := range lcs {
			lcs[i] = make([]int32, m+1)
		}
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < n || j < m {
			switch {
			case i < n && j < m && ma[i] == mb[j]:
				ops = append(ops, op{' ', ma[i], pre + i, pre + j})
				i++
				j++
			case j < m && (i == n || lcs[i][j+1] > lcs[i+1][j]):
				ops = append(ops, op{'+', mb[j], pre + i, pre + j})
				j++
			default:
				ops = append(ops, op{'-', ma[i], pre + i, pre + j})
				i++
			}
		}
	}
	for k := 0; k < suf; k++ {
		ai, bi := len(a)-suf+k, len(b)-suf+k
		ops = append(ops, op{' ', a[ai], ai, bi})
	}
	return ops
}

// Shift maps a diff's old-revision lines the diff left alone to the new
// revision: a rerun carries earlier findings across the interdiff with it.
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

// NewShift reads the hunks of a unified diff; "" maps every line to itself.
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
// old lines from..to alone (none removed, nothing inserted between); else false.
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

// line maps one old line; inner: an insertion right before it breaks the range.
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
			return n + h.delta, true // an insertion at the hunk's end, before a line it does not show
		}
		delta = h.delta
	}
	return n + delta, true
}
