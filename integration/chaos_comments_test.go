//go:build integration

package integration

// The fault suite's Swarm comments (issue 22): some of each seed's jobs are
// Swarm-sourced reviews whose findings are posted as comments. Their posts
// meet the Swarm stand-in's faults (a lost answer after the comment was
// stored, a connection reset, 429 with Retry-After, 5xx, a create held past
// the caller's timeout whose notify worker is killed meanwhile), and the
// judge counts duplicate comments (one marker on two comments of a review)
// and missing ones (a finding or the summary with no comment) like
// duplicate and missing e-mails.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/criticizer/criticizer/internal/faultproxy"
	swarmstandin "github.com/criticizer/criticizer/internal/standin/swarm"
	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/rerun"
	"github.com/criticizer/criticizer/shared/swarm"
)

// swarmChaosJob reports whether job i of a batch is a Swarm-sourced review:
// every third job, never the one dead-lettered for good.
func swarmChaosJob(i int) bool { return i%3 == 1 }

// reviewerBurst is how many comments reviewers add to a review right after
// a create whose answer is lost has stored its comment: Swarm's page size,
// so a lookup that reads the comments since a known id (oldest first) finds
// that comment on its first page and must still read the page after it to
// know every other marker's absence.
const reviewerBurst = 100

// newSwarmChaosChange makes a Swarm review of a fresh copy of the pending
// change 12348 with an added file of several distinct findings (each one
// comment), p4 faults as mutate sets them, and starts its version 1's test
// run.
func newSwarmChaosChange(t *testing.T, rng *rand.Rand, j *chaosJob, mutate func(fx map[string]any)) {
	t.Helper()
	var src strings.Builder
	src.WriteString("#include <stdio.h>\n#include <string.h>\n\n")
	for k := range 4 + rng.IntN(5) {
		switch k % 3 {
		case 0:
			fmt.Fprintf(&src, "void copy_%d(char *dst_%d, const char *src_%d) {\n\tstrcpy(dst_%d, src_%d);\n}\n\n", k, k, k, k, k)
		case 1:
			fmt.Fprintf(&src, "void format_%d(char *out_%d, int n_%d) {\n\tsprintf(out_%d, \"%%d\", n_%d);\n}\n\n", k, k, k, k, k)
		case 2:
			fmt.Fprintf(&src, "int limit_%d(void) {\n\t/* TODO: bound %d by the configured size */\n\treturn %d;\n}\n\n", k, k, k)
		}
	}
	content := src.String()
	j.src = content
	j.cl = newChangeWith(t, 12348, func(fx map[string]any) {
		fx["files"] = append(fx["files"].([]any), map[string]any{"path": "//depot/projectA/src/net/chaos.c", "action": "add", "type": "text", "rev": 0, "after": content})
		if mutate != nil {
			mutate(fx)
		}
	})
	j.review = j.cl + 1 // Swarm's review id is a change number of its own
	env.local.Swarm.AddReview(swarmstandin.Review{ID: j.review, Author: "bob", Change: j.cl, Version: 1})
	j.run = env.local.Swarm.StartRun(j.review, 1)
}

// queueSwarmFaults queues the comment posts' faults for a batch with
// swarmJobs Swarm reviews: every seed meets a lost answer after the store
// and a create held past the notify function's timeout (its worker is
// killed), then a seeded mix; and one listing (a lookup) answers 503.
func queueSwarmFaults(rng *rand.Rand, swarmJobs int) {
	mix := []swarmstandin.Fault{
		{Drop: true, AfterStore: true},
		{Drop: true},
		{Status: 429, RetryAfter: "1"},
		{Status: 503},
		{Status: 502, AfterStore: true},
		{Hold: 2 * env.lease},
	}
	for i := 0; i < swarmJobs/2+1; i++ {
		k := rng.IntN(len(mix))
		switch i {
		case 0:
			k = 0
		case 1:
			k = len(mix) - 1
		}
		env.local.Swarm.InjectFault(swarmstandin.OpCreateComment, mix[k])
	}
	env.local.Swarm.InjectFault(swarmstandin.OpListComments, swarmstandin.Fault{Status: 503})
}

