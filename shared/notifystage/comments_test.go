package notifystage

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/decide"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/rerun"
	"github.com/criticizer/criticizer/shared/smtpmail"
	"github.com/criticizer/criticizer/shared/swarm"

	swarmstandin "github.com/criticizer/criticizer/internal/standin/swarm"
)

// fakeItemRows is an in-memory outbox for comment rows, with the protocol
// fakeRows has for e-mail rows.
type fakeItemRows struct{ rows map[string]*outbox.Row }

func (f *fakeItemRows) row(it outbox.Ref) *outbox.Row { return f.rows[it.String()] }

// Begin records the lookup bound of the row's first send, as outbox.Begin
// does (if_not_exists).
func (f *fakeItemRows) Begin(_ context.Context, k outbox.Ref, jobID string, now time.Time) (*outbox.Send, error) {
	it, _ := outbox.ItemOf(k)
	r := f.row(it)
	if r == nil {
		r = &outbox.Row{Channel: it.Channel, Thread: it.Thread, Item: it.ID, JobID: jobID, Status: outbox.Pending}
		f.rows[it.String()] = r
	}
	switch {
	case r.NotifiedAt != "":
		return nil, outbox.ErrAlreadySent
	case r.Status == outbox.Sending:
		c := *r
		return nil, &outbox.InFlightError{Row: &c}
	case r.Status != outbox.Pending:
		return nil, failure.Errorf(failure.NotFound, "failed for good: %w", outbox.ErrFailed)
	}
	r.Attempts++
	r.Status, r.SendStartedAt, r.SendToken = outbox.Sending, job.FormatTime(now), fmt.Sprint("tok", r.Attempts)
	if r.LookupAfter == 0 {
		r.LookupAfter = outbox.LookupAfter(k)
	}
	c := *r
	return &outbox.Send{Token: r.SendToken, Row: &c}, nil
}

func (f *fakeItemRows) MarkSent(_ context.Context, it outbox.Ref, evidence string, now time.Time) error {
	if r := f.row(it); r.NotifiedAt == "" {
		r.Status, r.NotificationID, r.NotifiedAt = outbox.Sent, evidence, job.FormatTime(now)
	}
	return nil
}

func (f *fakeItemRows) Release(_ context.Context, it outbox.Ref, tok string, c failure.Class, msg string, permanent bool, _ time.Time) error {
	r := f.row(it)
	if r.Status != outbox.Sending || r.SendToken != tok {
		return outbox.ErrConflict
	}
	r.Status, r.LastErrorClass, r.LastError = outbox.Pending, string(c), msg
	if permanent {
		r.Status = outbox.Failed
	}
	return nil
}

func (f *fakeItemRows) Reset(_ context.Context, it outbox.Ref, tok string, _ time.Time) error {
	r := f.row(it)
	if r.Status != outbox.Sending || r.SendToken != tok {
		return outbox.ErrConflict
	}
	r.Status = outbox.Pending
	return nil
}

const swarmReview = 885

// findings of the review under test: one high (an open task), one medium,
// and a second report of the medium one (the same fingerprint: one comment).
var commentFindings = []domain.Finding{
	{ID: "F-1", Severity: "high", Category: "security", Title: "SQL built from input", File: "//depot/app/db.go", Line: 28, Message: "The query concatenates user input.", Suggestion: "Use a bound parameter."},
	{ID: "F-2", Severity: "medium", Category: "correctness", Title: "Error ignored", File: "//depot/app/io.go", Line: 7, Message: "The error from Close is dropped."},
	{ID: "F-3", Severity: "medium", Category: "correctness", Title: "Error ignored", File: "//depot/app/io.go", Line: 7, Message: "The error from Close is dropped (again)."},
}

// commentRig is a notify stage with both channels: a fake outbox, a fake
// sender, and the Swarm stand-in in-process.
type commentRig struct {
	n      *Notify
	mail   *fakeSender
	rows   *fakeRows
	items  *fakeItemRows
	swarm  *swarmstandin.Server
	job    *job.Job
	now    time.Time
	window time.Duration
	ledger *readFailing
	jobs   fakeJobs
	arts   *artifacts.Store // what n.Artifacts reads
	// decider decides each version before it is delivered, as the llm stage does.
	decider *decide.Decider
}

