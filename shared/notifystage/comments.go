package notifystage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/criticizer/criticizer/shared/decide"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/swarm"
	"github.com/criticizer/criticizer/shared/swarm/comments"
)

// Swarm review comments are the notify stage's second channel
// (docs/swarm-comments.md): one inline comment per finding, keyed (review,
// fingerprint), and one summary per version, keyed (review, version), each
// an outbox row run through outbox.Deliver and comments.Channel (which
// settles a lost answer by the comment's marker).

// SwarmComments configures the comments channel; nil on Notify turns it off.
type SwarmComments struct {
	// Rows are the comment rows (*outbox.Outbox): run by the protocol, and
	// listed by review for a rerun.
	Rows CommentRows
	// API is the Swarm client the comments channel posts and looks up
	// with; with SetTaskState (comments.TaskSetter) it also sets the tasks
	// of resolved findings addressed.
	API comments.API
	// Window is how long after a create started Swarm may still be storing
	// it (SWARM_COMMENT_WINDOW_SECONDS): before it, a listing without the
	// marker proves nothing, so the row waits; after it, it is posted again.
	Window time.Duration
	// MaxInline caps the finding comments one version gets
	// (SWARM_MAX_INLINE_COMMENTS; inlinecap.go); 0: no cap.
	MaxInline int
}

// CommentRows are the comment rows: the protocol's, and a review's listing
// (what earlier versions were told).
type CommentRows interface {
	outbox.Rows
	ListThread(ctx context.Context, channel string, thread int64) ([]outbox.Row, error)
}

// commentOutcome is what the channel did in one attempt, for the job record.
type commentOutcome struct {
	posted, earlier int
	refused         []string // "<item>: <class>" of rows failed for good
	unanchored      []string // "<item> (<reason>)" of findings said on the review as a whole: Swarm refused their file context
	findings        []string // the fingerprints of the finding comments on the review now (posted now or earlier)
}

func (o commentOutcome) detail() string {
	s := fmt.Sprintf("Swarm comments: %d posted now, %d earlier", o.posted, o.earlier)
	if len(o.refused) > 0 {
		s += fmt.Sprintf("; %d refused for good (not retried): %s", len(o.refused), strings.Join(o.refused, ", "))
	}
	if len(o.unanchored) > 0 {
		s += fmt.Sprintf("; %d posted unanchored, on the review as a whole: %s", len(o.unanchored), strings.Join(o.unanchored, ", "))
	}
	return s
}

// commentDelivery is one comment to post, with its row and marker.
type commentDelivery struct {
	item    outbox.Item
	comment swarm.NewComment
	finding *domain.Finding // the finding an inline comment says (the inline cap ranks by it)
}

// postComments posts the job's findings and summary on its Swarm review. A
// retryable failure is returned (the e-mails sent are skipped by their rows
// on the retry); a permanent refusal is recorded on its row, never failing the job.
func (n *Notify) postComments(ctx context.Context, j *job.Job, in *decide.Decided) (commentOutcome, error) {
	var out commentOutcome
	pr, err := n.loadPrior(ctx, j.Swarm.Review, j.ReviewVersion)
	if err != nil {
		return out, err
	}
	ds, tasks, err := commentDeliveries(j, in, pr)
	if err != nil {
		return out, err
	}
	for _, tc := range tasks {
		if err := n.address(ctx, j.ID, tc); refused(err) {
			out.refused = append(out.refused, tc.item.ID+": "+string(failure.Classify(err)))
		} else if err != nil {
			return out, err
		}
	}
	ds = capInline(ds, n.Comments.MaxInline)
	ch := comments.New(n.Comments.API)
	if pr != nil {
		ch = pr.channel // a rerun's listing, taken this attempt: not listed again
	}
	for _, d := range ds {
		did, err := n.postComment(ctx, j.ID, d, ch)
		if err == nil && d.finding != nil {
			out.findings = append(out.findings, strings.TrimPrefix(d.item.ID, swarm.KindFinding+"/"))
		}
		if why, ok := ch.Unanchored(d.comment.Marker); ok && err == nil {
			n.Log.Warn("finding posted unanchored: Swarm refused its file context", "comment", d.item.String(), "reason", why)
			out.unanchored = append(out.unanchored, d.item.ID+" ("+why+")")
		}
		switch {
		case err == nil && did:
			out.posted++
		case err == nil:
			out.earlier++
		case refused(err):
			out.refused = append(out.refused, d.item.ID+": "+string(failure.Classify(err)))
		default:
			return out, err
		}
	}
	return out, nil
}

