package notifystage

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/modeltext"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/rerun"
	"github.com/criticizer/criticizer/shared/swarm"
	"github.com/criticizer/criticizer/shared/udiff"
)

// Swarm review comments are the notify stage's second channel
// (docs/swarm-comments.md): one inline comment per finding, keyed (review,
// finding fingerprint), and one summary per review version, keyed (review,
// version), each an outbox row with the e-mail rows' protocol. Swarm's create
// has no idempotency key, so a create whose answer may have been lost is
// settled by listing the review's comments (all pages of those stored after
// a comment known before the create) and matching the marker each comment
// carries; it is never posted again blind.

// CommentRows is the part of the outbox the comments channel uses: the
// e-mail rows' protocol, for rows identified by an outbox.Item, whose Begin
// records the id the row's lookup may start after (outbox.BeginItemAfter).
type CommentRows interface {
	BeginItemAfter(ctx context.Context, it outbox.Item, after int64, jobID string, now time.Time) (*outbox.Send, error)
	MarkItemSent(ctx context.Context, it outbox.Item, evidence string, now time.Time) error
	ReleaseItem(ctx context.Context, it outbox.Item, sendToken string, class failure.Class, msg string, permanent bool, now time.Time) error
	ResetItem(ctx context.Context, it outbox.Item, sendToken string, now time.Time) error
}

// CommentAPI is what the channel supplies: send (Create, whose errors carry
// the failure class and swarm.MaybeCreated) and lookup (MarkedAfter: the
// service's marked comments on a review stored after a known comment id,
// 0 for all, every page read).
type CommentAPI interface {
	Create(ctx context.Context, n swarm.NewComment) (swarm.Comment, error)
	MarkedAfter(ctx context.Context, review, after int64) (map[swarm.Marker]swarm.Comment, error)
}

// lookups is what one attempt knows of its review's comments: the highest
// comment id known to exist (created or found this attempt, or named by an
// earlier version's rows), which bounds the lookup of any create sent
// after it, and the attempt's listing with the id it started after.
type lookups struct {
	known  int64
	from   int64
	marked map[swarm.Marker]swarm.Comment // nil: not listed yet
}

func (l *lookups) saw(id int64) { l.known = max(l.known, id) }

// markedSince returns the service's marked comments stored after comment
// id from (0: every comment), reusing the attempt's listing when it
// started no later: one listing per attempt settles every in-flight row.
func (l *lookups) markedSince(ctx context.Context, api CommentAPI, review, from int64) (map[swarm.Marker]swarm.Comment, error) {
	if l.marked != nil && l.from <= from {
		return l.marked, nil
	}
	from = max(from, 0)
	m, err := api.MarkedAfter(ctx, review, from)
	if err != nil {
		return nil, err
	}
	l.from, l.marked = from, m
	return m, nil
}

// SwarmComments configures the comments channel; nil on Notify turns it off.
type SwarmComments struct {
	Rows CommentRows
	API  CommentAPI
	// Window is how long after a create started Swarm may still be storing
	// it (SWARM_COMMENT_WINDOW_SECONDS): before it, a listing without the
	// marker proves nothing, so the row waits; after it, it is posted again.
	Window time.Duration
	// MaxInline caps the finding comments one version gets
	// (SWARM_MAX_INLINE_COMMENTS; inlinecap.go); 0: no cap.
	MaxInline int
}

// DefaultCommentWindow is Window when the environment sets none.
const DefaultCommentWindow = swarm.DefaultCommentWindow

// commentOutcome is what the channel did in one attempt, for the job record.
type commentOutcome struct {
	posted, earlier int
	refused         []string          // "<item>: <class>" of rows failed for good
	findings        []commentDelivery // the finding comments on the review now (posted now or earlier)
}