func newCommentRig(t testing.TB) *commentRig {
	t.Helper()
	s := swarmstandin.NewServer(swarmstandin.Options{User: "criticizer", Ticket: "ticket-1"})
	if _, err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	s.AddReview(swarmstandin.Review{ID: swarmReview, Author: "bob", Change: 12348, Version: 1})
	client := &swarm.Client{BaseURL: s.URL(), HTTP: &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{}},
		Credentials: func(context.Context, bool) (swarm.Credentials, error) {
			return swarm.Credentials{User: "criticizer", Ticket: "ticket-1"}, nil
		}}
	arts := artifacts.New(artifacts.NewMemoryBucket(), "red")
	ctx := context.Background()
	if err := arts.PutJSON(ctx, "jobs/j/result.json", domain.ReviewResult{SchemaVersion: "1", PromptVersion: "p1", Findings: commentFindings}); err != nil {
		t.Fatal(err)
	}
	if err := arts.PutJSON(ctx, "jobs/j/changeset.json", domain.Changeset{Changelist: 42, User: "bob", Status: "pending", Description: "d\n"}); err != nil {
		t.Fatal(err)
	}
	r := &commentRig{mail: &fakeSender{}, rows: &fakeRows{rows: map[string]*outbox.Row{}}, items: &fakeItemRows{rows: map[string]*outbox.Row{}},
		swarm: s, now: t0, window: 2 * time.Minute, arts: arts}
	r.ledger, r.jobs = newLedger(), fakeJobs{}
	r.decider = &decide.Decider{Artifacts: arts, Ledger: r.ledger, Jobs: r.jobs}
	r.n = &Notify{Outbox: r.rows, Email: smtpmail.NewChannel(r.mail.Send, &fakeLog{}), Window: 5 * time.Minute, Artifacts: arts, From: "criticizer@example.com",
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return r.now },
		// Participants e-mailed too: these tests watch both channels together.
		Comments: &SwarmComments{Rows: r.items, API: client, Window: r.window}, EmailParticipants: true}
	r.job = &job.Job{ID: "j", Changelist: 42, ReviewVersion: 1, Recipients: []string{"alice@example.com", "bob@example.com"},
		Swarm:     &job.SwarmRun{Review: swarmReview},
		Artifacts: job.Artifacts{Result: "jobs/j/result.json", Redacted: "jobs/j/changeset.json"}}
	return r
}

// process decides the rig's job, as the llm stage does, then notifies it.
func (r *commentRig) process(t testing.TB) (job.Result, error) {
	t.Helper()
	if err := decideJob(r.decider, r.job); err != nil {
		return job.Result{}, err
	}
	return r.n.Process(context.Background(), r.job)
}

// decideJob decides j's stored result over its stored changeset.
func decideJob(d *decide.Decider, j *job.Job) error {
	ctx := context.Background()
	var res domain.ReviewResult
	var cs domain.Changeset
	if err := d.Artifacts.GetJSON(ctx, j.Artifacts.Result, &res); err != nil {
		return err
	}
	if err := d.Artifacts.GetJSON(ctx, j.Artifacts.Redacted, &cs); err != nil {
		return err
	}
	return d.Decide(ctx, j, res, &cs)
}

// ours returns the service's comments on the review, and fails the test on
// any marker seen twice: a duplicate comment.
func (r *commentRig) ours(t testing.TB) []swarmstandin.Comment {
	t.Helper()
	seen := map[swarm.Marker]bool{}
	var out []swarmstandin.Comment
	for _, c := range r.swarm.Comments(swarmReview) {
		m, ok := swarm.MarkerOf(c.Body)
		if !ok || c.User != "criticizer" {
			continue
		}
		if seen[m] {
			t.Errorf("duplicate comment: marker %s posted twice", m)
		}
		seen[m] = true
		out = append(out, c)
	}
	return out
}

func (r *commentRig) seedReviewerComments(n int) {
	for i := range n {
		r.swarm.AddComment(swarmstandin.Comment{Topic: fmt.Sprint("reviews/", swarmReview), Body: fmt.Sprint("reviewer note ", i), User: "alice"})
	}
}

