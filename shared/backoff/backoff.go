// Package backoff owns the retry delay policy of rules BO-1 and BO-2: full jitter,
// initial 1 s, multiplier 2, ceiling 60 s, recomputed on every attempt, and an
// upstream Retry-After honoured as max(backoff, retry_after) capped at 5 min.
package backoff

import (
	"math"
	"math/rand/v2"
	"time"
)

// Policy holds the backoff parameters. The zero value is not useful; start
// from Default.
type Policy struct {
	Initial    time.Duration // delay ceiling of the first retry
	Multiplier float64       // growth of the ceiling per attempt
	Max        time.Duration // ceiling of any computed backoff
	Ceiling    time.Duration // operational cap on the effective delay, Retry-After included
}

// Default is the policy of rules BO-1 and BO-2.
var Default = Policy{Initial: time.Second, Multiplier: 2, Max: 60 * time.Second, Ceiling: 5 * time.Minute}

// Cap returns the upper bound of the jittered backoff after the given failed
// attempt (1-based): min(Max, Initial*Multiplier^(attempt-1)).
func (p Policy) Cap(attempt int) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	c := float64(p.Initial) * math.Pow(p.Multiplier, float64(attempt-1))
	if c > float64(p.Max) || math.IsInf(c, 0) || math.IsNaN(c) {
		return p.Max
	}
	return time.Duration(c)
}

// Delay is the wait after failed attempt, a fresh full-jitter draw each call,
// honouring retryAfter (0: none sent).
func (p Policy) Delay(attempt int, retryAfter time.Duration) time.Duration {
	return p.delay(attempt, retryAfter, rand.Int64N)
}

func (p Policy) delay(attempt int, retryAfter time.Duration, randN func(int64) int64) time.Duration {
	d := time.Duration(randN(int64(p.Cap(attempt)) + 1)) // uniform in [0, cap]
	if retryAfter > d {
		d = retryAfter
	}
	if d > p.Ceiling {
		d = p.Ceiling
	}
	return d
}

// Seconds converts a delay into the whole seconds SQS visibility timeouts take,
// rounding up so that a delay is never shortened.
func Seconds(d time.Duration) int32 {
	if d <= 0 {
		return 0
	}
	return int32((d + time.Second - 1) / time.Second)
}
