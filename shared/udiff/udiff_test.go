package udiff

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

func TestUnifiedDiff(t *testing.T) {
	tests := []struct {
		name, a, b, want string
	}{
		{"identical", "x\ny\n", "x\ny\n", ""},
		{"both empty", "", "", ""},
		{"add to empty", "", "a\nb\n", "@@ -0,0 +1,2 @@\n+a\n+b\n"},
		{"delete all", "a\n", "", "@@ -1 +0,0 @@\n-a\n"},
		{"change middle", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n",
			"@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"},
		{"missing final newline", "a\nb", "a\nb\n", "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"},
		{"two hunks", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "one\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\ntwelve\n",
			"@@ -1,4 +1,4 @@\n-1\n+one\n 2\n 3\n 4\n@@ -9,4 +9,4 @@\n 9\n 10\n 11\n-12\n+twelve\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Unified(tt.a, tt.b, 3)
			if got != tt.want {
				t.Errorf("diff:\n%s\nwant:\n%s", got, tt.want)
			}
			if got != "" {
				if applied, err := applyDiff(tt.a, got); err != nil || applied != tt.b {
					t.Errorf("applying the diff gave %q, %v; want %q", applied, err, tt.b)
				}
			}
		})
	}
}

// TestUnifiedDiffRoundTrip checks that diffs of many small edits apply back.
func TestUnifiedDiffRoundTrip(t *testing.T) {
	base := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"}
	for seed := 0; seed < 200; seed++ {
		var a, b []string
		for i, l := range base {
			a = append(a, l)
			switch (seed*7 + i*3) % 5 {
			case 0:
				b = append(b, l+"!")
			case 1:
			case 2:
				b = append(b, l, "new"+strconv.Itoa(i))
			default:
				b = append(b, l)
			}
		}
		as, bs := strings.Join(a, "\n")+"\n", strings.Join(b, "\n")+"\n"
		d := Unified(as, bs, seed%4)
		if got, err := applyDiff(as, d); err != nil || got != bs {
			t.Fatalf("seed %d: round trip failed (%v):\n%s", seed, err, d)
		}
	}
}

// applyDiff applies unified-diff hunks to a, for checking unifiedDiff.
func applyDiff(a, diff string) (string, error) {
	src := splitLines(a)
	var out []string
	pos := 0
	lines := strings.SplitAfter(diff, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if l == "" {
			continue
		}
		if strings.HasPrefix(l, "@@ ") {
			var start int
			fields := strings.Fields(l)
			spec := strings.TrimPrefix(fields[1], "-")
			s, n, _ := strings.Cut(spec, ",")
			start, _ = strconv.Atoi(s)
			if n == "0" {
				start++ // an empty range names the line before
			}
			for pos < start-1 {
				out = append(out, src[pos])
				pos++
			}
			continue
		}
		text := l[1:]
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], `\ No newline`) {
			text = strings.TrimSuffix(text, "\n")
			i++
		}
		switch l[0] {
		case ' ', '-':
			if pos >= len(src) || src[pos] != text {
				return "", fmt.Errorf("context mismatch at line %d", pos+1)
			}
			if l[0] == ' ' {
				out = append(out, text)
			}
			pos++
		case '+':
			out = append(out, text)
		default:
			return "", fmt.Errorf("bad line %q", l)
		}
	}
	out = append(out, src[pos:]...)
	return strings.Join(out, ""), nil
}