// listings counts the listings of the review's comments and their pages:
// a listing starts with a page that does not continue the page before it
// (its after is not that page's last id; the stand-in pages oldest first).
func (r *commentRig) listings(t *testing.T) (n, pages int) {
	t.Helper()
	all := r.swarm.Comments(swarmReview)
	lastOf := func(after int64, listed int) int64 { // the last id a page after after holds
		for i, c := range all {
			if c.ID > after {
				if j := i + listed - 1; listed > 0 && j < len(all) {
					return all[j].ID
				}
				return -1
			}
		}
		return -1
	}
	prev := int64(-1)
	for _, q := range r.swarm.Requests() {
		if q.Op != swarmstandin.OpListComments {
			continue
		}
		pages++
		after, _ := strconv.ParseInt(q.Query.Get("after"), 10, 64)
		if after != prev || prev <= 0 {
			n++
		}
		prev = lastOf(after, q.Listed)
	}
	return n, pages
}

func (r *commentRig) creates() int {
	n := 0
	for _, q := range r.swarm.Requests() {
		if q.Op == swarmstandin.OpCreateComment {
			n++
		}
	}
	return n
}

// wantVersion1 checks the review got one inline comment per distinct
// finding, at its file and line in version 1, and one summary that
// notifies.
func (r *commentRig) wantVersion1(t testing.TB) {
	t.Helper()
	got := r.ours(t)
	if len(got) != 3 {
		t.Fatalf("%d comments from the service, want 2 findings + 1 summary: %+v", len(got), got)
	}
	type where struct {
		file       string
		line, ver  int
		task       string
		silenced   bool
		bodyHolds  string
		suggestion string
	}
	want := map[string]where{
		"//depot/app/db.go": {"//depot/app/db.go", 28, 1, swarm.TaskOpen, true, "**HIGH** · security · SQL built from input", "Use a bound parameter."},
		"//depot/app/io.go": {"//depot/app/io.go", 7, 1, swarm.TaskComment, true, "**MEDIUM** · correctness · Error ignored", ""},
	}
	summaries := 0
	for _, c := range got {
		if c.Context == nil {
			summaries++
			if c.Silenced || !strings.Contains(c.Body, "version 1") || !strings.Contains(c.Body, "2 findings (1 high, 1 medium)") {
				t.Errorf("summary comment %+v: want it to notify and count 1 high, 1 medium", c)
			}
			continue
		}
		w, ok := want[c.Context.File]
		if !ok {
			t.Errorf("comment on unexpected file %q", c.Context.File)
			continue
		}
		delete(want, c.Context.File)
		if c.Context.RightLine != w.line || c.Context.Version != w.ver || c.TaskState != w.task || c.Silenced != w.silenced ||
			!strings.Contains(c.Body, w.bodyHolds) || !strings.Contains(c.Body, w.suggestion) {
			t.Errorf("comment on %s: line %d v%d task %q silenced %v body %q; want line %d v%d task %q silenced, body with %q and %q",
				c.Context.File, c.Context.RightLine, c.Context.Version, c.TaskState, c.Silenced, c.Body, w.line, w.ver, w.task, w.bodyHolds, w.suggestion)
		}
	}
	if summaries != 1 || len(want) != 0 {
		t.Errorf("%d summaries (want 1); findings without a comment: %v", summaries, want)
	}
}

func TestSwarmCommentsOnePerFindingAndASummary(t *testing.T) {
	r := newCommentRig(t)
	res, err := r.process(t)
	if err != nil {
		t.Fatal(err)
	}
	r.wantVersion1(t)
	if len(r.mail.sent) != 2 {
		t.Errorf("e-mailed %v, want both recipients", r.mail.sent)
	}
	if !strings.Contains(res.Detail, "Swarm comments: 3 posted now, 0 earlier") {
		t.Errorf("job record %q does not say what was posted", res.Detail)
	}
	// The same job again (its message returned): nothing is posted or sent twice.
	before := r.creates()
	if _, err := r.process(t); err != nil {
		t.Fatal(err)
	}
	if r.creates() != before || len(r.mail.sent) != 2 {
		t.Errorf("a second run posted %d comments and sent %v", r.creates()-before, r.mail.sent)
	}
	r.wantVersion1(t)
}

