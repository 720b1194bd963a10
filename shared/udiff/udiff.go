// Package udiff renders unified diffs of text: the hunks that `p4 diff2 -du`
// prints. The fetch stage diffs revisions it printed in batches (fewer p4
// round trips than one diff2 per file); the p4 stand-in serves diff2 with it.
package udiff

import (
	"fmt"
	"strings"
)

// Unified renders the hunks of a unified diff from a to b with ctx lines
// of context, the way `p4 diff2 -du` prints them: hunk headers and lines, no
// file header (p4 puts the file names in the tagged header record instead).
// It returns "" when the contents are identical.
func Unified(a, b string, ctx int) string {
	al, bl := splitLines(a), splitLines(b)
	ops := editScript(al, bl)
	var out strings.Builder
	// Walk the script, cutting it into hunks: a hunk spans from ctx lines
	// before a change to ctx lines after the last change that is within 2*ctx
	// unchanged lines of the previous one.
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

// hunkRange formats one side of a hunk header: a 0-based start index becomes
// the 1-based line number, and an empty range names the line before it.
func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// op is one line of an edit script, with the 0-based positions in a and b
// where it occurs (for '+' lines, a is where the insertion happens).
type op struct {
	kind byte // ' ', '-' or '+'
	text string
	a, b int
}

// splitLines splits s into lines that keep their "\n"; a last line without
// one stays distinct from the same text with one, so that a missing final
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

// maxCells bounds the LCS table; the fixtures are small, and a fixture that
// is not gets a correct (if unhelpful) replace-everything diff instead.
const maxCells = 1 << 22

// editScript computes a shortest edit script from a to b by longest common
// subsequence, after trimming the common prefix and suffix.
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
