// Package weekly holds what the weekly digest will list: each reviewed
// job's entry in the ISO week its job was created in (Entry, Entries),
// recorded when the review is decided (shared/decide) and read by the
// digest (shared/digest). It links no mail code, so the llm stage can
// record entries.
package weekly

import (
	"encoding/json"
	"fmt"
	"time"
)

// Week is an ISO 8601 week (Monday to Sunday, UTC).
type Week struct {
	Year, Number int
}

// WeekOf is the ISO week t falls in (UTC).
func WeekOf(t time.Time) Week {
	y, w := t.UTC().ISOWeek()
	return Week{Year: y, Number: w}
}

// String is the ISO form, "2026-W48".
func (w Week) String() string { return fmt.Sprintf("%04d-W%02d", w.Year, w.Number) }

// ParseWeek reads "2026-W48".
func ParseWeek(s string) (Week, error) {
	var w Week
	if _, err := fmt.Sscanf(s, "%04d-W%02d", &w.Year, &w.Number); err != nil || w.String() != s || WeekOf(w.Start()) != w {
		return Week{}, fmt.Errorf("digest: week %q: want an ISO week such as 2026-W48", s)
	}
	return w, nil
}

// Start is the Monday 00:00 UTC that begins w.
func (w Week) Start() time.Time {
	// 4 January is always in week 1 (ISO 8601).
	jan4 := time.Date(w.Year, time.January, 4, 0, 0, 0, 0, time.UTC)
	monday := jan4.AddDate(0, 0, -((int(jan4.Weekday()) + 6) % 7))
	return monday.AddDate(0, 0, 7*(w.Number-1))
}

// End is the instant w ends (the next Monday 00:00 UTC).
func (w Week) End() time.Time { return w.Start().AddDate(0, 0, 7) }

// Previous is the week before w.
func (w Week) Previous() Week { return WeekOf(w.Start().AddDate(0, 0, -1)) }

// WeekOfEvent is the week a run digests: the event's "week" ("2026-W48",
// an operator's invoke), else the ISO week before the one its "time" falls
// in (an EventBridge schedule's event, whose time a retried delivery keeps,
// so a retry digests the same week), else the week before now.
func WeekOfEvent(event []byte, now time.Time) (Week, error) {
	var in struct {
		Week string    `json:"week"`
		Time time.Time `json:"time"`
	}
	if len(event) > 0 {
		if err := json.Unmarshal(event, &in); err != nil {
			return Week{}, fmt.Errorf("digest: event: %w", err)
		}
	}
	switch {
	case in.Week != "":
		return ParseWeek(in.Week)
	case !in.Time.IsZero():
		return WeekOf(in.Time).Previous(), nil
	}
	return WeekOf(now).Previous(), nil
}
