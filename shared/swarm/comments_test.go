package swarm_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	swarmstandin "github.com/criticizer/criticizer/internal/standin/swarm"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/swarm"
)

const review = 12340

func commentsClient(base string, tickets ...string) (*swarm.Client, *int) {
	reads := 0
	return &swarm.Client{BaseURL: base, HTTP: &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{}}, // no connection shared between clients
		Credentials: func(_ context.Context, _ bool) (swarm.Credentials, error) {
			tk := tickets[min(reads, len(tickets)-1)]
			reads++
			return swarm.Credentials{User: "criticizer", Ticket: tk}, nil
		}}, &reads
}

// seed adds n comments by a reviewer to the review.
func seed(s *swarmstandin.Server, n int) {
	for i := range n {
		s.AddComment(swarmstandin.Comment{Topic: fmt.Sprint("reviews/", review), Body: fmt.Sprint("reviewer note ", i), User: "alice"})
	}
}

// goldenMarker is FindingKey(885, "abc")'s marker hash, computed apart from
// the code (sha256 of the scheme, a NUL and the key, first 16 bytes).
const goldenMarker = "4190a4171589aabe41385f13e3396c44"

func TestCommentKeyAndMarker(t *testing.T) {
	keys := []swarm.CommentKey{
		swarm.FindingKey(review, "fp-1"), swarm.FindingKey(review, "fp-2"), swarm.FindingKey(review+1, "fp-1"),
		swarm.SummaryKey(review, 1), swarm.SummaryKey(review, 2), swarm.ResolvedKey(review, "fp-1"),
	}
	seen := map[swarm.Marker]swarm.CommentKey{}
	for _, k := range keys {
		m := k.Marker()
		if prev, dup := seen[m]; dup {
			t.Fatalf("%s and %s share marker %s", prev, k, m)
		}
		seen[m] = k
		if k.Marker() != m {
			t.Fatalf("%s: marker not deterministic", k)
		}
	}
	if got := swarm.SummaryKey(review, 3).String(); got != "reviews/12340/summary/v3" {
		t.Fatalf("SummaryKey.String() = %q", got)
	}
	// Pinned: a change here would make every posted comment unrecognisable
	// and every finding commented again. Bump MarkerScheme deliberately.
	if got := swarm.FindingKey(885, "abc").Marker(); got != "criticizer:"+goldenMarker {
		t.Fatalf("marker = %s, want pinned criticizer:%s", got, goldenMarker)
	}

	m := swarm.FindingKey(review, "fp-1").Marker()
	other := swarm.FindingKey(review, "fp-2").Marker()
	tests := []struct {
		name   string
		body   string
		want   swarm.Marker
		wantOK bool
	}{
		{"signed body", m.Sign("**high** leak\n\nFree it."), m, true},
		{"trailing blank lines and CRLF kept by Swarm", m.Sign("x") + "\r\n\r\n", m, true},
		{"another marker quoted inside, ours last", m.Sign("see " + other.Line() + " above"), m, true},
		{"a marker not on the last line", other.Line() + "\nthanks", "", false},
		{"plain text", "LGTM", "", false},
		{"not hex", "[//]: # (criticizer:zzzz)", "", false},
		{"empty", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := swarm.MarkerOf(tt.body)
			if got != tt.want || ok != tt.wantOK {
				t.Fatalf("MarkerOf(%q) = %q, %v; want %q, %v", tt.body, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestCreateAndList(t *testing.T) {
	s := startStandin(t)
	c, _ := commentsClient(s.URL(), "ticket-1")
	ctx := context.Background()
	inline := swarm.NewComment{Review: review, Body: "**high** · security\n\nThe key is logged.", Marker: swarm.FindingKey(review, "fp-1").Marker(),
		Task: true, Silent: true, Context: &swarm.CommentContext{File: "//depot/game/net.cpp", RightLine: 28, Version: 1, Content: []string{"+ log(key);"}}}
	summary := swarm.NewComment{Review: review, Body: "Criticizer: 1 finding", Marker: swarm.SummaryKey(review, 1).Marker()}
	a, err := c.Create(ctx, inline)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Create(ctx, summary)
	if err != nil {
		t.Fatal(err)
	}
	if a.ID <= 0 || b.ID <= a.ID || a.TaskState != swarm.TaskOpen || b.TaskState != swarm.TaskComment || a.User != "criticizer" {
		t.Fatalf("created %+v and %+v", a, b)
	}
	stored := s.Comments(review)
	if len(stored) != 2 || !stored[0].Silenced || stored[1].Silenced || stored[0].Context == nil || stored[0].Context.RightLine != 28 ||
		stored[0].Context.File != "//depot/game/net.cpp" || stored[0].Context.Version != 1 || stored[1].Context != nil {
		t.Fatalf("Swarm stored %+v", stored)
	}
	if !strings.HasSuffix(stored[0].Body, inline.Marker.Line()) || !strings.HasPrefix(stored[0].Body, "**high**") {
		t.Fatalf("body %q: want the text, then the marker as its last line", stored[0].Body)
	}
	list, err := c.List(ctx, review)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != a.ID || list[0].Context == nil || list[0].Context.RightLine != 28 || list[0].Context.LeftLine != 0 ||
		!slices.Equal(list[0].Context.Content, []string{"+ log(key);"}) || list[1].Context != nil {
		t.Fatalf("listed %+v, want both, oldest first, with the inline context", list)
	}
	for _, bad := range []swarm.NewComment{{Review: review, Body: "no marker"}, {Review: review, Body: " ", Marker: summary.Marker}} {
		if _, err := c.Create(ctx, bad); failure.Classify(err) != failure.InternalBug {
			t.Fatalf("Create(%+v) = %v, want INTERNAL_BUG before any request", bad, err)
		}
	}
	if n := len(s.Comments(review)); n != 2 {
		t.Fatalf("%d comments after refused creates", n)
	}
}

// The acceptance case: a create whose answer is lost is settled by lookup
// across more than one page of comments, never by a second post.
func TestLostCreateIsSettledByLookup(t *testing.T) {
	tests := []struct {
		name        string
		fault       swarmstandin.Fault
		before      int // reviewer comments before ours
		after       int // and after ours: ours sits on a later page
		wantStored  bool
		wantClassOf failure.Class
	}{
		{"connection dropped after Swarm stored it", swarmstandin.Fault{Drop: true, AfterStore: true}, 150, 130, true, failure.NetworkTimeout},
		{"502 after Swarm stored it", swarmstandin.Fault{Status: 502, AfterStore: true}, 20, 230, true, failure.NetworkTimeout},
		{"500 after Swarm stored it", swarmstandin.Fault{Status: 500, AfterStore: true}, 0, 101, true, failure.Upstream5xx},
		{"connection dropped before Swarm stored it", swarmstandin.Fault{Drop: true}, 150, 60, false, failure.NetworkTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startStandin(t)
			c, _ := commentsClient(s.URL(), "ticket-1")
			ctx := context.Background()
			seed(s, tt.before)
			n := swarm.NewComment{Review: review, Body: "**medium** leak", Marker: swarm.FindingKey(review, "fp-9").Marker(), Silent: true,
				Context: &swarm.CommentContext{File: "//depot/a.c", RightLine: 7, Version: 1}}
			s.InjectFault(swarmstandin.OpCreateComment, tt.fault)
			_, err := c.Create(ctx, n)
			if !swarm.MaybeCreated(err) || failure.Classify(err) != tt.wantClassOf || !failure.Classify(err).Retryable() {
				t.Fatalf("Create = %v (class %s); want a retryable %s that may have created the comment", err, failure.Classify(err), tt.wantClassOf)
			}
			seed(s, tt.after)
			if total := len(s.Comments(review)); total <= 100 {
				t.Fatalf("%d comments: the case needs more than one page", total)
			}
			listsBefore := countOps(s, swarmstandin.OpListComments)
			marked, err := c.Marked(ctx, review)
			if err != nil {
				t.Fatal(err)
			}
			got, found := marked[n.Marker]
			if found != tt.wantStored {
				t.Fatalf("Marked found=%v, want %v", found, tt.wantStored)
			}
			pages := countOps(s, swarmstandin.OpListComments) - listsBefore
			if want := len(s.Comments(review))/100 + 1; pages < want {
				t.Fatalf("lookup read %d pages of %d comments, want at least %d", pages, len(s.Comments(review)), want)
			}
			if !found {
				// Certainly not there: now, and only now, a second post is safe.
				if got, err = c.Create(ctx, n); err != nil {
					t.Fatal(err)
				}
			}
			if got.ID <= 0 || got.Context == nil || got.Context.RightLine != 7 {
				t.Fatalf("settled comment %+v", got)
			}
			if mine := withMarker(s, n.Marker); len(mine) != 1 || mine[0].ID != got.ID {
				t.Fatalf("%d comments carry the marker (%+v), want exactly the one settled", len(mine), mine)
			}
		})
	}
}

func countOps(s *swarmstandin.Server, op swarmstandin.Op) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Op == op {
			n++
		}
	}
	return n
}

func withMarker(s *swarmstandin.Server, m swarm.Marker) []swarmstandin.Comment {
	var out []swarmstandin.Comment
	for _, c := range s.Comments(review) {
		if got, ok := swarm.MarkerOf(c.Body); ok && got == m {
			out = append(out, c)
		}
	}
	return out
}

func TestMarkedIsOnlyOurOwn(t *testing.T) {
	s := startStandin(t)
	c, _ := commentsClient(s.URL(), "ticket-1")
	ctx := context.Background()
	topic := fmt.Sprint("reviews/", review)
	quoted := swarm.FindingKey(review, "quoted").Marker()
	inside := swarm.FindingKey(review, "inside").Marker()
	dup := swarm.FindingKey(review, "dup").Marker()
	s.AddComment(swarmstandin.Comment{Topic: topic, User: "alice", Body: "> as the bot said\n" + quoted.Line()})
	s.AddComment(swarmstandin.Comment{Topic: topic, User: "criticizer", Body: "text naming " + inside.Line() + "\nand more"})
	first := s.AddComment(swarmstandin.Comment{Topic: topic, User: "criticizer", Body: dup.Sign("one")})
	s.AddComment(swarmstandin.Comment{Topic: topic, User: "criticizer", Body: dup.Sign("two")})
	s.AddComment(swarmstandin.Comment{Topic: "reviews/1", User: "criticizer", Body: quoted.Sign("another review")})
	marked, err := c.Marked(ctx, review)
	if err != nil {
		t.Fatal(err)
	}
	if len(marked) != 1 || marked[dup].ID != first.ID {
		t.Fatalf("marked %+v: want only the service's own marked comment, the first of two", marked)
	}
	for _, m := range []swarm.Marker{quoted, inside} {
		if _, found := marked[m]; found {
			t.Fatalf("Marked holds %s: a quote or an inner mention is not our comment", m)
		}
	}
}

func TestCommentErrorsAreClassified(t *testing.T) {
	s := startStandin(t)
	ctx := context.Background()
	n := swarm.NewComment{Review: review, Body: "b", Marker: swarm.SummaryKey(review, 1).Marker()}
	tests := []struct {
		name       string
		fault      *swarmstandin.Fault
		op         string // create, list or task
		review     int64
		tickets    []string
		wantClass  failure.Class
		wantMaybe  bool
		wantRetry  time.Duration
		wantReads  int
		wantStored int // comments on the review after the call
	}{
		{"429 with Retry-After: waited on, never created", &swarmstandin.Fault{Status: 429, RetryAfter: "7"}, "create", review, []string{"ticket-1"}, failure.RateLimited, false, 7 * time.Second, 1, 0},
		{"503 before the work: may have been created", &swarmstandin.Fault{Status: 503}, "create", review, []string{"ticket-1"}, failure.NetworkTimeout, true, 0, 1, 0},
		// A 404 on create may have stored the comment (helix-swarm issue #2): settled by lookup.
		{"unknown review: 404, looked up before any new post", nil, "create", 99, []string{"ticket-1"}, failure.Conflict, true, 0, 1, 0},
		{"wrong ticket twice: permanent", nil, "create", review, []string{"bad", "bad"}, failure.AuthDenied, false, 0, 2, 0},
		{"rotated ticket: the fresh read creates once", nil, "create", review, []string{"old", "ticket-1"}, "", false, 0, 2, 1},
		{"list 503: transient", &swarmstandin.Fault{Status: 503, RetryAfter: "3"}, "list", review, []string{"ticket-1"}, failure.NetworkTimeout, false, 3 * time.Second, 1, 1},
		{"list of an unknown review: permanent", nil, "list", 99, []string{"ticket-1"}, failure.NotFound, false, 0, 1, 1},
		// Read (one page, from just before the comment), PATCH, read again: the state did not land.
		{"task state 500: transient", &swarmstandin.Fault{Status: 500}, "task", review, []string{"ticket-1"}, failure.Upstream5xx, false, 0, 3, 1},
		{"404 after the store: may have been created", &swarmstandin.Fault{Status: 404, AfterStore: true}, "create", review, []string{"ticket-1"}, failure.Conflict, true, 0, 1, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, reads := commentsClient(s.URL(), tt.tickets...)
			var err error
			switch tt.op {
			case "create":
				if tt.fault != nil {
					s.InjectFault(swarmstandin.OpCreateComment, *tt.fault)
				}
				n.Review = tt.review
				_, err = c.Create(ctx, n)
			case "list":
				if tt.fault != nil {
					s.InjectFault(swarmstandin.OpListComments, *tt.fault)
				}
				_, err = c.List(ctx, tt.review)
			case "task":
				if tt.fault != nil {
					s.InjectFault(swarmstandin.OpEditComment, *tt.fault)
				}
				_, err = c.SetTaskState(ctx, review, s.Comments(review)[0].ID, swarm.TaskOpen)
			}
			if failure.Classify(err) != tt.wantClass || swarm.MaybeCreated(err) != tt.wantMaybe || failure.RetryAfter(err) != tt.wantRetry || *reads != tt.wantReads {
				t.Fatalf("err %v: class %s, maybe %v, retry after %s, %d credential reads; want %s, %v, %s, %d",
					err, failure.Classify(err), swarm.MaybeCreated(err), failure.RetryAfter(err), *reads, tt.wantClass, tt.wantMaybe, tt.wantRetry, tt.wantReads)
			}
			if got := len(s.Comments(review)); got != tt.wantStored {
				t.Fatalf("%d comments stored, want %d", got, tt.wantStored)
			}
		})
	}
	// Nothing listens: the request never left, so nothing was created.
	c, _ := commentsClient(s.URL(), "ticket-1")
	_ = s.Close()
	_, err := c.Create(ctx, swarm.NewComment{Review: review, Body: "b", Marker: n.Marker})
	if failure.Classify(err) != failure.NetworkTimeout || swarm.MaybeCreated(err) {
		t.Fatalf("Create to a closed port = %v (maybe %v), want NETWORK_TIMEOUT, certainly not created", err, swarm.MaybeCreated(err))
	}
}

func TestSetTaskState(t *testing.T) {
	s := startStandin(t)
	c, reads := commentsClient(s.URL(), "ticket-1")
	ctx := context.Background()
	task, err := c.Create(ctx, swarm.NewComment{Review: review, Body: "b", Marker: swarm.FindingKey(review, "x").Marker(), Task: true})
	if err != nil {
		t.Fatal(err)
	}
	theirs := s.AddComment(swarmstandin.Comment{Topic: fmt.Sprint("reviews/", review), User: "alice", Body: "nit", TaskState: swarmstandin.TaskOpen})
	verified := s.AddComment(swarmstandin.Comment{Topic: fmt.Sprint("reviews/", review), User: "alice", Body: "done", TaskState: swarmstandin.TaskVerified})
	// The second is a retry whose first PATCH landed: Swarm answers the same
	// state with a 400, so the client reads the state first and is done.
	for range 2 {
		got, err := c.SetTaskState(ctx, review, task.ID, swarm.TaskAddressed)
		if err != nil || got.TaskState != swarm.TaskAddressed {
			t.Fatalf("SetTaskState = %+v, %v", got, err)
		}
	}
	patches := 0
	for _, r := range s.Requests() {
		if r.Op == swarmstandin.OpEditComment {
			patches++
		}
	}
	if patches != 1 {
		t.Fatalf("%d PATCHes, want 1: the task already addressed is not sent again", patches)
	}
	// Any user who can see the review may change a task's state.
	if got, err := c.SetTaskState(ctx, review, theirs.ID, swarm.TaskAddressed); err != nil || got.TaskState != swarm.TaskAddressed {
		t.Fatalf("another user's task: %+v, %v; want addressed", got, err)
	}
	// verified → addressed is not in Swarm's table: nothing is sent.
	if _, err := c.SetTaskState(ctx, review, verified.ID, swarm.TaskAddressed); !errors.Is(err, swarm.ErrNoTransition) || failure.Classify(err).Retryable() {
		t.Fatalf("verified to addressed: %v, want ErrNoTransition, not retried", err)
	}
	if _, err := c.SetTaskState(ctx, review, task.ID, "done"); failure.Classify(err) != failure.InternalBug {
		t.Fatalf("unknown state: %v", err)
	}
	_ = reads
	if got := s.Comments(review); got[0].TaskState != swarmstandin.TaskAddressed || got[1].TaskState != swarmstandin.TaskAddressed || got[2].TaskState != swarmstandin.TaskVerified {
		t.Fatalf("stored %+v", got)
	}
}

// Answers the stand-in does not give but a Swarm (or a proxy) can.
func TestCommentAnswerShapes(t *testing.T) {
	tests := []struct {
		name      string
		answer    func(w http.ResponseWriter, r *http.Request)
		create    bool
		wantClass failure.Class
		wantMaybe bool
		wantN     int
	}{
		{"200 with error Unauthorized is a refused login, not an empty review",
			func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"error":"Unauthorized"}`) }, false, failure.AuthDenied, false, 0},
		{"200 without data.comments is not an empty review",
			func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"error":null,"messages":[],"data":{}}`) }, false, failure.SchemaInvalid, false, 0},
		{"HTML login page",
			func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `<html>login</html>`) }, false, failure.SchemaInvalid, false, 0},
		{"lastSeen that does not move on",
			func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprint(w, `{"error":null,"data":{"comments":[{"id":5,"user":"criticizer","body":"x","context":[]}],"lastSeen":5}}`)
			}, false, failure.SchemaInvalid, false, 0},
		{"v9 shapes: comments keyed by id, numbers as strings, content as a string",
			func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Query().Get("after") != "" {
					fmt.Fprint(w, `{"error":null,"data":{"comments":[],"lastSeen":null}}`)
					return
				}
				fmt.Fprint(w, `{"error":null,"data":{"comments":{"9":{"id":9,"time":"1700000000","context":{"file":"//d/a.c","rightLine":"12","leftLine":null,"content":"+x","version":"2"}},"8":{"id":8,"context":[]}},"lastSeen":"8"}}`)
			}, false, "", false, 2},
		{"create answered 200 without an id: most likely created",
			func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"comment":{}}`) }, true, failure.SchemaInvalid, true, 0},
		{"create answered 500 with reply text: the text is not kept",
			func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(500)
				fmt.Fprint(w, `{"error":"SQL error near 'AKIAIOSFODNN7EXAMPLE'"}`)
			}, true, failure.Upstream5xx, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(tt.answer))
			defer srv.Close()
			c, _ := commentsClient(srv.URL, "ticket-1")
			var err error
			var n int
			if tt.create {
				_, err = c.Create(context.Background(), swarm.NewComment{Review: review, Body: "b", Marker: swarm.SummaryKey(review, 1).Marker()})
			} else {
				var list []swarm.Comment
				list, err = c.List(context.Background(), review)
				n = len(list)
				if n == 2 && (list[0].ID != 8 || list[1].Context == nil || list[1].Context.RightLine != 12 || list[1].Context.Version != 2 ||
					!slices.Equal(list[1].Context.Content, []string{"+x"}) || list[1].Time != 1700000000 || list[0].Context != nil) {
					t.Fatalf("listed %+v", list)
				}
			}
			if failure.Classify(err) != tt.wantClass || swarm.MaybeCreated(err) != tt.wantMaybe || n != tt.wantN {
				t.Fatalf("err %v (class %s, maybe %v), %d comments; want %s, %v, %d", err, failure.Classify(err), swarm.MaybeCreated(err), n, tt.wantClass, tt.wantMaybe, tt.wantN)
			}
			if err != nil && (strings.Contains(err.Error(), "AKIA") || strings.Contains(err.Error(), "login</html>")) {
				t.Fatalf("the error keeps reply text: %v", err)
			}
		})
	}
}

// TestMarkedAfterReadsTheCommentsSince: a lookup that starts after a comment
// id known before the create reads the comments stored since (pages run
// oldest first, ids ascending), not the review's 500 earlier comments, and
// still reads every page of those to the empty last one.
func TestMarkedAfterReadsTheCommentsSince(t *testing.T) {
	s := startStandin(t)
	c, _ := commentsClient(s.URL(), "ticket-1")
	ctx := context.Background()
	old := swarm.FindingKey(review, "old").Marker()
	if _, err := c.Create(ctx, swarm.NewComment{Review: review, Body: "earlier", Marker: old}); err != nil {
		t.Fatal(err)
	}
	seed(s, 500)
	all := s.Comments(review)
	known := all[len(all)-1].ID // the highest id seen before the send
	n := swarm.NewComment{Review: review, Body: "**medium** leak", Marker: swarm.SummaryKey(review, 2).Marker()}
	s.InjectFault(swarmstandin.OpCreateComment, swarmstandin.Fault{Drop: true, AfterStore: true})
	if _, err := c.Create(ctx, n); !swarm.MaybeCreated(err) {
		t.Fatalf("Create = %v, want an answer lost after the store", err)
	}
	seed(s, 150) // reviewers go on commenting: the lookup spans pages
	before := countOps(s, swarmstandin.OpListComments)
	marked, err := c.MarkedAfter(ctx, review, known)
	if err != nil {
		t.Fatal(err)
	}
	pages := countOps(s, swarmstandin.OpListComments) - before
	if _, ok := marked[n.Marker]; !ok {
		t.Fatalf("MarkedAfter(%d) = %v: the create stored after the known id is missing", known, marked)
	}
	if _, ok := marked[old]; ok {
		t.Fatal("MarkedAfter listed comments from before the known id")
	}
	// 151 comments since: two pages and the empty one that ends the listing.
	if pages != 3 {
		t.Errorf("MarkedAfter read %d pages, want 3 (the 151 comments since, to the empty page)", pages)
	}
	before = countOps(s, swarmstandin.OpListComments)
	if whole, err := c.Marked(ctx, review); err != nil || len(whole) != 2 {
		t.Fatalf("Marked = %v, %v: want both of ours", whole, err)
	}
	if whole := countOps(s, swarmstandin.OpListComments) - before; whole != 8 {
		t.Errorf("the whole listing read %d pages, want 8 (653 comments)", whole)
	}
}

// Reactions are read in every shape met: likes as a list or keyed by login
// (PHP's associative array), anything else as none; a reply's
// context.comment (unverified field name) with or without a file; a
// listing never fails on reactions.
func TestCommentReactionShapes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"error":null,"data":{"lastSeen":null,"comments":[`+
			`{"id":1,"likes":["alice","bob"],"flags":["closed"],"context":[]},`+
			`{"id":2,"likes":{"carol":1},"context":{"comment":"1"}},`+
			`{"id":3,"likes":false,"context":{"file":"//d/a.c","rightLine":4,"comment":1}},`+
			`{"id":4,"context":{"file":"//d/a.c","rightLine":4}}]}}`)
	}))
	defer srv.Close()
	c, _ := commentsClient(srv.URL, "ticket-1")
	list, err := c.List(context.Background(), review)
	if err != nil || len(list) != 4 {
		t.Fatalf("list %+v, %v", list, err)
	}
	if !slices.Equal(list[0].Likes, []string{"alice", "bob"}) || !slices.Equal(list[0].Flags, []string{"closed"}) || list[0].ReplyTo != 0 {
		t.Errorf("comment 1: %+v", list[0])
	}
	if !slices.Equal(list[1].Likes, []string{"carol"}) || list[1].ReplyTo != 1 || list[1].Context != nil {
		t.Errorf("comment 2 (a reply on the whole review): %+v", list[1])
	}
	if list[2].Likes != nil || list[2].ReplyTo != 1 || list[2].Context == nil || list[2].Context.RightLine != 4 {
		t.Errorf("comment 3 (an inline reply): %+v", list[2])
	}
	if list[3].ReplyTo != 0 {
		t.Errorf("comment 4 (no context.comment): %+v", list[3])
	}
}

