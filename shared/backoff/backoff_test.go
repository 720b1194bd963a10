package backoff

import (
	"testing"
	"testing/quick"
	"time"
)

func TestCap(t *testing.T) {
	tests := []struct {
		attempt int
		want    time.Duration
	}{
		{0, time.Second}, {1, time.Second}, {2, 2 * time.Second}, {3, 4 * time.Second},
		{6, 32 * time.Second}, {7, 60 * time.Second}, {50, 60 * time.Second}, {5000, 60 * time.Second},
	}
	for _, tt := range tests {
		if got := Default.Cap(tt.attempt); got != tt.want {
			t.Errorf("Cap(%d) = %v, want %v", tt.attempt, got, tt.want)
		}
	}
}

// Property: every delay lies in [0, min(60 s, 2^(n-1) s)] without Retry-After.
func TestDelayWithinFullJitterBounds(t *testing.T) {
	prop := func(n uint8) bool {
		attempt := int(n%20) + 1
		d := Default.Delay(attempt, 0)
		return d >= 0 && d <= Default.Cap(attempt)
	}
	if err := quick.Check(prop, &quick.Config{MaxCount: 5000}); err != nil {
		t.Fatal(err)
	}
}

// The extremes of the random draw map to the extremes of the range.
func TestDelayJitterEndpoints(t *testing.T) {
	lo := Default.delay(4, 0, func(int64) int64 { return 0 })
	hi := Default.delay(4, 0, func(n int64) int64 { return n - 1 })
	if lo != 0 || hi != 8*time.Second {
		t.Fatalf("endpoints = %v, %v; want 0, 8s", lo, hi)
	}
}

// A Retry-After shorter than the drawn backoff never shortens it (spec §8.2).
func TestDelayRetryAfterNeverShortensTheDraw(t *testing.T) {
	if d := Default.delay(4, time.Second, func(n int64) int64 { return n - 1 }); d != 8*time.Second {
		t.Fatalf("delay with a drawn 8s and Retry-After 1s = %v, want 8s", d)
	}
	if d := Default.delay(4, 20*time.Second, func(n int64) int64 { return n - 1 }); d != 20*time.Second {
		t.Fatalf("delay with a drawn 8s and Retry-After 20s = %v, want 20s", d)
	}
}

// Property: with Retry-After the delay is max(backoff, retry_after), capped at 5 min.
func TestDelayHonoursRetryAfter(t *testing.T) {
	prop := func(n uint8, raSeconds uint16) bool {
		attempt := int(n%20) + 1
		ra := time.Duration(raSeconds) * time.Second
		d := Default.Delay(attempt, ra)
		if d > 5*time.Minute {
			return false
		}
		if ra <= 5*time.Minute && d < ra {
			return false
		}
		if ra > 5*time.Minute && d != 5*time.Minute {
			return false
		}
		return true
	}
	if err := quick.Check(prop, &quick.Config{MaxCount: 5000}); err != nil {
		t.Fatal(err)
	}
}

func TestDelayIsRecomputedPerCall(t *testing.T) {
	seen := map[time.Duration]bool{}
	for i := 0; i < 50; i++ {
		seen[Default.Delay(7, 0)] = true
	}
	if len(seen) < 2 {
		t.Fatal("50 draws gave one value: the delay is not jittered per attempt")
	}
}

func TestSeconds(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want int32
	}{{0, 0}, {-time.Second, 0}, {time.Millisecond, 1}, {time.Second, 1}, {1500 * time.Millisecond, 2}, {60 * time.Second, 60}}
	for _, tt := range tests {
		if got := Seconds(tt.d); got != tt.want {
			t.Errorf("Seconds(%v) = %d, want %d", tt.d, got, tt.want)
		}
	}
}