// A trigger-sourced job (no Swarm review) posts nothing, with the channel on.
func TestSwarmCommentsNotForTriggerJobs(t *testing.T) {
	r := newCommentRig(t)
	r.job.Swarm = nil
	res, err := r.process(t)
	if err != nil {
		t.Fatal(err)
	}
	if r.creates() != 0 || len(r.items.rows) != 0 || strings.Contains(res.Detail, "Swarm") {
		t.Errorf("a trigger job posted %d comments, wrote %d rows, detail %q", r.creates(), len(r.items.rows), res.Detail)
	}
}

// A create whose answer is lost is settled by listing the review's comments
// (more than one page) and finding its marker: never posted twice.
func TestSwarmCommentLostAnswerSettledByLookup(t *testing.T) {
	tests := []struct {
		name  string
		fault swarmstandin.Fault
		// retryAt is when the second attempt runs; afterWindow also runs a
		// third, after the window.
		retryAt     time.Duration
		wantSecond  failure.Class // the second attempt's error class ("" for none)
		afterWindow bool
	}{
		{"stored, answer dropped: found by lookup at once", swarmstandin.Fault{Drop: true, AfterStore: true}, time.Second, "", false},
		{"stored, 502: found by lookup at once", swarmstandin.Fault{Status: 502, AfterStore: true}, time.Second, "", false},
		{"never stored: not posted again inside the window, posted once after it", swarmstandin.Fault{Drop: true}, time.Second, failure.Conflict, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newCommentRig(t)
			r.seedReviewerComments(150)
			r.swarm.InjectFault(swarmstandin.OpCreateComment, tt.fault)
			_, err := r.process(t)
			if !failure.Classify(err).Retryable() {
				t.Fatalf("first attempt: %v, want a retryable error", err)
			}
			if len(r.mail.sent) != 2 {
				t.Fatalf("e-mailed %v before the comments, want both", r.mail.sent)
			}
			r.seedReviewerComments(60) // ours now sits between reviewers' pages
			if len(r.swarm.Comments(swarmReview)) <= 100 {
				t.Fatal("the case needs more than one page of comments")
			}
			r.now = t0.Add(tt.retryAt)
			_, err = r.process(t)
			if failure.Classify(err) != tt.wantSecond {
				t.Fatalf("second attempt: %v (class %q), want class %q", err, failure.Classify(err), tt.wantSecond)
			}
			if tt.afterWindow {
				if failure.RetryAfter(err) <= 0 {
					t.Errorf("retry after %s, want the rest of the window", failure.RetryAfter(err))
				}
				r.now = t0.Add(r.window + time.Second)
				if _, err := r.process(t); err != nil {
					t.Fatalf("third attempt: %v", err)
				}
			}
			r.wantVersion1(t)
			if len(r.mail.sent) != 2 {
				t.Errorf("e-mails %v: a comment retry re-sent e-mail", r.mail.sent)
			}
			lists := 0
			for _, q := range r.swarm.Requests() {
				if q.Op == swarmstandin.OpListComments {
					lists++
				}
			}
			if lists < 2 {
				t.Errorf("lookup read %d pages, want every page (at least 2)", lists)
			}
		})
	}
}

// A permanent refusal (403) is recorded on its row and in the job record;
// the other comments are posted and the job does not fail.
func TestSwarmCommentPermanentRefusalRecorded(t *testing.T) {
	r := newCommentRig(t)
	// The client retries a refused login once with fresh credentials.
	r.swarm.InjectFault(swarmstandin.OpCreateComment, swarmstandin.Fault{Status: 403}, swarmstandin.Fault{Status: 403})
	res, err := r.process(t)
	if err != nil {
		t.Fatalf("job failed on a refused comment: %v", err)
	}
	if got := len(r.ours(t)); got != 2 {
		t.Errorf("%d comments posted, want the other finding and the summary", got)
	}
	failed := 0
	for _, row := range r.items.rows {
		if row.Status == outbox.Failed {
			failed++
			if row.LastErrorClass != string(failure.AuthDenied) {
				t.Errorf("refused row class %q, want %s", row.LastErrorClass, failure.AuthDenied)
			}
		}
	}
	if failed != 1 || !strings.Contains(res.Detail, "1 refused for good") || !strings.Contains(res.Detail, string(failure.AuthDenied)) {
		t.Errorf("%d failed rows, job record %q: want the refusal recorded on both", failed, res.Detail)
	}
	// A retry of the job does not post the refused comment again.
	before := r.creates()
	if _, err := r.process(t); err != nil || r.creates() != before {
		t.Errorf("retry: err %v, %d new creates", err, r.creates()-before)
	}
}