func (o commentOutcome) detail() string {
	s := fmt.Sprintf("Swarm comments: %d posted now, %d earlier", o.posted, o.earlier)
	if len(o.refused) > 0 {
		s += fmt.Sprintf("; %d refused for good (not retried): %s", len(o.refused), strings.Join(o.refused, ", "))
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
// retryable failure is returned (the stage's backoff retries it, and the
// e-mails already sent are skipped by their rows); a permanent refusal is
// recorded on the comment's row and in the outcome, and never fails the job.
func (n *Notify) postComments(ctx context.Context, j *job.Job, review domain.ReviewResult, current []rerun.Current, cs *domain.Changeset, pageURL string, g *rerun.Groups) (commentOutcome, error) {
	var out commentOutcome
	pr, err := n.loadPrior(ctx, j.Swarm.Review, j.ReviewVersion)
	if err != nil {
		return out, err
	}
	ds, tasks := commentDeliveries(j, review, current, cs, pageURL, pr, g)
	for _, tc := range tasks {
		if err := n.address(ctx, j.ID, tc); errors.Is(err, errRefused) {
			out.refused = append(out.refused, tc.item.ID+": "+string(failure.Classify(err)))
		} else if err != nil {
			return out, err
		}
	}
	ds = capInline(ds, n.Comments.MaxInline)
	lk := &lookups{}
	if pr != nil {
		lk = pr.lookups // a rerun's listing, taken this attempt: not listed again
	}
	for _, d := range ds {
		did, err := n.postComment(ctx, j.ID, d, lk)
		if err == nil && d.finding != nil {
			out.findings = append(out.findings, d)
		}
		switch {
		case err == nil && did:
			out.posted++
		case err == nil:
			out.earlier++
		case errors.Is(err, errRefused):
			out.refused = append(out.refused, d.item.ID+": "+string(failure.Classify(err)))
		default:
			return out, err
		}
	}
	return out, nil
}

// errRefused marks a comment Swarm refused for good (now or earlier).
var errRefused = errors.New("refused for good")

// postComment runs the outbox protocol (run) for one comment: the Swarm
// channel sends with Create and looks an earlier create up by its marker
// over every page of the review's comments stored after the id its row
// recorded at Begin (one listing per attempt). A permanent refusal comes
// back wrapped in errRefused.
func (n *Notify) postComment(ctx context.Context, jobID string, cd commentDelivery, lk *lookups) (bool, error) {
	ch, it := n.Comments, cd.item
	d := channelDelivery{name: it.String(), log: n.Log.With("comment", it.String()), window: ch.Window, words: commentWords,
		begin: func(ctx context.Context, now time.Time) (*outbox.Send, error) {
			send, err := ch.Rows.BeginItemAfter(ctx, it, lk.known, jobID, now)
			if err != nil && failure.Classify(err) == failure.NotFound {
				err = fmt.Errorf("%w: %w", errRefused, err) // failed for good earlier: on the row already
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
			c, err := ch.API.Create(ctx, cd.comment)
			if err == nil {
				lk.saw(c.ID)
			}
			if err != nil && !swarm.MaybeCreated(err) && !failure.Classify(err).Retryable() {
				err = fmt.Errorf("%w: %w", errRefused, err) // 401/403/404: released as failed, never retried
			}
			return strconv.FormatInt(c.ID, 10), err
		},
		maybeSent: swarm.MaybeCreated,
		lookup: func(ctx context.Context, row *outbox.Row) (string, bool, error) {
			m, err := lk.markedSince(ctx, ch.API, cd.comment.Review, row.LookupAfter)
			if failure.Classify(err) == failure.NotFound {
				err = fmt.Errorf("%w: %w", errRefused, err) // the review is gone: nothing to settle
			}
			if err != nil {
				return "", false, err
			}
			c, ok := m[cd.comment.Marker]
			if ok {
				lk.saw(c.ID)
			}
			return strconv.FormatInt(c.ID, 10), ok, nil
		},
	}
	return n.run(ctx, d)
}

// commentWords are the comments channel's log lines.
var commentWords = protocolWords{
	releaseLeaseFailed: "releasing an unposted comment row failed; the next attempt settles it",
	maybeSent:          "comment may have been created; the row stays sending for lookup",
	releaseFailed:      "releasing a refused comment failed; the next attempt settles it",
	markFailed:         "marking a posted comment failed; the retry finds it by its marker",
	done:               "review comment posted", doneKey: "comment_id",
	found:       "settled by lookup: Swarm had stored the earlier create",
	mayComplete: "comment may still be stored by Swarm; retrying after its window, not posting",
	notFound:    "settled by lookup: the earlier create never landed; posting",
	unconfirmed: "a post of %s may have happened and the channel has no lookup",
}

// commentDeliveries are the comments a job's review gets: one per distinct
// finding (by the one fingerprint) not commented on in an earlier version,
// in the review's order, the notes on resolved plain comments, then the
// version's summary; and the resolved tasks to set addressed. g is the
// rerun's comparison (nil for a first version): the summary's counts and
// what is resolved come from it, the e-mail's grouping too; pr (the
// review's rows) only says what was commented on before.
func commentDeliveries(j *job.Job, review domain.ReviewResult, distinct []rerun.Current, cs *domain.Changeset, pageURL string, pr *prior, g *rerun.Groups) ([]commentDelivery, []taskChange) {
	rv := j.Swarm.Review
	version := max(j.ReviewVersion, 1)
	files := map[string]domain.FileChange{}
	if cs != nil {
		for _, f := range cs.Files {
			files[f.DepotPath] = f
		}
	}
	var out []commentDelivery
	counts := map[string]int{}
	rc := countsOf(g)
	for _, c := range distinct {
		f, fp := c.Finding, c.Fingerprint
		counts[strings.ToLower(f.Severity)]++
		if pr != nil {
			if _, ok := pr.comments[fp]; ok {
				continue // commented on in an earlier version: not again
			}
		}
		k := swarm.FindingKey(rv, fp)
		var at *swarm.CommentContext
		if f.File != "" { // a finding on no file is said on the review as a whole
			at = &swarm.CommentContext{File: f.File, RightLine: max(f.Line, 0), Version: version,
				Content: around(files[f.File], f.Line)}
		}
		out = append(out, commentDelivery{
			item: commentItem(k),
			comment: swarm.NewComment{Review: rv, Body: findingBody(f), Marker: k.Marker(), Silent: true, Task: taskSeverity(f.Severity),
				Context: at},
			finding: &f,
		})
	}
	meta := domain.ReadReviewMeta(review.Meta)
	var tasks []taskChange
	if pr != nil && g != nil {
		var notes []commentDelivery
		notes, tasks = resolvedDeliveries(rv, version, pr, g)
		out = append(out, notes...)
	}
	k := swarm.SummaryKey(rv, version)
	out = append(out, commentDelivery{
		item:    commentItem(k),
		comment: swarm.NewComment{Review: rv, Body: summaryBody(version, len(distinct), counts, meta, pageURL, rc), Marker: k.Marker()},
	})
	return out, tasks
}

// taskSeverity: findings of high severity and above are open tasks.
func taskSeverity(sev string) bool {
	return domain.SeverityRank(sev) <= domain.SeverityRank("high")
}

// findingBody is a finding's comment: severity, category and title, then
// the message and the suggestion, each written by the model and so made
// inert for Swarm's Markdown (modeltext). The marker is appended by the client.
func findingBody(f domain.Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s** · %s · %s\n\n%s", strings.ToUpper(word(f.Severity)), word(f.Category), modeltext.Markdown(oneLineText(f.Title)),
		modeltext.Markdown(strings.TrimSpace(f.Message)))
	if s := strings.TrimSpace(f.Suggestion); s != "" {
		fmt.Fprintf(&b, "\n\n**Suggestion:** %s", modeltext.Markdown(s))
	}
	return b.String()
}

// summaryBody is a version's summary: counts by severity, coverage, the
// model's tokens and estimated cost, the job page link when the environment
// has one.
func summaryBody(version, total int, counts map[string]int, meta domain.ReviewMeta, pageURL string, rc rerunCounts) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**Criticizer review of version %d:** ", version)
	if total == 0 {
		b.WriteString("no findings.")
	} else {
		var parts []string
		for _, s := range domain.Severities {
			if counts[s] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
			}
		}
		noun := "findings"
		if total == 1 {
			noun = "finding"
		}
		fmt.Fprintf(&b, "%d %s (%s).", total, noun, strings.Join(parts, ", "))
	}
	if l := rc.line(); l != "" {
		b.WriteString("\n\n" + l)
	}
	if c := meta.Coverage(); c != "" {
		fmt.Fprintf(&b, "\n\nCoverage: %s.", c)
	}
	if u := meta.Usage(); u != "" {
		fmt.Fprintf(&b, "\n\nModel usage: %s.", u)
	}
	if w := meta.WithheldAsDismissed; w > 0 {
		noun := "findings"
		if w == 1 {
			noun = "finding"
		}
		fmt.Fprintf(&b, "\n\n%d %s withheld as repeatedly dismissed here (`criticizer outcomes suppressions` lists them; `criticizer outcomes allow` reports them again).", w, noun)
	}
	if pageURL != "" {
		fmt.Fprintf(&b, "\n\n[The review's job page](%s)", pageURL)
	}
	return b.String()
}

