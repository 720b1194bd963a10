package outcome

import (
	"context"
	"strconv"
	"strings"

	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/swarm"
)

// An event (package swarmevents) only points: the review is read back from
// Swarm's API and fates raised by Decide, so an event that lies changes nothing
// Swarm does not show, and late, repeated or reordered events record the same.

// Point reads review again because an event named it; found is false when none
// of our findings is recorded on it.
func (r *Reader) Point(ctx context.Context, review int64) (written, found bool, err error) {
	if r.Comments == nil {
		return false, false, nil // no Swarm login to read back with: the sweeper's pass reads it
	}
	t, err := r.Read(ctx, review, nil)
	return t.FatesChanged > 0, t.Read > 0, err
}

// commentIDs maps each finding posted on review to the comment that holds
// it (its outbox row's notification id).
func (r *Reader) commentIDs(ctx context.Context, review int64) (map[string]int64, error) {
	rows, err := r.Rows.ListThread(ctx, outbox.ChannelSwarmComments, review)
	if err != nil {
		return nil, err
	}
	ids := map[string]int64{}
	for _, row := range rows {
		fp, ok := strings.CutPrefix(row.Item, swarm.KindFinding+"/")
		if !ok || row.NotifiedAt == "" {
			continue
		}
		if id, err := strconv.ParseInt(row.NotificationID, 10, 64); err == nil {
			ids[fp] = id
		}
	}
	return ids, nil
}
