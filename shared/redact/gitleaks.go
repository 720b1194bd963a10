package redact

import (
	"fmt"
	"strings"
	"sync"

	"github.com/rs/zerolog"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
)

// gitleaks wraps the gitleaks detector with its default rule set.
type gitleaks struct {
	d *detect.Detector
}

var (
	gitleaksOnce sync.Once
	gitleaksDet  *gitleaks
	gitleaksErr  error
)

// maxDecodeDepth lets gitleaks look inside base64/hex/percent-encoded
// segments, as its CLI does; a secret found only after decoding makes its
// whole line redacted, since the encoded text cannot be cut precisely.
const maxDecodeDepth = 2

// loadGitleaks builds the detector once per process: the default config goes
// through viper's global state, and compiling 200-odd rules is not free.
func loadGitleaks() (g *gitleaks, err error) {
	gitleaksOnce.Do(func() {
		defer func() {
			if p := recover(); p != nil {
				gitleaksErr = fmt.Errorf("gitleaks panicked while loading: %v", p)
			}
		}()
		// gitleaks logs through a global zerolog logger, at levels where
		// findings (secrets) can appear. Nothing of it may reach our logs.
		logging.Logger = zerolog.Nop()
		d, err := detect.NewDetectorDefaultConfig()
		if err != nil {
			gitleaksErr = err
			return
		}
		d.IgnoreGitleaksAllow = true
		d.MaxDecodeDepth = maxDecodeDepth
		d.Redact = 0 // we need the secret to locate it; it never leaves this package
		gitleaksDet = &gitleaks{d: d}
	})
	return gitleaksDet, gitleaksErr
}

// find runs the detector and turns its findings into spans. gitleaks reports
// lines (0-based) and the secret, not byte offsets, so the secret is located
// again within its lines; when it cannot be (a secret found after decoding),
// the lines themselves are redacted.
func (g *gitleaks) find(text string) []span {
	findings := g.d.DetectString(text)
	if len(findings) == 0 {
		return nil
	}
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
		first, last := clamp(f.StartLine), clamp(f.EndLine)
		if last < first {
			last = first
		}
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
				spans = append(spans, span{start: i + j, end: i + j + len(needle), rule: f.RuleID})
				found = true
				i += j + len(needle)
			}
			if found {
				break
			}
		}
		if !found {
			for l := first; l <= last; l++ {
				spans = append(spans, span{start: starts[l], end: lineEnd(l), rule: f.RuleID})
			}
		}
	}
	return spans
}