// lostCreates records, per review, each create that stored its comment
// while its answer was lost (or held past the caller's timeout).
type lostCreates struct {
	mu sync.Mutex
	at map[int64][]lostCreate
}

// lostCreate is when such a create stored its comment, and the comment's id.
type lostCreate struct {
	at time.Time
	id int64
}

// reviewersMeanwhile makes reviewers discuss a review while its comment's
// answer is lost: after each create stored without its answer reaching the
// service, reviewerBurst comments by a reviewer follow at once. It returns
// the record of those creates.
func reviewersMeanwhile() *lostCreates {
	lost := &lostCreates{at: map[int64][]lostCreate{}}
	env.local.Swarm.OnFault(func(r swarmstandin.Request) {
		if r.Op != swarmstandin.OpCreateComment || !storedUnanswered(r) {
			return
		}
		rv := reviewOfRequest(r)
		// The stored comment is the newest one with the create's body.
		var id int64
		for _, c := range env.local.Swarm.Comments(rv) {
			if c.Body == r.Form.Get("body") {
				id = c.ID
			}
		}
		for k := range reviewerBurst {
			env.local.Swarm.AddComment(swarmstandin.Comment{Topic: r.Form.Get("topic"), User: "alice", Body: fmt.Sprintf("Discussing this (%d).", k)})
		}
		lost.mu.Lock()
		lost.at[rv] = append(lost.at[rv], lostCreate{at: time.Now(), id: id})
		lost.mu.Unlock()
	})
	return lost
}

// settledPastFirstPage counts, per review, the lost creates that a lookup
// read and read past: after the create, a listing of the review began
// before the lost comment's id (its window holds the comment), and a later
// page began at or past that id and held comments (the reviewerBurst
// behind it). A lookup begun after the lost comment, or one that stopped at
// the page holding it, is not counted.
func (l *lostCreates) settledPastFirstPage(reqs []swarmstandin.Request) (lost, paged map[int64]int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lost, paged = map[int64]int{}, map[int64]int{}
	for rv, creates := range l.at {
		for _, lc := range creates {
			lost[rv]++
			covered := false
			for _, r := range reqs {
				if r.Op != swarmstandin.OpListComments || r.Status != 200 || !r.At.After(lc.at) || reviewOfRequest(r) != rv {
					continue
				}
				after, _ := strconv.ParseInt(r.Query.Get("after"), 10, 64) // none: 0, the whole review
				if after < lc.id {
					covered = true
				} else if covered && r.Listed > 0 {
					paged[rv]++
					break
				}
			}
		}
	}
	return lost, paged
}

// storedUnanswered reports whether a faulted create stored its comment
// while its caller got no answer saying so.
func storedUnanswered(r swarmstandin.Request) bool {
	return strings.HasSuffix(r.Fault, "-after-store") || r.Fault == "held"
}

// swarmKiller kills the notify worker of every create the stand-in holds
// (once each), as the SMTP killer does for a held DATA reply.
type swarmKiller struct {
	mu     sync.Mutex
	killed map[string]bool
	kills  int
}

func (k *swarmKiller) tick() {
	for _, remote := range env.local.Swarm.Held() {
		k.mu.Lock()
		done := k.killed[remote]
		k.killed[remote] = true
		k.mu.Unlock()
		if done {
			continue
		}
		if _, err := faultproxy.KillBootstrapPeer(remote); err == nil {
			k.mu.Lock()
			k.kills++
			k.mu.Unlock()
		}
	}
}