// postComment runs the outbox protocol for one comment through the
// attempt's comments channel ch (whose known ids bound its row's lookup).
func (n *Notify) postComment(ctx context.Context, jobID string, cd commentDelivery, ch *comments.Channel) (bool, error) {
	it := cd.item
	p := outbox.Protocol{Ref: it, JobID: jobID, After: ch, Name: it.String(), Log: n.Log.With("comment", it.String()), Window: n.Comments.Window, Words: commentWords, Now: n.Now.Now}
	return outbox.Deliver(ctx, p, n.Comments.Rows, ch, cd.comment)
}

// refused reports whether a comment or task change was refused for good:
// now (comments.ErrRefused) or in an earlier attempt (its row failed).
func refused(err error) bool {
	return errors.Is(err, comments.ErrRefused) || errors.Is(err, outbox.ErrFailed)
}

// commentWords are the comments channel's log lines.
var commentWords = outbox.Words{
	ReleaseLeaseFailed: "releasing an unposted comment row failed; the next attempt settles it",
	MaybeSent:          "comment may have been created; the row stays sending for lookup",
	ReleaseFailed:      "releasing a refused comment failed; the next attempt settles it",
	MarkFailed:         "marking a posted comment failed; the retry finds it by its marker",
	Done:               "review comment posted", DoneKey: "comment_id",
	Found:       "settled by lookup: Swarm had stored the earlier create",
	MayComplete: "comment may still be stored by Swarm; retrying after its window, not posting",
	NotFound:    "settled by lookup: the earlier create never landed; posting",
}

// commentDeliveries are the comments a job's review gets, as decided
// (decide.Comments): one per distinct finding not commented on in an
// earlier version, in the review's order, the notes on resolved plain
// comments, then the version's summary; and the resolved tasks to set
// addressed. in.Groups (nil for a first version) gives what is resolved;
// pr only what was commented before.
func commentDeliveries(j *job.Job, in *decide.Decided, pr *prior) ([]commentDelivery, []taskChange, error) {
	plan := in.Comments
	if plan == nil || len(plan.Findings) != len(in.Current) {
		return nil, nil, failure.Errorf(failure.InternalBug, "the decided review has no comments for its Swarm review: restart the job from fetch")
	}
	rv := j.Swarm.Review
	var out []commentDelivery
	for i, c := range in.Current {
		if pr != nil {
			if _, ok := pr.comments[c.Fingerprint]; ok {
				continue // commented on in an earlier version: not again
			}
		}
		k, fc := swarm.FindingKey(rv, c.Fingerprint), plan.Findings[i]
		out = append(out, commentDelivery{
			item: commentItem(k),
			comment: swarm.NewComment{Review: rv, Body: fc.Body, Marker: k.Marker(), Silent: true, Task: fc.Task,
				Context: fc.Context, Unanchored: fc.Unanchored},
			finding: &in.Current[i].Finding,
		})
	}
	var tasks []taskChange
	if pr != nil && in.Groups != nil {
		var notes []commentDelivery
		notes, tasks = resolvedDeliveries(rv, max(j.ReviewVersion, 1), pr, in)
		out = append(out, notes...)
	}
	k := swarm.SummaryKey(rv, max(j.ReviewVersion, 1))
	out = append(out, commentDelivery{item: commentItem(k), comment: swarm.NewComment{Review: rv, Body: plan.Summary, Marker: k.Marker()}})
	return out, tasks, nil
}

// commentItem is the outbox row key of the comment k identifies. A
// comment's one identity is its swarm.CommentKey; its row key and its
// marker (k.Marker) are both derived from it, here and nowhere else.
func commentItem(k swarm.CommentKey) outbox.Item {
	return outbox.Item{Channel: outbox.ChannelSwarmComments, Thread: k.Review, ID: k.Kind + "/" + k.ID}
}
