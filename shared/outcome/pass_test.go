package outcome_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
	"github.com/criticizer/criticizer/shared/swarm"
)

type countingComments struct {
	comments
	lists map[int64]int
}

func (c *countingComments) List(ctx context.Context, review int64) ([]swarm.Comment, error) {
	c.lists[review]++
	return c.comments.List(ctx, review)
}

// The sweeper's pass reads a watched review once per interval within its
// window, and not at all once the window is over: its cost follows the
// reads that are due, and reading twice records nothing twice.
func TestPassReadsWithinTheWindow(t *testing.T) {
	ctx := context.Background()
	st := outcome.NewStore(dynamotest.New(), dynamotest.Table)
	start := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	now := start
	cs := &countingComments{comments: comments{{ID: 1, User: "svc", TaskState: swarm.TaskAddressed}}, lists: map[int64]int{}}
	p := &outcome.Pass{Store: st, Reader: &outcome.Reader{Store: st, Rows: rows{posted("fp", 1)}, Comments: cs},
		Interval: 24 * time.Hour, Now: func() time.Time { return now }, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, review := range []int64{7, 8} {
		if _, err := st.Posted(ctx, outcome.Record{Review: review, Fingerprint: "fp"}); err != nil {
			t.Fatal(err)
		}
		if err := st.Watch(ctx, review, start, start.Add(48*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	run := func() outcome.PassReport {
		t.Helper()
		rep, err := p.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	if rep := run(); rep.Read != 2 || rep.FatesChanged != 2 {
		t.Fatalf("first pass = %+v, want both reviews read and judged", rep)
	}
	if rep := run(); rep.Due != 0 {
		t.Fatalf("second pass at the same time = %+v, want nothing due", rep)
	}
	now = start.Add(24 * time.Hour)
	if rep := run(); rep.Read != 2 || rep.FatesChanged != 0 {
		t.Fatalf("a day later = %+v, want both read and nothing new written", rep)
	}
	now = start.Add(72 * time.Hour)
	if rep := run(); rep.Read != 2 {
		t.Fatalf("at the window's end = %+v, want the last read", rep)
	}
	now = start.Add(96 * time.Hour)
	if rep := run(); rep.Due != 0 {
		t.Fatalf("after the window = %+v, want nothing due", rep)
	}
	if cs.lists[7] != 3 || cs.lists[8] != 3 {
		t.Fatalf("listings = %v, want 3 per review", cs.lists)
	}
}

// A pass takes at most its limit and says what it left.
func TestPassLimit(t *testing.T) {
	ctx := context.Background()
	st := outcome.NewStore(dynamotest.New(), dynamotest.Table)
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	for review := int64(1); review <= 3; review++ {
		if err := st.Watch(ctx, review, now, now.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	p := &outcome.Pass{Store: st, Reader: &outcome.Reader{Store: st, Rows: rows(nil), Comments: &comments{}}, Limit: 2,
		Now: func() time.Time { return now }, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	rep, err := p.Run(ctx)
	if err != nil || rep.Read != 2 || rep.Backlog != 1 {
		t.Fatalf("pass = %+v, %v: want 2 read, 1 left", rep, err)
	}
	if rep, _ := p.Run(ctx); rep.Read != 1 || rep.Backlog != 0 {
		t.Fatalf("next pass = %+v: want the one left", rep)
	}
}

// A review notified again (a later version, a retried notify) is watched
// from its last notify on: the entry of the earlier one is read no more
// than once after, so a review costs one listing per interval however
// many versions it had.
func TestPassReadsAReviewOncePerIntervalWhateverItsVersions(t *testing.T) {
	ctx := context.Background()
	st := outcome.NewStore(dynamotest.New(), dynamotest.Table)
	start := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	now := start
	cs := &countingComments{comments: comments{{ID: 1, User: "svc"}}, lists: map[int64]int{}}
	p := &outcome.Pass{Store: st, Reader: &outcome.Reader{Store: st, Rows: rows{posted("fp", 1)}, Comments: cs},
		Interval: 24 * time.Hour, Now: func() time.Time { return now }, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if _, err := st.Posted(ctx, outcome.Record{Review: 7, Fingerprint: "fp"}); err != nil {
		t.Fatal(err)
	}
	for v := range 3 { // three versions an hour apart, each watched for 10 days
		at := start.Add(time.Duration(v) * time.Hour)
		if err := st.Watch(ctx, 7, at, at.Add(240*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	now = start.Add(time.Hour) // the first two entries due together: one listing
	if rep, err := p.Run(ctx); err != nil || rep.Read != 1 || cs.lists[7] != 1 {
		t.Fatalf("first pass = %+v, %v, listings %v: want one read", rep, err, cs.lists)
	}
	now = start.Add(2 * time.Hour) // the last version's entry
	if rep, err := p.Run(ctx); err != nil || rep.Read != 1 {
		t.Fatalf("second pass = %+v, %v: want the current entry read", rep, err)
	}
	for day := 1; day <= 10; day++ { // to the end of the last version's window
		now = start.Add(time.Duration(day)*24*time.Hour + 2*time.Hour)
		if rep, err := p.Run(ctx); err != nil || rep.Due != 1 || rep.Read != 1 {
			t.Fatalf("day %d = %+v, %v: want one entry due and read", day, rep, err)
		}
	}
	now = start.Add(11*24*time.Hour + 2*time.Hour)
	if rep, err := p.Run(ctx); err != nil || rep.Due != 0 {
		t.Fatalf("after the window = %+v, %v: want nothing due", rep, err)
	}
	if cs.lists[7] != 12 {
		t.Fatalf("listings = %d, want 12 (2 on the first day, 1 a day after)", cs.lists[7])
	}
}