// reviewOfRequest is the review a comments API request is about (0: none).
func reviewOfRequest(r swarmstandin.Request) int64 {
	topic := r.Form.Get("topic")
	if topic == "" {
		topic = r.Query.Get("topic")
	}
	if id, ok := strings.CutPrefix(topic, "reviews/"); ok {
		n, _ := strconv.ParseInt(id, 10, 64)
		return n
	}
	if id, ok := strings.CutPrefix(r.Path, "/api/v11/comments/reviews/"); ok {
		n, _ := strconv.ParseInt(id, 10, 64)
		return n
	}
	return 0
}

// swarmFaultsMet counts the stand-in's faults among reqs by kind
// ("comments.create/lost-after-store") and by review.
func swarmFaultsMet(reqs []swarmstandin.Request) (byKind map[string]int, byReview map[int64]int) {
	byKind, byReview = map[string]int{}, map[int64]int{}
	for _, r := range reqs {
		if r.Fault != "" {
			byKind[string(r.Op)+"/"+r.Fault]++
			byReview[reviewOfRequest(r)]++
		}
	}
	return byKind, byReview
}

// ourCommentsOn returns the service's comments on a review: its login's,
// carrying a marker.
func ourCommentsOn(review int64) []swarmstandin.Comment {
	var out []swarmstandin.Comment
	for _, c := range env.local.Swarm.Comments(review) {
		if _, ok := swarm.MarkerOf(c.Body); ok && c.User == "criticizer" {
			out = append(out, c)
		}
	}
	return out
}

// commentVerdict judges the service's comments on a Swarm job's review:
// duplicates (one marker on more than one comment) and, for a job that
// succeeded, what is missing (a finding without its comment at its file and
// line, or the version's summary).
func commentVerdict(t *testing.T, j *chaosJob) (comments, duplicates int, missing []string) {
	t.Helper()
	seen := map[swarm.Marker]int{}
	type spot struct {
		file string
		line int
	}
	at := map[spot][]string{}
	summary := swarm.SummaryKey(j.review, 1).Marker()
	for _, c := range ourCommentsOn(j.review) {
		m, _ := swarm.MarkerOf(c.Body)
		comments++
		if seen[m]++; seen[m] > 1 {
			duplicates++
		}
		if c.Context != nil {
			at[spot{c.Context.File, c.Context.RightLine}] = append(at[spot{c.Context.File, c.Context.RightLine}], c.Body)
		}
	}
	if j.final == nil || j.final.State != job.Succeeded {
		return comments, duplicates, nil
	}
	if seen[summary] == 0 {
		missing = append(missing, "the summary of version 1")
	}
	var result domain.ReviewResult
	arts := artifacts.New(artifacts.NewS3Client(env.local.AWS), env.out["RedactedBucketName"])
	if err := arts.GetJSON(context.Background(), j.final.Artifacts.Result, &result); err != nil {
		return comments, duplicates, append(missing, fmt.Sprintf("the review result (%v)", err))
	}
	for _, f := range result.Findings {
		found := false
		for _, body := range at[spot{f.File, f.Line}] {
			found = found || strings.Contains(body, f.Title)
		}
		if !found {
			missing = append(missing, fmt.Sprintf("%s:%d %s", f.File, f.Line, f.Title))
		}
	}
	return comments, duplicates, missing
}

// judgeComments counts the Swarm jobs' comments, duplicates and missing
// ones, and checks that every create whose answer was lost after its
// comment was stored was settled, in a job that succeeded, by a lookup
// reading past the first page.
func (r *chaosReport) judgeComments(t *testing.T, jobs []*chaosJob, storedLost, pagedAfter map[int64]int) {
	t.Helper()
	for _, j := range jobs {
		if j.review == 0 {
			continue
		}
		r.swarmJobs++
		n, dups, missing := commentVerdict(t, j)
		r.comments += n
		r.commentDuplicates += dups
		r.commentsMissing += len(missing)
		if dups > 0 {
			r.problem("job %d (%s, review %d): %d duplicate comments; history %s", j.n, j.id, j.review, dups, historyOf(j.final))
		}
		if len(missing) > 0 {
			r.problem("job %d (%s, review %d) succeeded but has no comment for %s; history %s", j.n, j.id, j.review, strings.Join(missing, ", "), historyOf(j.final))
		}
		r.lostCreates += storedLost[j.review]
		r.lostCreatesPaged += pagedAfter[j.review]
		if j.final != nil && j.final.State == job.Succeeded && pagedAfter[j.review] < storedLost[j.review] {
			r.problem("job %d (review %d): %d creates lost their answer after the store, %d settled by a lookup past the first page", j.n, j.review, storedLost[j.review], pagedAfter[j.review])
		}
	}
}