func oneLineText(s string) string { return strings.Join(strings.Fields(s), " ") }

// Channel names NOTIFY_CHANNELS lists.
const (
	ChannelEmail         = "email"
	ChannelSwarmComments = outbox.ChannelSwarmComments
)

// CommentSettings turn the Swarm comments channel on.
type CommentSettings struct {
	On          bool          // NOTIFY_CHANNELS has swarm-comments
	APISecretID string        // SWARM_API_SECRET_ID: the login comments are posted as
	Window      time.Duration // SWARM_COMMENT_WINDOW_SECONDS
	MaxInline   int           // SWARM_MAX_INLINE_COMMENTS
}

// commentSettingsFromEnv reads NOTIFY_CHANNELS and, when it names
// swarm-comments, the Swarm API login and the comment window; swarmURL
// (SWARM_URL) is then required.
func commentSettingsFromEnv(r *config.Reader, swarmURL string) CommentSettings {
	on, err := SwarmCommentsOn(r.Optional("NOTIFY_CHANNELS"))
	r.Fail(err)
	if !on {
		return CommentSettings{}
	}
	if swarmURL == "" {
		r.Fail(fmt.Errorf("NOTIFY_CHANNELS has %s but SWARM_URL is not set", ChannelSwarmComments))
	}
	return CommentSettings{On: true, APISecretID: r.String("SWARM_API_SECRET_ID"),
		Window: swarm.CommentWindowFromEnv(r), MaxInline: maxInlineFromEnv(r)}
}