// A create Swarm refuses for its context (reference: "Review comments")
// says why with ErrContextRefused, stores nothing and is not a create that
// may have landed; any other 400 is not a context refusal.
func TestContextRefusalIsTold(t *testing.T) {
	s := startStandin(t)
	s.AddReview(swarmstandin.Review{ID: review, Author: "bob", Change: 12348, Version: 1, Files: []string{"//depot/a.c"}})
	c, _ := commentsClient(s.URL(), "ticket-1", "ticket-1")
	at := func(file string, version int) swarm.NewComment {
		return swarm.NewComment{Review: review, Body: "b", Marker: swarm.SummaryKey(review, 1).Marker(),
			Context: &swarm.CommentContext{File: file, RightLine: 3, Version: version}}
	}
	for _, tt := range []struct {
		name string
		n    swarm.NewComment
		want error // nil: not a context refusal
	}{
		{"a file not in the version's change", at("//depot/b.c", 1), swarm.ErrNotInVersion},
		{"a version the review lacks", at("//depot/a.c", 4), swarm.ErrVersionNotFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Create(context.Background(), tt.n)
			if !errors.Is(err, tt.want) || !errors.Is(err, swarm.ErrContextRefused) || swarm.MaybeCreated(err) || failure.Classify(err).Retryable() {
				t.Fatalf("err %v (class %s, maybe %v), want %v, not created", err, failure.Classify(err), swarm.MaybeCreated(err), tt.want)
			}
		})
	}
	if n := len(s.Comments(review)); n != 0 {
		t.Fatalf("%d comments stored by refused creates", n)
	}
	// The reason is read from the answer's field or message; another
	// field's 400 is refused for good as before.
	for _, tt := range []struct {
		body string
		want error
	}{
		{`{"error":"Bad Request","details":{"context":"Provided context could not be filtered"}}`, swarm.ErrNotInVersion},
		{`{"error":"Bad Request","details":{"context[version]":"Specified version was not found"}}`, swarm.ErrVersionNotFound},
		{`{"error":"Bad Request","details":{"taskState":"Invalid task state"}}`, nil},
		{`not json`, nil},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(tt.body))
		}))
		c, _ := commentsClient(srv.URL, "ticket-1")
		_, err := c.Create(context.Background(), at("//depot/a.c", 1))
		srv.Close()
		if failure.Classify(err) != failure.SchemaInvalid || (tt.want == nil) == errors.Is(err, swarm.ErrContextRefused) || tt.want != nil && !errors.Is(err, tt.want) {
			t.Errorf("400 %s: err %v, want class %s and reason %v", tt.body, err, failure.SchemaInvalid, tt.want)
		}
	}
}