// rerunSwarmReviews runs version 2 of every Swarm review of the batch that
// succeeded: its first function's strcpy fixed (a resolved task), a new
// sprintf function appended (a new finding), the rest unchanged. The posts
// meet Swarm faults again (lost answers after the store, 5xx, 429, a task
// change refused once). The judge: each version-2 job succeeds; every
// finding of version 2 has exactly one comment on the review, whichever
// version posted it; version 2's summary once; the fixed finding's task
// addressed; one e-mail per recipient; and the model was shown chaos.c's
// interdiff, not the functions between the two changes.
func (r *chaosReport) rerunSwarmReviews(t *testing.T, rng *rand.Rand, jobs []*chaosJob) {
	t.Helper()
	var v2 []*chaosJob
	was := map[*chaosJob]*chaosJob{}
	for _, j := range jobs {
		if j.review == 0 || j.final == nil || j.final.State != job.Succeeded {
			continue
		}
		fixed := strings.Replace(j.src, "strcpy(dst_0, src_0);", "strncpy(dst_0, src_0, 16);", 1)
		fixed += "void extra(char *out, int n) {\n\tsprintf(out, \"%d\", n);\n}\n"
		n := &chaosJob{n: 1000 + j.n, review: j.review, src: fixed}
		n.cl = newChangeWith(t, 12348, func(fx map[string]any) {
			fx["files"] = append(fx["files"].([]any), map[string]any{"path": "//depot/projectA/src/net/chaos.c", "action": "add", "type": "text", "rev": 0, "after": fixed})
		})
		v2 = append(v2, n)
		was[n] = j
	}
	if len(v2) == 0 {
		return
	}
	env.llm.Reset()
	mix := []swarmstandin.Fault{{Drop: true, AfterStore: true}, {Status: 502, AfterStore: true}, {Status: 503}, {Status: 429, RetryAfter: "1"}, {Drop: true}}
	for i := 0; i < len(v2)/2+1; i++ {
		k := rng.IntN(len(mix))
		if i == 0 {
			k = 0
		}
		env.local.Swarm.InjectFault(swarmstandin.OpCreateComment, mix[k])
	}
	env.local.Swarm.InjectFault(swarmstandin.OpEditComment, swarmstandin.Fault{Status: 503})
	defer env.local.Swarm.ClearFaults()
	swarmBefore := len(env.local.Swarm.Requests())
	for _, j := range v2 {
		env.local.Swarm.AddReview(swarmstandin.Review{ID: j.review, Author: "bob", Change: j.cl, Version: 2})
		j.run = env.local.Swarm.StartRun(j.review, 2)
		resp := swarmPost(t, j.cl, j.run, "shelved")
		if resp.Status != 202 {
			t.Fatalf("version 2 of review %d: %d %s", j.review, resp.Status, resp.Body)
		}
		j.id = resp.Decoded["job_id"].(string)
	}
	waitSettled(t, v2, settleTime(len(v2)))
	met, _ := swarmFaultsMet(env.local.Swarm.Requests()[swarmBefore:])
	if len(met) == 0 {
		r.problem("the version 2 runs met no Swarm fault: the plan does not cover reruns")
	}
	for k, n := range met {
		r.swarmFaults["rerun-"+strings.TrimPrefix(k, "comments.")] += n
	}
	for _, j := range v2 {
		r.reruns++
		if j.final == nil || j.final.State != job.Succeeded {
			r.problem("review %d version 2 (job %s) did not succeed under Swarm faults alone: %s", j.review, j.id, historyOf(j.final))
			continue
		}
		r.judgeRerun(t, was[j], j)
	}
}

