package notifystage

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/swarm"
)

// Reruns (docs/swarm-comments.md, "Reruns"): a later version of a review is
// matched to what the review was told before by finding fingerprint — the
// review's rows ("finding/<fingerprint>" → comment id) — so a finding
// already commented on is counted "still open", not commented again, and
// an earlier finding that is gone from a file reviewed in full in this
// version is "resolved": its open task is set to addressed, a plain
// comment gets one short note. Anything else is "not re-checked".

// ThreadRows lists a review's rows; the outbox has it.
type ThreadRows interface {
	ListThread(ctx context.Context, channel string, thread int64) ([]outbox.Row, error)
}

// TaskSetter changes a comment's task state (the Swarm client).
type TaskSetter interface {
	SetTaskState(ctx context.Context, id int64, state string) (swarm.Comment, error)
}

// prior is what earlier versions of the review were told.
type prior struct {
	comments map[string]swarm.Comment // by fingerprint: the finding's comment as Swarm has it now
}

// rerunCounts is what the summary says about a rerun.
type rerunCounts struct {
	on                                      bool
	fresh, stillOpen, resolved, unrechecked int
}

func (c rerunCounts) line() string {
	if !c.on {
		return ""
	}
	return fmt.Sprintf("Since the previous version: %d new, %d still open, %d resolved, %d not re-checked.", c.fresh, c.stillOpen, c.resolved, c.unrechecked)
}

// loadPrior reads the review's finding rows and the comments they name
// (one listing, every page). It is nil for a first version or when the
// outbox cannot list a thread.
func (n *Notify) loadPrior(ctx context.Context, review int64, version int) (*prior, error) {
	tr, ok := n.Comments.Rows.(ThreadRows)
	if version <= 1 || !ok {
		return nil, nil
	}
	rows, err := tr.ListThread(ctx, outbox.ChannelSwarmComments, review)
	if err != nil {
		return nil, err
	}
	byID := map[int64]string{}
	for _, r := range rows {
		fp, ok := strings.CutPrefix(r.Item, swarm.KindFinding+"/")
		if !ok || r.NotifiedAt == "" {
			continue
		}
		if id, err := strconv.ParseInt(r.NotificationID, 10, 64); err == nil {
			byID[id] = fp
		}
	}
	p := &prior{comments: map[string]swarm.Comment{}}
	if len(byID) == 0 {
		return p, nil
	}
	marked, err := n.Comments.API.Marked(ctx, review)
	if err != nil {
		return nil, err
	}
	for _, c := range marked {
		if fp, ok := byID[c.ID]; ok {
			p.comments[fp] = c
		}
	}
	return p, nil
}

// fullyReviewed reports whether file was reviewed in full in this version.
func fullyReviewed(file string, cs *domain.Changeset, meta domain.ReviewMeta) bool {
	if meta.WithoutModel != "" || cs == nil {
		return false
	}
	in := false
	for _, f := range cs.Files {
		in = in || f.DepotPath == file
	}
	for _, s := range meta.SkippedFiles {
		in = in && s.File != file
	}
	for _, t := range meta.TruncatedFiles {
		in = in && t.File != file
	}
	return in
}

// resolvedDeliveries are the notes on resolved plain comments, keyed
// (review, fingerprint, resolved); the open tasks to set addressed are
// returned beside them.
func resolvedDeliveries(review int64, version int, p *prior, current map[string]bool, cs *domain.Changeset, meta domain.ReviewMeta, counts *rerunCounts) (notes []commentDelivery, tasks []taskChange) {
	for fp, c := range p.comments {
		if current[fp] {
			continue
		}
		if c.Context == nil || !fullyReviewed(c.Context.File, cs, meta) {
			counts.unrechecked++
			continue
		}
		counts.resolved++
		switch c.TaskState {
		case swarm.TaskOpen:
			tasks = append(tasks, taskChange{item: outbox.Item{Channel: outbox.ChannelSwarmComments, Thread: review, ID: "addressed/" + fp}, comment: c.ID})
		case swarm.TaskComment, "":
			k := swarm.ResolvedKey(review, fp)
			title := strings.SplitN(c.Body, "\n", 2)[0]
			notes = append(notes, commentDelivery{item: outbox.Item{Channel: outbox.ChannelSwarmComments, Thread: review, ID: k.Kind + "/" + k.ID},
				comment: swarm.NewComment{Review: review, Marker: k.Marker(), Silent: true,
					Body: fmt.Sprintf("Resolved in version %d: %s (%s line %d in version %d) is gone from the file, which was reviewed in full.", version, title, c.Context.File, c.Context.RightLine, c.Context.Version)}})
		}
	}
	return notes, tasks
}

// taskChange is an open task to set addressed, once: its row is the
// record, so a reviewer who reopens the task is not overruled later.
type taskChange struct {
	item    outbox.Item
	comment int64
}

// address sets a resolved finding's task to addressed through its row and
// the one protocol (run). The PATCH names the comment and repeating it
// changes nothing, so its lookup never finds and its window is zero: a row
// left in flight is reset and the PATCH done again.
func (n *Notify) address(ctx context.Context, jobID string, tc taskChange) error {
	ch := n.Comments
	setter, ok := ch.API.(TaskSetter)
	if !ok {
		return nil
	}
	it := tc.item
	d := channelDelivery{name: it.String(), log: n.Log.With("comment", it.String()), words: commentWords,
		begin: func(ctx context.Context, now time.Time) (*outbox.Send, error) {
			send, err := ch.Rows.BeginItem(ctx, it, jobID, now)
			if err != nil && failure.Classify(err) == failure.NotFound {
				err = fmt.Errorf("%w: %w", errRefused, err)
			}
			return send, err
		},
		markSent: func(ctx context.Context, id string, now time.Time) error {
			return ch.Rows.MarkItemSent(ctx, it, id, now)
		},
		release: func(ctx context.Context, tok string, c failure.Class, m string, permanent bool, now time.Time) error {
			return ch.Rows.ReleaseItem(ctx, it, tok, c, m, permanent, now)
		},
		reset: func(ctx context.Context, tok string, now time.Time) error {
			return ch.Rows.ResetItem(ctx, it, tok, now)
		},
		send: func(ctx context.Context) (string, error) {
			if _, err := setter.SetTaskState(ctx, tc.comment, swarm.TaskAddressed); err != nil {
				if !failure.Classify(err).Retryable() {
					err = fmt.Errorf("%w: %w", errRefused, err)
				}
				return "", err
			}
			return strconv.FormatInt(tc.comment, 10), nil
		},
		maybeSent: func(error) bool { return false }, // repeating the PATCH is no change: release and redo
		lookup:    func(context.Context) (string, bool, error) { return "", false, nil },
	}
	_, err := n.run(ctx, d)
	return err
}
