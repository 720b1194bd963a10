package llm

import (
	"time"
)

// pace is the speed an endpoint's answers came at (a model on two CPU cores
// takes tens of seconds, a hosted one a few, so no fixed timeout fits both):
// an exponentially weighted mean of tokens per second of whole calls; the
// first call gets Config.Timeout.
type pace struct {
	tokensPerSec float64 // input+output tokens per second of a call
	outPerSec    float64 // output tokens per second, prompt time included
	largestOut   int     // the longest answer so far, in tokens
	calls        int
}

// paceWeight is the weight of the newest call in the mean.
const paceWeight = 0.3

// minMeasured is the shortest call worth measuring: shorter ones are
// dominated by connection set-up, not by the model.
const minMeasured = 50 * time.Millisecond

func (p *pace) observe(u Usage, d time.Duration) {
	if d < minMeasured || u.OutputTokens <= 0 {
		return
	}
	all := float64(u.InputTokens+u.OutputTokens) / d.Seconds()
	out := float64(u.OutputTokens) / d.Seconds()
	if p.calls == 0 {
		p.tokensPerSec, p.outPerSec = all, out
	} else {
		p.tokensPerSec = paceWeight*all + (1-paceWeight)*p.tokensPerSec
		p.outPerSec = paceWeight*out + (1-paceWeight)*p.outPerSec
	}
	p.largestOut = max(p.largestOut, u.OutputTokens)
	p.calls++
}

// timeout is twice what the rate says a call takes, for an answer up to
// twice the longest seen (at most maxTokens), never under floor; the
// caller's deadline bounds it anyway.
func (p *pace) timeout(floor time.Duration, inputTokens, maxTokens int) time.Duration {
	if p.calls == 0 || p.tokensPerSec <= 0 || p.outPerSec <= 0 {
		return floor
	}
	// The prompt at the whole-call rate (conservative: output is slower),
	// the output at the output rate, which already carries prompt time.
	out := min(maxTokens, max(2*p.largestOut, 256))
	secs := float64(inputTokens)/p.tokensPerSec + float64(out)/p.outPerSec
	return max(floor, time.Duration(2*secs*float64(time.Second)))
}
