package redact

import (
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
)

// gitleaksBaseline is gitleaks' own detector with its default rules, set up
// as this package used it before it evaluated the rules itself (decoding
// depth 2, in-band allow comments ignored), turned into a redaction the same
// way: each finding's secret is cut where it stands, or its lines when it
// was found only after decoding.
type gitleaksBaseline struct{ d *detect.Detector }

var (
	baselineOnce sync.Once
	baseline     *gitleaksBaseline
)

func newGitleaksBaseline(tb testing.TB) *gitleaksBaseline {
	baselineOnce.Do(func() {
		logging.Logger = zerolog.Nop()
		d, err := detect.NewDetectorDefaultConfig()
		if err != nil {
			tb.Fatal(err)
		}
		d.IgnoreGitleaksAllow, d.MaxDecodeDepth, d.Redact = true, maxDecodeDepth, 0
		baseline = &gitleaksBaseline{d: d}
	})
	return baseline
}

func (g *gitleaksBaseline) redact(text string) string {
	findings := g.d.DetectString(text)
	starts := lineStarts(text)
	lineEnd := func(l int) int {
		if l+1 < len(starts) {
			return starts[l+1] - 1
		}
		return len(text)
	}
	clamp := func(l int) int { return max(0, min(l, len(starts)-1)) }
	var spans []span
	for _, f := range findings {
		first, last := clamp(f.StartLine), clamp(max(f.EndLine, f.StartLine))
		lo, hi := starts[first], lineEnd(last)
		found := false
		for _, needle := range []string{f.Secret, f.Match} {
			if needle = strings.Trim(needle, "\n"); needle == "" {
				continue
			}
			for i := lo; i <= hi; {
				j := strings.Index(text[i:hi], needle)
				if j < 0 {
					break
				}
				spans = append(spans, span{i + j, i + j + len(needle), f.RuleID})
				found = true
				i += j + len(needle)
			}
			if found {
				break
			}
		}
		if !found {
			for l := first; l <= last; l++ {
				spans = append(spans, span{starts[l], lineEnd(l), f.RuleID})
			}
		}
	}
	return apply(text, merge(spans))
}

