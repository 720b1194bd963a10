package outcome

import (
	"context"
	"log/slog"
	"time"

	"github.com/criticizer/criticizer/shared/job"
)

// DefaultLimit is how many due reviews a pass reads (each a listing and a write
// per changed fate).
const DefaultLimit = 50

// Pass is the sweeper's read of reactions: the reviews whose read is due
// (watch list), each read once and moved on, within a limit and a budget.
type Pass struct {
	Store    *Store
	Reader   *Reader
	Interval time.Duration // between reads of one review; DefaultInterval when zero
	Limit    int32         // DefaultLimit when zero
	Budget   time.Duration // 0: unbounded
	Now      job.Clock
	Log      *slog.Logger
}

// PassReport is what one pass did.
type PassReport struct {
	Due          int `json:"due"`
	Read         int `json:"read"`
	FatesChanged int `json:"fates_changed"`
	Failed       int `json:"failed,omitempty"`
	// Backlog counts the due reviews this pass did not reach.
	Backlog int `json:"backlog,omitempty"`
}

// Run makes one pass; a failed review stays due and does not stop the others.
func (p *Pass) Run(ctx context.Context) (PassReport, error) {
	now := p.Now.Now()
	limit, every := p.Limit, p.Interval
	if limit <= 0 {
		limit = DefaultLimit
	}
	if every <= 0 {
		every = DefaultInterval
	}
	due, err := p.Store.Due(ctx, now, limit+1)
	if err != nil {
		return PassReport{}, err
	}
	rep := PassReport{Due: len(due)}
	read := map[int64]bool{} // a review with several entries due is read once
	for i, d := range due {
		if i == int(limit) || (p.Budget > 0 && !p.Now.Now().Before(now.Add(p.Budget))) {
			rep.Backlog = len(due) - i
			break
		}
		again := read[d.Review]
		var t Tally
		var err error
		if !again {
			t, err = p.Reader.Read(ctx, d.Review, nil)
		}
		if err == nil {
			read[d.Review] = true
			err = p.Store.Done(ctx, d, now.Add(every))
		}
		if err != nil {
			rep.Failed++
			if !now.Before(d.Until) && p.Store.Done(ctx, d, now.Add(every)) == nil {
				continue // its window is over: dropped, not retried for ever
			}
			p.Log.WarnContext(ctx, "reading a review's reactions failed; the next pass retries", "review", d.Review, "err", err)
			continue
		}
		if !again {
			rep.Read++
		}
		rep.FatesChanged += t.FatesChanged
	}
	return rep, nil
}