// Swarm 5xx or 429: the stage retries with its backoff; the e-mails already
// sent are not sent again, and every comment lands once.
func TestSwarmCommentTransientFailureRetriedWithoutResendingEmail(t *testing.T) {
	for _, tt := range []struct {
		name      string
		fault     swarmstandin.Fault
		wantClass failure.Class
		retryAt   time.Duration // a 5xx may have stored it: posted again only after the window
	}{
		{"500", swarmstandin.Fault{Status: 500}, failure.Upstream5xx, 3 * time.Minute},
		{"503 (Swarm down behind its proxy)", swarmstandin.Fault{Status: 503}, failure.NetworkTimeout, 3 * time.Minute},
		{"429 with Retry-After", swarmstandin.Fault{Status: 429, RetryAfter: "7"}, failure.RateLimited, time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newCommentRig(t)
			r.swarm.InjectFault(swarmstandin.OpCreateComment, tt.fault)
			_, err := r.process(t)
			if failure.Classify(err) != tt.wantClass || !failure.Classify(err).Retryable() {
				t.Fatalf("first attempt: %v, want retryable %s", err, tt.wantClass)
			}
			if tt.fault.RetryAfter != "" && failure.RetryAfter(err) != 7*time.Second {
				t.Errorf("retry after %s, want Swarm's Retry-After (7s)", failure.RetryAfter(err))
			}
			r.now = t0.Add(tt.retryAt)
			if _, err := r.process(t); err != nil {
				t.Fatalf("retry: %v", err)
			}
			r.wantVersion1(t)
			if len(r.mail.sent) != 2 {
				t.Errorf("e-mails %v, want each recipient once", r.mail.sent)
			}
		})
	}
}

func (f *fakeItemRows) ListThread(_ context.Context, ch string, thread int64) ([]outbox.Row, error) {
	var out []outbox.Row
	for _, r := range f.rows {
		if r.Channel == ch && r.Thread == thread {
			out = append(out, *r)
		}
	}
	return out, nil
}

// putVersion stores a version's review artifacts and returns its job.
func (r *commentRig) putVersion(t testing.TB, version int, fs []domain.Finding, files ...string) *job.Job {
	t.Helper()
	ctx := context.Background()
	res, cs := fmt.Sprintf("jobs/v%d/result.json", version), fmt.Sprintf("jobs/v%d/changeset.json", version)
	var changes []domain.FileChange
	for _, f := range files {
		changes = append(changes, domain.FileChange{DepotPath: f, Action: "edit", Type: "text", Rev: 2, Diff: "@@ -1,1 +1,1 @@\n-a\n+b\n"})
	}
	fs = withIDs(fs, changes)
	if err := r.arts.PutJSON(ctx, res, domain.ReviewResult{SchemaVersion: "1", PromptVersion: "p1", Findings: fs}); err != nil {
		t.Fatal(err)
	}
	if err := r.arts.PutJSON(ctx, cs, domain.Changeset{Changelist: 42, User: "bob", Status: "pending", Description: "d\n", Files: changes}); err != nil {
		t.Fatal(err)
	}
	j := &job.Job{ID: fmt.Sprint("j-v", version), Changelist: 42, ReviewVersion: version, Recipients: []string{"bob@example.com"},
		Swarm: &job.SwarmRun{Review: swarmReview}, Artifacts: job.Artifacts{Result: res, Redacted: cs}}
	record(t, r.ledger, j, fs, changes) // as the review stage does
	r.jobs.put(j)
	// Swarm has the version before a run of it comments on it (a
	// context[version] the review lacks is a 400; docs/reference/swarm.md).
	// Tests put versions in order, so this is the head.
	r.swarm.AddReview(swarmstandin.Review{ID: swarmReview, Author: "bob", Change: 12348, Version: version})
	return j
}