// TestRecallAtLeastGitleaks plants secrets of every class and holds the
// project to finding all of them, and everything gitleaks finds.
func TestRecallAtLeastGitleaks(t *testing.T) {
	in, ps := genCorpus(7, 400<<10, 12)
	r := newRedactor(t, corpusPolicy)
	out, _, err := r.Redact(in)
	if err != nil {
		t.Fatal(err)
	}
	got, per := recall(out, ps)
	glOut := newGitleaksBaseline(t).redact(in)
	glGot, glPer := recall(glOut, ps)
	classes := make([]string, 0, len(per))
	for c := range per {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	for _, c := range classes {
		t.Logf("%-22s project %3d/%-3d gitleaks %3d/%d", c, per[c][0], per[c][1], glPer[c][0], glPer[c][1])
		if per[c][0] != per[c][1] {
			t.Errorf("class %s: project found %d of %d planted", c, per[c][0], per[c][1])
		}
	}
	t.Logf("recall: project %.3f, gitleaks %.3f (%d planted)", got, glGot, len(ps))
	if got < glGot {
		t.Errorf("project recall %.3f below gitleaks' %.3f", got, glGot)
	}
	// Every secret gitleaks finds, the project removes too: where gitleaks
	// could say where it stands, that value; where it was found only after
	// decoding, something on its line.
	lines, inLines := strings.Split(out, "\n"), strings.Split(in, "\n")
	for _, f := range newGitleaksBaseline(t).d.DetectString(in) {
		l := f.StartLine
		if strings.Contains(inLines[l], f.Secret) {
			if strings.Contains(lines[l], f.Secret) {
				t.Errorf("line %d: gitleaks %s found %q, the project left it: %s", l+1, f.RuleID, f.Secret, lines[l])
			}
		} else if lines[l] == inLines[l] {
			t.Errorf("line %d: gitleaks %s found an encoded secret, the project left the line: %s", l+1, f.RuleID, lines[l])
		}
	}
}

// benchMB is the corpus size in MB (REDACT_BENCH_MB, default 2).
func benchMB() int {
	if n, err := strconv.Atoi(os.Getenv("REDACT_BENCH_MB")); err == nil && n > 0 {
		return n
	}
	return 2
}

// BenchmarkRedactCorpus compares MB/s and recall of the project (on all
// cores and on one) and of gitleaks on the same generated corpus.
func BenchmarkRedactCorpus(b *testing.B) {
	in, ps := genCorpus(42, benchMB()<<20, 20)
	report := func(b *testing.B, start time.Time, out string) {
		secs := time.Since(start).Seconds() / float64(b.N)
		b.StopTimer()
		b.ReportMetric(float64(len(in))/1e6/secs, "MB/s")
		rc, _ := recall(out, ps)
		b.ReportMetric(rc, "recall")
	}
	run := func(b *testing.B, procs int) {
		if procs > 0 {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		}
		r := newRedactor(b, corpusPolicy)
		if _, _, err := r.Redact("warm up: api_key = \"x\"\n"); err != nil {
			b.Fatal(err)
		}
		var out string
		b.ResetTimer()
		start := time.Now()
		for i := 0; i < b.N; i++ {
			var err error
			if out, _, err = r.Redact(in); err != nil {
				b.Fatal(err)
			}
		}
		report(b, start, out)
	}
	b.Run("project", func(b *testing.B) { run(b, 0) })
	b.Run("project-1cpu", func(b *testing.B) { run(b, 1) })
	b.Run("gitleaks", func(b *testing.B) {
		g := newGitleaksBaseline(b)
		var out string
		b.ResetTimer()
		start := time.Now()
		for i := 0; i < b.N; i++ {
			out = g.redact(in)
		}
		report(b, start, out)
	})
}

// BenchmarkRedactLongLine is the same comparison on one long line (minified
// code, a serialized blob): no line structure to prefilter by.
func BenchmarkRedactLongLine(b *testing.B) {
	in, ps := genCorpus(43, benchMB()<<18, 20)
	// PEM blocks keep their own lines: they span lines by nature.
	in = strings.ReplaceAll(in, "\n+", " ;+")
	in = strings.ReplaceAll(in, "-----BEGIN RSA PRIVATE KEY----- ;+", "-----BEGIN RSA PRIVATE KEY-----\n+")
	measure := func(b *testing.B, redact func() string) {
		var out string
		b.ResetTimer()
		start := time.Now()
		for i := 0; i < b.N; i++ {
			out = redact()
		}
		secs := time.Since(start).Seconds() / float64(b.N)
		b.StopTimer()
		b.ReportMetric(float64(len(in))/1e6/secs, "MB/s")
		rc, _ := recall(out, ps)
		b.ReportMetric(rc, "recall")
	}
	b.Run("project", func(b *testing.B) {
		r := newRedactor(b, corpusPolicy)
		measure(b, func() string {
			out, _, err := r.Redact(in)
			if err != nil {
				b.Fatal(err)
			}
			return out
		})
	})
	b.Run("gitleaks", func(b *testing.B) {
		g := newGitleaksBaseline(b)
		measure(b, func() string { return g.redact(in) })
	})
}

// BenchmarkFirstUse is what a cold function pays for redaction: building a
// Redactor and redacting a small diff with nothing loaded yet.
func BenchmarkFirstUse(b *testing.B) {
	in, _ := genCorpus(3, 8<<10, 20)
	var total time.Duration
	for i := 0; i < b.N; i++ {
		glOnce, glRules, glErr = sync.Once{}, nil, nil
		start := time.Now()
		r, err := New(corpusPolicy)
		if err == nil {
			_, _, err = r.Redact(in)
		}
		total += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "init-ms")
}