// SwarmCommentsOn parses NOTIFY_CHANNELS ("email" or "email,swarm-comments";
// empty means "email") and reports whether Swarm comments are on. E-mail is
// always a channel; anything else is an error naming the setting.
func SwarmCommentsOn(channels string) (bool, error) {
	if strings.TrimSpace(channels) == "" {
		return false, nil
	}
	email, comments := false, false
	for _, ch := range strings.Split(channels, ",") {
		switch strings.TrimSpace(ch) {
		case ChannelEmail:
			email = true
		case ChannelSwarmComments:
			comments = true
		default:
			return false, fmt.Errorf("NOTIFY_CHANNELS=%q: unknown channel %q (want %s, %s)", channels, ch, ChannelEmail, ChannelSwarmComments)
		}
	}
	if !email {
		return false, fmt.Errorf("NOTIFY_CHANNELS=%q: %s must be one of the channels", channels, ChannelEmail)
	}
	return comments, nil
}

// around is the redacted diff's lines a comment on line shows with it: its
// diff's, or its interdiff's where the diff does not show the line (a
// rerun's finding on a line changed back to the base's text).
func around(fc domain.FileChange, line int) []string {
	if c := udiff.Around(fc.Diff, line, contextLines, contextLineBytes); c != nil {
		return c
	}
	return udiff.Around(fc.Interdiff, line, contextLines, contextLineBytes)
}

// commentItem is the outbox row key of the comment k identifies. A
// comment's one identity is its swarm.CommentKey; its row key and its
// marker (k.Marker) are both derived from it, here and nowhere else.
func commentItem(k swarm.CommentKey) outbox.Item {
	return outbox.Item{Channel: outbox.ChannelSwarmComments, Thread: k.Review, ID: k.Kind + "/" + k.ID}
}