// A rerun (version 2) is matched to version 1 by fingerprint: a finding
// commented on before is not commented again (still open), a new one is,
// one gone from a file reviewed in full is resolved (its open task set to
// addressed, a plain comment gets one note), and one whose file was not
// reviewed again is "not re-checked"; the summary says so.
func TestSwarmCommentsRerunSaysWhatChanged(t *testing.T) {
	r := newCommentRig(t)
	sqlTask := domain.Finding{Severity: "high", Category: "security", Title: "SQL built from input", File: "//depot/app/db.go", Line: 28, Message: "m"}
	stillOpen := domain.Finding{Severity: "medium", Category: "correctness", Title: "Error ignored", File: "//depot/app/io.go", Line: 7, Message: "m"}
	plainGone := domain.Finding{Severity: "low", Category: "style", Title: "Shadowed name", File: "//depot/app/db.go", Line: 40, Message: "m"}
	elsewhere := domain.Finding{Severity: "medium", Category: "correctness", Title: "Leak", File: "//depot/app/gone.go", Line: 3, Message: "m"}
	fresh := domain.Finding{Severity: "medium", Category: "correctness", Title: "Off by one", File: "//depot/app/io.go", Line: 12, Message: "m"}

	r.job = r.putVersion(t, 1, []domain.Finding{sqlTask, stillOpen, plainGone, elsewhere}, "//depot/app/db.go", "//depot/app/io.go", "//depot/app/gone.go")
	if _, err := r.process(t); err != nil {
		t.Fatal(err)
	}
	v1 := r.ours(t)
	if len(v1) != 5 {
		t.Fatalf("version 1: %d comments, want 4 findings + summary", len(v1))
	}
	r.job = r.putVersion(t, 2, []domain.Finding{stillOpen, fresh}, "//depot/app/db.go", "//depot/app/io.go")
	res, err := r.process(t)
	if err != nil {
		t.Fatal(err)
	}
	all := r.ours(t) // fails on any duplicate marker
	if got := len(all) - len(v1); got != 3 {
		t.Fatalf("version 2 added %d comments, want the new finding, one resolved note and the summary: %+v", got, all[len(v1):])
	}
	var summary, note, newOne bool
	for _, c := range all[len(v1):] {
		switch {
		case c.Context != nil && c.Context.RightLine == 12 && c.Context.Version == 2:
			newOne = true
		case strings.Contains(c.Body, "Resolved in version 2") && strings.Contains(c.Body, "Shadowed name"):
			note = true
		case strings.Contains(c.Body, "version 2:**") && strings.Contains(c.Body, "1 new, 1 still open, 2 resolved, 1 not re-checked"):
			summary = !c.Silenced
		}
	}
	if !summary || !note || !newOne {
		t.Errorf("version 2: summary %v, resolved note %v, new finding %v; comments %+v", summary, note, newOne, all[len(v1):])
	}
	for _, c := range all {
		if c.Context != nil && c.Context.RightLine == 28 && c.TaskState != swarm.TaskAddressed {
			t.Errorf("the resolved task is %q, want addressed", c.TaskState)
		}
		if c.Context != nil && c.Context.File == "//depot/app/gone.go" && c.TaskState != swarm.TaskComment {
			t.Errorf("a not re-checked finding was changed: %q", c.TaskState)
		}
	}
	// The e-mail shows the same comparison as the summary.
	if text := r.mail.msgs[len(r.mail.msgs)-1].Text; !strings.Contains(text, "1 new, 1 still open, 2 resolved, 1 not re-checked") || !strings.Contains(text, "RESOLVED (2)") {
		t.Errorf("version 2's e-mail does not group as the summary counts:\n%s", text)
	}
	if !strings.Contains(res.Detail, "Swarm comments: 3 posted now") {
		t.Errorf("job record %q", res.Detail)
	}
	// Version 2 again: nothing more; a reopened task is not set addressed again.
	before := r.creates()
	if _, err := r.process(t); err != nil || r.creates() != before {
		t.Errorf("version 2 again: err %v, %d new comments", err, r.creates()-before)
	}
}

// A decided review without its comments (decided before they were part of
// it) posts nothing and fails as a bug, never as a silent success.
func TestSwarmReviewWithoutDecidedComments(t *testing.T) {
	j := &job.Job{ID: "j", ReviewVersion: 1, Swarm: &job.SwarmRun{Review: swarmReview}}
	review := domain.ReviewResult{Findings: []domain.Finding{{Severity: "low", Category: "style", Title: "t", File: "//depot/a.c", Line: 3, Message: "m"}}}
	in := &decide.Decided{Result: review, Current: rerun.Distinct(review.Findings, nil)}
	if ds, _, err := commentDeliveries(j, in, nil); failure.Classify(err) != failure.InternalBug || len(ds) != 0 {
		t.Fatalf("deliveries %+v, err %v: want none and INTERNAL_BUG", ds, err)
	}
}