// judgeRerun judges one review's version 2 (see rerunSwarmReviews).
func (r *chaosReport) judgeRerun(t *testing.T, v1, v2 *chaosJob) {
	t.Helper()
	arts := artifacts.New(artifacts.NewS3Client(env.local.AWS), env.out["RedactedBucketName"])
	read := func(j *chaosJob) ([]rerun.Current, bool) {
		var res domain.ReviewResult
		var cs domain.Changeset
		if err := arts.GetJSON(context.Background(), j.final.Artifacts.Result, &res); err != nil {
			r.problem("review %d: result of job %s: %v", j.review, j.id, err)
			return nil, false
		}
		if err := arts.GetJSON(context.Background(), j.final.Artifacts.Redacted, &cs); err != nil {
			r.problem("review %d: changeset of job %s: %v", j.review, j.id, err)
			return nil, false
		}
		return rerun.Distinct(res.Findings, &cs), true
	}
	before, ok1 := read(v1)
	after, ok2 := read(v2)
	if !ok1 || !ok2 {
		return
	}
	seen := map[swarm.Marker]int{}
	comments := map[swarm.Marker]swarmstandin.Comment{}
	for _, c := range ourCommentsOn(v2.review) {
		m, _ := swarm.MarkerOf(c.Body)
		seen[m]++
		comments[m] = c
	}
	for m, n := range seen {
		if n > 1 {
			r.commentDuplicates += n - 1
			r.problem("review %d after version 2: marker %s on %d comments", v2.review, m, n)
		}
	}
	if seen[swarm.SummaryKey(v2.review, 2).Marker()] != 1 {
		r.commentsMissing++
		r.problem("review %d: version 2's summary posted %d times, want once", v2.review, seen[swarm.SummaryKey(v2.review, 2).Marker()])
	}
	now := map[string]bool{}
	for _, c := range after {
		now[c.Fingerprint] = true
		if seen[swarm.FindingKey(v2.review, c.Fingerprint).Marker()] != 1 {
			r.commentsMissing++
			r.problem("review %d: version 2's finding %s:%d %q has %d comments, want exactly one across versions", v2.review, c.File, c.Line, c.Title, seen[swarm.FindingKey(v2.review, c.Fingerprint).Marker()])
		}
	}
	fixed := 0
	for _, c := range before {
		if now[c.Fingerprint] || !strings.HasSuffix(c.File, "/chaos.c") {
			continue
		}
		fixed++
		if cm, ok := comments[swarm.FindingKey(v2.review, c.Fingerprint).Marker()]; ok && cm.TaskState != swarm.TaskAddressed && c.Severity == "high" {
			r.problem("review %d: the fixed finding %q's task is %q, want addressed", v2.review, c.Title, cm.TaskState)
		}
	}
	if fixed != 1 {
		r.problem("review %d: %d findings of chaos.c gone in version 2, want the one fixed strcpy", v2.review, fixed)
	}
	if got, want := len(mailsFor(v2.cl, 2)), len(v2.final.Recipients); got != want {
		r.duplicates += max(got-want, 0)
		r.problem("review %d: version 2 e-mailed %d times, want %d (one per recipient)", v2.review, got, want)
	}
	for _, req := range env.llm.Requests() {
		for _, m := range req.Messages {
			if strings.Contains(m.Content, changeMarker(v2.cl)) && strings.Contains(m.Content, "limit_2(") {
				r.problem("review %d: version 2's prompt shows limit_2, unchanged and away from both changes: chaos.c was not reviewed as its interdiff", v2.review)
			}
		}
	}
}
