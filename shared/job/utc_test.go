package job

import (
	"testing"
	"time"
)

// Rule LC-2: every persisted timestamp is UTC, whatever the host's zone
// (TZ): one clock, one format, lexical order equal to time order.
func TestTimestampsAreUTCUnderAnyTimeZone(t *testing.T) {
	saved := time.Local
	t.Cleanup(func() { time.Local = saved })
	time.Local = time.FixedZone("UTC+5:30", 5*3600+1800)

	kolkata := time.Date(2026, 11, 22, 17, 30, 0, 0, time.Local) // 12:00 UTC
	if got := FormatTime(kolkata); got != "2026-11-22T12:00:00.000Z" {
		t.Errorf("FormatTime(12:00 UTC seen from +05:30) = %s, want 2026-11-22T12:00:00.000Z", got)
	}
	clock := Clock(func() time.Time { return kolkata })
	if got := clock.Now(); got.Location() != time.UTC || !got.Equal(kolkata) {
		t.Errorf("Clock.Now() = %v, want the same instant in UTC", got)
	}
	if got := Now(); got.Location() != time.UTC {
		t.Errorf("Now() in %v, want UTC", got.Location())
	}
	// Parsed back, a written timestamp is the same instant.
	back, err := ParseTime(FormatTime(Now()))
	if err != nil || time.Since(back) > time.Minute || time.Since(back) < -time.Minute {
		t.Errorf("round trip of now: %v, %v", back, err)
	}
	// Lease expiries compare lexically: a later instant written from
	// another zone still sorts after.
	l := Lease{Now: kolkata, TTL: time.Minute}
	if l.Expires() <= FormatTime(time.Date(2026, 11, 22, 12, 0, 30, 0, time.UTC)) {
		t.Errorf("lease expiry %s sorts before an earlier UTC instant", l.Expires())
	}
}