// A rerun whose comment's create answer was lost lists the review's
// comments once per attempt: the listing that finds the earlier version's
// comments also settles the in-flight row.
func TestRerunListsTheReviewOncePerAttempt(t *testing.T) {
	r := newCommentRig(t)
	r.seedReviewerComments(150) // two pages per listing
	old := domain.Finding{Severity: "high", Category: "security", Title: "SQL built from input", File: "//depot/app/db.go", Line: 28, Message: "m"}
	fresh := domain.Finding{Severity: "medium", Category: "correctness", Title: "Off by one", File: "//depot/app/db.go", Line: 12, Message: "m"}
	r.job = r.putVersion(t, 1, []domain.Finding{old}, "//depot/app/db.go")
	if _, err := r.process(t); err != nil {
		t.Fatal(err)
	}
	r.job = r.putVersion(t, 2, []domain.Finding{old, fresh}, "//depot/app/db.go")
	r.swarm.InjectFault(swarmstandin.OpCreateComment, swarmstandin.Fault{Drop: true, AfterStore: true})
	if _, err := r.process(t); !failure.Classify(err).Retryable() {
		t.Fatalf("first attempt: %v, want a retryable error", err)
	}
	listings := func() (n, pages int) { return r.listings(t) }
	before, _ := listings()
	r.now = t0.Add(time.Second)
	if _, err := r.process(t); err != nil {
		t.Fatalf("second attempt: %v", err)
	}
	if n, pages := listings(); n-before != 1 || pages < 2 {
		t.Errorf("the second attempt listed the review's comments %d times, want once (every page: %d so far)", n-before, pages)
	}
	if n := len(r.ours(t)); n != 4 { // fails on any duplicate marker
		t.Errorf("%d comments of ours, want version 1's finding and summary, the new finding and version 2's summary", n)
	}
}

// listed is the pages and comments the stand-in listed from request i on.
func (r *commentRig) listed(from int) (pages, comments int) {
	for _, q := range r.swarm.Requests()[from:] {
		if q.Op == swarmstandin.OpListComments {
			pages++
			comments += q.Listed
		}
	}
	return pages, comments
}

// On a review with 500 earlier comments, the lookup that settles a lost
// create reads the comments stored since the last comment the attempt knew
// existed (its row's bound), and a rerun's lookup of its earlier comments
// starts at the first of them: neither reads the review's history.
func TestCommentLookupsReadOnlyTheCommentsSince(t *testing.T) {
	r := newCommentRig(t)
	r.seedReviewerComments(500)
	r.job = r.putVersion(t, 1, commentFindings, "//depot/app/db.go", "//depot/app/io.go")
	// Version 1: two findings posted, the summary's answer lost after Swarm stored it.
	r.swarm.InjectFault(swarmstandin.OpCreateComment, swarmstandin.Fault{}, swarmstandin.Fault{}, swarmstandin.Fault{Drop: true, AfterStore: true})
	if _, err := r.process(t); !failure.Classify(err).Retryable() {
		t.Fatalf("first attempt: %v, want a retryable error", err)
	}
	r.seedReviewerComments(10)
	mark := len(r.swarm.Requests())
	r.now = t0.Add(time.Second)
	if _, err := r.process(t); err != nil {
		t.Fatalf("second attempt: %v", err)
	}
	r.wantVersion1(t)
	// Since the second finding: the summary and 10 reviewer notes, one page
	// and the empty page that ends the listing.
	if pages, comments := r.listed(mark); pages != 2 || comments != 11 {
		t.Errorf("the lookup read %d pages, %d comments; want 2 pages of the 11 comments since the attempt's last known comment (the review has %d)",
			pages, comments, len(r.swarm.Comments(swarmReview)))
	}

	// Version 2 marks version 1's finding resolved: it reads ours from the
	// first of them on, not the 500 before.
	r.seedReviewerComments(20)
	r.job = r.putVersion(t, 2, nil, "//depot/app/db.go", "//depot/app/io.go")
	mark = len(r.swarm.Requests())
	if _, err := r.process(t); err != nil {
		t.Fatalf("version 2: %v", err)
	}
	// Plus the resolved task's own state, read before it is changed (Swarm
	// answers a change to the state a task has with a 400): one page of one.
	if pages, comments := r.listed(mark); pages != 3 || comments != 34 {
		t.Errorf("version 2 read %d pages, %d comments; want 2 pages of the 33 comments from version 1's first and 1 of the task's comment", pages, comments)
	}
	// The task set addressed is looked up (by the reconciler) from just
	// before its finding's comment.
	tasks := 0
	for _, row := range r.items.rows {
		fp, ok := strings.CutPrefix(row.Item, "addressed/")
		if !ok {
			continue
		}
		tasks++
		finding := r.items.rows[outbox.Item{Channel: row.Channel, Thread: row.Thread, ID: "finding/" + fp}.String()]
		if id, _ := strconv.ParseInt(finding.NotificationID, 10, 64); row.LookupAfter != id-1 {
			t.Errorf("task row %s: LookupAfter %d, want %d (just before its finding's comment)", row.Item, row.LookupAfter, id-1)
		}
	}
	if tasks != 1 {
		t.Errorf("%d task rows, want the high finding's", tasks)
	}
}

