package notifystage

import (
	"context"
	"strconv"
	"strings"

	"github.com/criticizer/criticizer/shared/decide"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/render"
	"github.com/criticizer/criticizer/shared/swarm"
	"github.com/criticizer/criticizer/shared/swarm/comments"
)

// Reruns (docs/swarm-comments.md, "Reruns"): the one comparison with the
// previous version is made when the review is decided (package decide). On
// Swarm, the review's rows ("finding/<fingerprint>" → comment id) record
// what was commented: not commented again; of the resolved findings an open
// task is set to addressed, a plain comment gets one short note.

// prior is what earlier versions of the review were told.
type prior struct {
	comments map[string]swarm.Comment // by fingerprint: the finding's comment as Swarm has it now
	// channel is the attempt's comments channel: its one listing (which also
	// settles in-flight rows) and the highest comment id the rows name.
	channel *comments.Channel
}

// loadPrior reads the review's finding rows and the comments they name (one
// listing from the first of them on); nil for a first version.
func (n *Notify) loadPrior(ctx context.Context, review int64, version int) (*prior, error) {
	if version <= 1 {
		return nil, nil
	}
	rows, err := n.Comments.Rows.ListThread(ctx, outbox.ChannelSwarmComments, review)
	if err != nil {
		return nil, err
	}
	p := &prior{comments: map[string]swarm.Comment{}, channel: comments.New(n.Comments.API)}
	byID := map[int64]string{}
	first := int64(0) // the earliest finding comment
	for _, r := range rows {
		id, err := strconv.ParseInt(r.NotificationID, 10, 64)
		if r.NotifiedAt == "" || err != nil {
			continue
		}
		p.channel.Saw(id) // a comment the rows name exists: later creates have higher ids
		if fp, ok := strings.CutPrefix(r.Item, swarm.KindFinding+"/"); ok {
			byID[id] = fp
			if first == 0 || id < first {
				first = id
			}
		}
	}
	if len(byID) == 0 {
		return p, nil
	}
	marked, err := p.channel.MarkedSince(ctx, review, first-1)
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

// resolvedDeliveries are the notes on resolved plain comments, keyed
// (review, fingerprint, resolved); the open tasks to set addressed are
// returned beside them. Only findings commented on earlier (p) have a
// comment to mark.
func resolvedDeliveries(review int64, version int, p *prior, in *decide.Decided) (notes []commentDelivery, tasks []taskChange) {
	g := in.Groups
	for _, r := range g.Resolved {
		fp := r.Fingerprint
		c, ok := p.comments[fp]
		if !ok {
			continue
		}
		switch c.TaskState {
		case swarm.TaskOpen:
			tasks = append(tasks, taskChange{item: outbox.Item{Channel: outbox.ChannelSwarmComments, Thread: review, ID: "addressed/" + fp}, comment: c.ID})
		case swarm.TaskComment, "":
			k := swarm.ResolvedKey(review, fp)
			title := strings.SplitN(c.Body, "\n", 2)[0]
			file, line, was := r.File, r.Line, g.PreviousVersion
			if c.Context != nil {
				file, line, was = c.Context.File, c.Context.RightLine, c.Context.Version
			}
			notes = append(notes, commentDelivery{item: commentItem(k),
				comment: swarm.NewComment{Review: review, Marker: k.Marker(), Silent: true,
					Body: render.ResolvedNote(version, title, file, line, was)}})
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
// comments.Tasks (no window: a row left in flight is reset and the PATCH
// done again); a Swarm client without task changes sets none.
func (n *Notify) address(ctx context.Context, jobID string, tc taskChange) error {
	setter, ok := n.Comments.API.(comments.TaskSetter)
	if !ok {
		return nil
	}
	it := tc.item
	// Its evidence is the finding's comment: a lookup starts just before it.
	p := outbox.Protocol{Ref: it, JobID: jobID, After: outbox.After(tc.comment - 1), Name: it.String(), Log: n.Log.With("comment", it.String()), Words: commentWords, Now: n.Now.Now}
	_, err := outbox.Deliver(ctx, p, n.Comments.Rows, comments.NewTasks(setter), comments.Task{Review: it.Thread, Comment: tc.comment})
	return err
}