// A finding on a file not in the review version's change: Swarm refuses its
// inline context (400, reference "Review comments"), and the finding is
// posted once on the review as a whole, naming its file and line, under the
// same marker, even when the answer to that create is lost; the job record
// says it went unanchored and why.
func TestFindingRefusedItsContextIsPostedUnanchored(t *testing.T) {
	for _, tt := range []struct {
		name   string
		faults []swarmstandin.Fault // the creates: the refused inline one, then the review-level one
		later  time.Duration        // when the attempt that settles it runs (0: the first does)
	}{
		{"answered", nil, 0},
		{"the review-level create stored, its answer lost: found by lookup", []swarmstandin.Fault{{}, {Drop: true, AfterStore: true}}, time.Second},
		{"the review-level create lost unstored: posted once after the window", []swarmstandin.Fault{{}, {Drop: true}}, 3 * time.Minute},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newCommentRig(t)
			// Version 1's change holds io.go only: db.go's finding cannot be anchored.
			r.swarm.AddReview(swarmstandin.Review{ID: swarmReview, Author: "bob", Change: 12348, Version: 1, Files: []string{"//depot/app/io.go"}})
			r.swarm.InjectFault(swarmstandin.OpCreateComment, tt.faults...)
			res, err := r.process(t)
			if tt.later > 0 {
				if !failure.Classify(err).Retryable() {
					t.Fatalf("first attempt: %v, want a retryable error", err)
				}
				r.now = t0.Add(tt.later)
				res, err = r.process(t)
			}
			if err != nil {
				t.Fatalf("job: %v", err)
			}
			var high []swarmstandin.Comment
			for _, c := range r.ours(t) { // fails on a marker seen twice
				if strings.Contains(c.Body, "SQL built from input") {
					high = append(high, c)
				}
			}
			if len(high) != 1 {
				t.Fatalf("%d comments for the HIGH finding, want exactly 1", len(high))
			}
			c := high[0]
			if c.Context != nil || c.TaskState != swarm.TaskOpen || !strings.Contains(c.Body, "//depot/app/db.go line 28") ||
				!strings.HasPrefix(c.Body, "**HIGH** · security · SQL built from input\n") {
				t.Errorf("HIGH finding's comment: context %+v task %q body %q; want it on the review as a whole, an open task, its title line first, then its file and line", c.Context, c.TaskState, c.Body)
			}
			if len(r.ours(t)) != 3 {
				t.Errorf("%d comments, want both findings and the summary", len(r.ours(t)))
			}
			for _, row := range r.items.rows {
				if row.Status != outbox.Sent {
					t.Errorf("row %+v not sent", row)
				}
			}
			if !strings.Contains(res.Detail, "1 posted unanchored") || !strings.Contains(res.Detail, "not in the version's change") && !strings.Contains(res.Detail, "earlier attempt") {
				t.Errorf("job record %q: want the unanchored finding recorded", res.Detail)
			}
			if strings.Contains(res.Detail, "refused for good") {
				t.Errorf("job record %q: the finding was posted, not refused", res.Detail)
			}
		})
	}
}
