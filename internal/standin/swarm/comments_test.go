package swarm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// client speaks to a started stand-in as the service user or a reviewer.
type client struct {
	t    *testing.T
	base string
}

type reply struct {
	status int
	header http.Header
	doc    map[string]any
	err    error // transport error (a dropped connection)
}

func (c client) do(method, path, user, ticket string, form url.Values) reply {
	c.t.Helper()
	var body *strings.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	} else {
		body = strings.NewReader("")
	}
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if user != "" {
		req.SetBasicAuth(user, ticket)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return reply{err: err}
	}
	defer resp.Body.Close()
	r := reply{status: resp.StatusCode, header: resp.Header}
	if err := json.NewDecoder(resp.Body).Decode(&r.doc); err != nil {
		c.t.Fatalf("%s %s: answer is not JSON: %v", method, path, err)
	}
	return r
}

func startComments(t *testing.T) (*Server, client) {
	t.Helper()
	s := NewServer(Options{User: "criticizer", Ticket: "t1"})
	base, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	s.AddReview(Review{ID: 885, Author: "bob"})
	s.AddVersion(885, Version{Change: 886, ArchiveChange: 886, Pending: true, Files: []string{"//depot/a.c"}})
	s.AddVersion(885, Version{Change: 890, ArchiveChange: 890, Pending: true, Difference: true, Files: []string{"//depot/a.c", "//depot/b.c"}})
	s.AddLogin("alice", "t2")
	return s, client{t, base}
}

func form(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v
}

func TestCreateComment(t *testing.T) {
	s, c := startComments(t)
	tests := []struct {
		name         string
		user, ticket string
		form         url.Values
		want         int
		wantContext  string // JSON of the answer's context
		wantState    string
	}{
		{"review-level comment", "criticizer", "t1", form("topic", "reviews/885", "body", "summary"), 200, `[]`, "comment"},
		{"inline task on a version", "criticizer", "t1",
			form("topic", "reviews/885", "body", "leak", "taskState", "open", "context[file]", "//depot/a.c", "context[rightLine]", "28",
				"context[content][]", "+ x = malloc(4);", "context[version]", "1"),
			200, `{"content":["+ x = malloc(4);"],"file":"//depot/a.c","leftLine":null,"rightLine":28,"version":1}`, "open"},
		{"inline without a version: the head version", "criticizer", "t1",
			form("topic", "reviews/885", "body", "b", "context[file]", "//depot/a.c", "context[leftLine]", "3"),
			200, `{"content":[],"file":"//depot/a.c","leftLine":3,"rightLine":null,"version":2}`, "comment"},
		{"as a reviewer", "alice", "t2", form("topic", "reviews/885", "body", "thanks"), 200, `[]`, "comment"},
		{"no login", "", "", form("topic", "reviews/885", "body", "x"), 401, "", ""},
		{"wrong ticket", "criticizer", "nope", form("topic", "reviews/885", "body", "x"), 401, "", ""},
		{"no body", "criticizer", "t1", form("topic", "reviews/885", "body", "  "), 400, "", ""},
		{"no topic", "criticizer", "t1", form("body", "x"), 400, "", ""},
		{"unknown review", "criticizer", "t1", form("topic", "reviews/9", "body", "x"), 404, "", ""},
		{"a new comment cannot be addressed", "criticizer", "t1", form("topic", "reviews/885", "body", "x", "taskState", "addressed"), 400, "", ""},
		{"a line is a number", "criticizer", "t1", form("topic", "reviews/885", "body", "x", "context[file]", "//depot/a.c", "context[rightLine]", "x"), 400, "", ""},
		{"a line needs its file", "criticizer", "t1", form("topic", "reviews/885", "body", "x", "context[rightLine]", "4"), 400, "", ""},
		// docs/reference/swarm.md, "Review comments": a version the review
		// does not have, or a file its version's change does not hold, is a 400.
		{"a version the review does not have", "criticizer", "t1",
			form("topic", "reviews/885", "body", "x", "context[file]", "//depot/a.c", "context[rightLine]", "4", "context[version]", "3"), 400, "", ""},
		{"a file the version does not hold", "criticizer", "t1",
			form("topic", "reviews/885", "body", "x", "context[file]", "//depot/b.c", "context[rightLine]", "4", "context[version]", "1"), 400, "", ""},
		{"a file the head does not hold", "criticizer", "t1",
			form("topic", "reviews/885", "body", "x", "context[file]", "//depot/gone.c", "context[rightLine]", "4"), 400, "", ""},
		{"the file in the version that holds it", "criticizer", "t1",
			form("topic", "reviews/885", "body", "x", "context[file]", "//depot/b.c", "context[rightLine]", "4", "context[content][]", "+y", "context[version]", "2"),
			200, `{"content":["+y"],"file":"//depot/b.c","leftLine":null,"rightLine":4,"version":2}`, "comment"},
	}
	made := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := c.do("POST", "/api/v9/comments", tt.user, tt.ticket, tt.form)
			if r.status != tt.want {
				t.Fatalf("status %d %v, want %d", r.status, r.doc, tt.want)
			}
			if tt.want == 400 && r.doc["details"] == nil {
				t.Fatalf("a 400 without its reason: %v", r.doc)
			}
			if tt.want != 200 {
				return
			}
			made++
			cm := r.doc["comment"].(map[string]any)
			ctx, _ := json.Marshal(cm["context"])
			if cm["id"].(float64) < 1 || cm["user"] != tt.user || cm["topic"] != "reviews/885" || string(ctx) != tt.wantContext || cm["taskState"] != tt.wantState {
				t.Fatalf("comment %v: want user %s, context %s, taskState %s", cm, tt.user, tt.wantContext, tt.wantState)
			}
			for _, f := range []string{"body", "time", "updated", "flags", "likes", "attachments"} {
				if _, ok := cm[f]; !ok {
					t.Fatalf("comment %v has no %s", cm, f)
				}
			}
		})
	}
	if n := len(s.Comments(885)); n != made {
		t.Fatalf("%d comments stored, want %d: refused requests store nothing", n, made)
	}
}

func TestCreateIsNotIdempotent(t *testing.T) {
	s, c := startComments(t)
	f := form("topic", "reviews/885", "body", "same", "silenceNotification", "true")
	a := c.do("POST", "/api/v9/comments", "criticizer", "t1", f)
	b := c.do("POST", "/api/v9/comments", "criticizer", "t1", f)
	if a.status != 200 || b.status != 200 || a.doc["comment"].(map[string]any)["id"] == b.doc["comment"].(map[string]any)["id"] {
		t.Fatalf("two creates: %v / %v, want two comments with their own ids", a.doc, b.doc)
	}
	got := s.Comments(885)
	// Silence implies delay (reference: "Review comments").
	if len(got) != 2 || !got[0].Silenced || !got[0].Delayed {
		t.Fatalf("stored %+v: want two silenced (so delayed) comments", got)
	}
	// Only the exact string "true" silences.
	c.do("POST", "/api/v9/comments", "criticizer", "t1", form("topic", "reviews/885", "body", "one", "silenceNotification", "1"))
	if got := s.Comments(885); got[2].Silenced {
		t.Fatal(`silenceNotification=1 silenced the comment; Swarm takes only "true"`)
	}
}

func TestListPagination(t *testing.T) {
	s, c := startComments(t)
	s.AddReview(Review{ID: 900, Author: "carol", Change: 901, Version: 1})
	for i := range 250 {
		ctx := &CommentContext{File: "//depot/a.c", RightLine: i + 1, Version: 1 + i%2}
		s.AddComment(Comment{Topic: "reviews/885", Body: fmt.Sprint("c", i+1), User: "alice", Context: ctx})
		if i%50 == 0 {
			s.AddComment(Comment{Topic: "reviews/900", Body: "other review", User: "alice"})
		}
	}
	ids := func(r reply, v11 bool) (got []int64, lastSeen any) {
		t.Helper()
		doc := r.doc
		if v11 {
			doc = r.doc["data"].(map[string]any)
		}
		switch list := doc["comments"].(type) {
		case []any:
			for _, x := range list {
				got = append(got, int64(x.(map[string]any)["id"].(float64)))
			}
		case map[string]any:
			for k, x := range list {
				if fmt.Sprint(x.(map[string]any)["id"]) != k {
					t.Fatalf("v9 comment under key %s has id %v", k, x.(map[string]any)["id"])
				}
				got = append(got, int64(x.(map[string]any)["id"].(float64)))
			}
			slices.Sort(got)
		}
		return got, doc["lastSeen"]
	}
	// Pages run oldest first, ids ascending (reference: "Review comments").
	all := s.Comments(885)
	newest, oldest := all[len(all)-1].ID, all[0].ID
	tests := []struct {
		name      string
		path      string
		v11       bool
		wantN     int
		wantFirst int64 // 0: none
		wantLast  any   // lastSeen as decoded
	}{
		{"v11 first page: the 100 oldest", "/api/v11/comments/reviews/885", true, 100, oldest, float64(all[99].ID)},
		{"v11 next page", fmt.Sprintf("/api/v11/comments/reviews/885?after=%d", all[99].ID), true, 100, all[100].ID, float64(all[199].ID)},
		{"v11 last page is short", fmt.Sprintf("/api/v11/comments/reviews/885?after=%d", all[199].ID), true, 50, all[200].ID, float64(newest)},
		{"v11 past the end: empty, lastSeen null", fmt.Sprintf("/api/v11/comments/reviews/885?after=%d", newest), true, 0, 0, nil},
		{"v11 max", "/api/v11/comments/reviews/885?max=7", true, 7, oldest, float64(all[6].ID)},
		{"v9 by topic, keyed by id", "/api/v9/comments?topic=reviews/885&max=10", false, 10, oldest, float64(all[9].ID)},
		{"v9 past the end: comments []", fmt.Sprintf("/api/v9/comments?topic=reviews/885&after=%d", newest), false, 0, 0, nil},
		{"v9 version filter thins the page, lastSeen still moves", "/api/v9/comments?topic=reviews/885&max=10&context%5Bversion%5D=2", false, 5, all[1].ID, float64(all[9].ID)},
		{"other review", "/api/v11/comments/reviews/900", true, 5, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := c.do("GET", tt.path, "criticizer", "t1", nil)
			if r.status != 200 {
				t.Fatalf("status %d %v", r.status, r.doc)
			}
			got, last := ids(r, tt.v11)
			if len(got) != tt.wantN || (tt.wantFirst != 0 && got[0] != tt.wantFirst) || (tt.wantLast != nil && last != tt.wantLast) || (tt.wantN == 0 && last != nil) {
				t.Fatalf("%d comments from %v, lastSeen %v; want %d from %d, lastSeen %v", len(got), got[:min(3, len(got))], last, tt.wantN, tt.wantFirst, tt.wantLast)
			}
			if !slices.IsSorted(got) {
				t.Fatalf("page %v is not oldest first", got)
			}
			if reqs := s.Requests(); reqs[len(reqs)-1].Listed != len(got) {
				t.Fatalf("recorded %d comments listed, want %d", reqs[len(reqs)-1].Listed, len(got))
			}
		})
	}
	if r := c.do("GET", "/api/v9/comments?topic=reviews/885&max=10", "", "", nil); r.status != 401 {
		t.Fatalf("a list without a login: %d, want 401", r.status)
	}
	if r := c.do("GET", "/api/v11/comments/reviews/9", "criticizer", "t1", nil); r.status != 404 {
		t.Fatalf("comments of an unknown review: %d, want 404", r.status)
	}
	if r := c.do("GET", "/api/v11/comments/reviews/885?max=x", "criticizer", "t1", nil); r.status != 400 {
		t.Fatalf("max=x: %d, want 400", r.status)
	}
}

func TestEditComment(t *testing.T) {
	s, c := startComments(t)
	mine := s.AddComment(Comment{Topic: "reviews/885", Body: "leak", User: "criticizer", TaskState: TaskOpen})
	plain := s.AddComment(Comment{Topic: "reviews/885", Body: "note", User: "criticizer"})
	theirs := s.AddComment(Comment{Topic: "reviews/885", Body: "nit", User: "alice", TaskState: TaskOpen})
	path := func(c Comment) string { return fmt.Sprint("/api/v9/comments/", c.ID) }
	tests := []struct {
		name      string
		path      string
		form      url.Values
		want      int
		wantState string
	}{
		{"open task addressed", path(mine), form("taskState", "addressed"), 200, TaskAddressed},
		{"addressed again: the same state is a 400", path(mine), form("taskState", "addressed"), 400, ""},
		{"addressed to open is not in the table's reverse: open", path(mine), form("taskState", "open"), 200, TaskOpen},
		{"a plain comment cannot be addressed", path(plain), form("taskState", "addressed"), 400, ""},
		{"unknown state", path(plain), form("taskState", "done"), 400, ""},
		{"another user's task state: anyone who sees the review", path(theirs), form("taskState", "addressed"), 200, TaskAddressed},
		{"another user's body: the author only", path(theirs), form("body", "edited"), 403, ""},
		{"unknown comment", "/api/v9/comments/99999", form("taskState", "addressed"), 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := c.do("PATCH", tt.path, "criticizer", "t1", tt.form)
			if r.status != tt.want || (tt.want == 200 && r.doc["comment"].(map[string]any)["taskState"] != tt.wantState) {
				t.Fatalf("status %d %v, want %d with taskState %s", r.status, r.doc, tt.want, tt.wantState)
			}
		})
	}
	if got := s.Comments(885); got[2].Body != "nit" || got[1].TaskState != TaskComment {
		t.Fatalf("refused edits changed comments: %+v", got)
	}
}

func TestCommentFaults(t *testing.T) {
	s, c := startComments(t)
	create := func(body string) reply {
		return c.do("POST", "/api/v9/comments", "criticizer", "t1", form("topic", "reviews/885", "body", body))
	}
	tests := []struct {
		name       string
		fault      Fault
		wantStatus int // 0: the connection drops
		wantStored bool
		wantRetry  string
		wantFault  string // as recorded
	}{
		{"429 with Retry-After: nothing stored", Fault{Status: 429, RetryAfter: "7"}, 429, false, "7", "429"},
		{"503 before the work", Fault{Status: 503}, 503, false, "", "503"},
		{"502 after the comment was stored", Fault{Status: 502, AfterStore: true}, 502, true, "", "502-after-store"},
		{"connection dropped after the comment was stored", Fault{Drop: true, AfterStore: true}, 0, true, "", "lost-after-store"},
		{"connection dropped before the work", Fault{Drop: true}, 0, false, "", "reset"},
		{"held briefly, then handled as usual", Fault{Hold: 10 * time.Millisecond}, 200, true, "", "held"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := fmt.Sprint("attempt ", i)
			s.InjectFault(OpCreateComment, tt.fault)
			r := create(body)
			if (tt.wantStatus == 0) != (r.err != nil) || r.status != tt.wantStatus || r.header.Get("Retry-After") != tt.wantRetry {
				t.Fatalf("answer %d %v (err %v), want %d, Retry-After %q", r.status, r.header, r.err, tt.wantStatus, tt.wantRetry)
			}
			stored := slices.ContainsFunc(s.Comments(885), func(c Comment) bool { return c.Body == body })
			if stored != tt.wantStored {
				t.Fatalf("stored %v, want %v", stored, tt.wantStored)
			}
			reqs := s.Requests()
			if last := reqs[len(reqs)-1]; last.Op != OpCreateComment || last.Status != tt.wantStatus || last.Form.Get("body") != body || last.User != "criticizer" || last.Fault != tt.wantFault {
				t.Fatalf("recorded %+v", last)
			}
		})
	}
	// Faults are per operation and used once: the list still answers.
	s.InjectFault(OpListComments, Fault{Status: 500})
	if r := c.do("GET", "/api/v11/comments/reviews/885", "criticizer", "t1", nil); r.status != 500 {
		t.Fatalf("list with a 500 queued: %d", r.status)
	}
	if r := c.do("GET", "/api/v11/comments/reviews/885", "criticizer", "t1", nil); r.status != 200 || len(r.doc["data"].(map[string]any)["comments"].([]any)) != 3 {
		t.Fatalf("list after the fault: %d %v, want the 3 stored comments", r.status, r.doc)
	}
	// Faults not served are dropped by ClearFaults.
	s.InjectFault(OpListComments, Fault{Status: 500}, Fault{Drop: true})
	if n := s.ClearFaults(); n != 2 {
		t.Fatalf("ClearFaults dropped %d, want 2", n)
	}
	if r := c.do("GET", "/api/v11/comments/reviews/885", "criticizer", "t1", nil); r.status != 200 {
		t.Fatalf("list after ClearFaults: %d", r.status)
	}
}

func TestReviewVersions(t *testing.T) {
	s, c := startComments(t)
	s.AddReview(Review{ID: 40, Author: "bob"})
	s.AddVersion(40, Version{Change: 41, Pending: true}) // a release without archiveChange
	s.AddVersion(40, Version{Change: 45, ArchiveChange: 44, Difference: true})
	s.AddReview(Review{ID: 50, Author: "bob", Change: 52, Version: 1})
	tests := []struct {
		path         string
		wantVersions string
		wantChanges  string
	}{
		{"/api/v11/reviews/885", `[{"archiveChange":886,"change":886,"difference":false,"pending":true},{"archiveChange":890,"change":890,"difference":true,"pending":true}]`, `[886,890]`},
		{"/api/v11/reviews/40", `[{"change":41,"difference":false,"pending":true},{"archiveChange":44,"change":45,"difference":true,"pending":false}]`, `[41,45]`},
		// Added without versions: a pre-commit head as 2022.1 shows it, change
		// the review id and archiveChange the archive (reference: "Review versions").
		{"/api/v11/reviews/50", `[{"archiveChange":52,"change":50,"difference":false,"pending":true}]`, `[52]`},
	}
	for _, tt := range tests {
		r := c.do("GET", tt.path, "alice", "t2", nil)
		rev := r.doc["data"].(map[string]any)["reviews"].([]any)[0].(map[string]any)
		vs := rev["versions"].([]any)
		for _, v := range vs {
			m := v.(map[string]any)
			if m["user"] != "swarm" || (m["time"].(float64) <= 0 && tt.path != "/api/v11/reviews/50") {
				t.Fatalf("%s version %v: want user and time", tt.path, m)
			}
			delete(m, "user")
			delete(m, "time")
		}
		got, _ := json.Marshal(vs)
		changes, _ := json.Marshal(rev["changes"])
		if string(got) != tt.wantVersions || string(changes) != tt.wantChanges {
			t.Fatalf("%s: versions %s changes %s, want %s %s", tt.path, got, changes, tt.wantVersions, tt.wantChanges)
		}
	}
}

// TestHeldCreate: a create held past the caller's timeout is stored when the
// hold ends, though the caller has gone; while held it is listed by Held
// (whose caller a test may kill), and the fault hook sees it before the
// answer is given.
func TestHeldCreate(t *testing.T) {
	s, c := startComments(t)
	var hooked []Request
	s.OnFault(func(r Request) {
		hooked = append(hooked, r)
		s.AddComment(Comment{Topic: "reviews/885", Body: "a reviewer meanwhile", User: "alice"})
	})
	s.InjectFault(OpCreateComment, Fault{Hold: 400 * time.Millisecond})
	req, err := http.NewRequest("POST", c.base+"/api/v9/comments", strings.NewReader(form("topic", "reviews/885", "body", "late").Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("criticizer", "t1")
	done := make(chan error, 1)
	go func() {
		resp, err := (&http.Client{Timeout: 100 * time.Millisecond}).Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	if err := <-done; err == nil {
		t.Fatal("the held create answered within the caller's timeout")
	}
	if held := s.Held(); len(held) != 1 || len(s.Comments(885)) != 0 {
		t.Fatalf("after the caller gave up: held %v, comments %+v; want one held, none stored yet", held, s.Comments(885))
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(s.Held()) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	got := s.Comments(885)
	if len(s.Held()) != 0 || len(got) != 2 || got[0].Body != "late" || got[0].User != "criticizer" || got[1].User != "alice" {
		t.Fatalf("after the hold: held %v, comments %+v; want the late create stored, then the reviewer's", s.Held(), got)
	}
	if len(hooked) != 1 || hooked[0].Fault != "held" || hooked[0].Status != 200 || hooked[0].Remote == "" {
		t.Fatalf("fault hook saw %+v", hooked)
	}
}

// TestV11ErrorsCarryTheCode: a v11 error body's "error" is the numeric
// status, a v9 one's a message (docs/reference/swarm.md, "Review comments").
func TestV11ErrorsCarryTheCode(t *testing.T) {
	_, c := startComments(t)
	tests := []struct {
		name, path, user, ticket string
		want                     int
		wantError                any
	}{
		{"v11 review unknown", "/api/v11/reviews/999", "alice", "t2", 404, float64(404)},
		{"v11 review without login", "/api/v11/reviews/885", "", "", 401, float64(401)},
		{"v11 comments of an unknown review", "/api/v11/comments/reviews/999", "alice", "t2", 404, float64(404)},
		{"v11 comments, a bad max", "/api/v11/comments/reviews/885?max=x", "alice", "t2", 400, float64(400)},
		{"v11 comments without login", "/api/v11/comments/reviews/885", "alice", "nope", 401, float64(401)},
		{"v9 review unknown", "/api/v9/reviews/999", "alice", "t2", 404, "Cannot fetch entry. Id does not exist."},
		{"v9 comments without login", "/api/v9/comments?topic=reviews/885", "", "", 401, "Unauthorized"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := c.do("GET", tt.path, tt.user, tt.ticket, nil)
			if r.status != tt.want || r.doc["error"] != tt.wantError {
				t.Fatalf("%d %v, want %d with error %v", r.status, r.doc, tt.want, tt.wantError)
			}
		})
	}
}

// Where a review or version was added without its files, Options.ChangeFiles
// says what its change holds: a comment on another file is refused, as
// Swarm refuses it, and the files a test gave win over it.
func TestChangeFilesAnchorComments(t *testing.T) {
	s := NewServer(Options{User: "criticizer", Ticket: "t1", ChangeFiles: func(cl int64) []string {
		return map[int64][]string{886: {"//depot/a.c"}, 890: {"//depot/a.c", "//depot/b.c"}, 900: {"//depot/c.c"}}[cl]
	}})
	base, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	c := client{t, base}
	s.AddReview(Review{ID: 885, Author: "bob"})
	s.AddVersion(885, Version{Change: 885, ArchiveChange: 886, Pending: true})
	s.AddVersion(885, Version{Change: 885, ArchiveChange: 890, Pending: true, Difference: true})
	s.AddReview(Review{ID: 899, Author: "bob", Change: 900, Version: 1})
	s.AddReview(Review{ID: 901, Author: "bob", Change: 900, Version: 1, Files: []string{"//depot/d.c"}})
	for _, tt := range []struct {
		review, file, version string
		want                  int
	}{
		{"885", "//depot/a.c", "1", 200},
		{"885", "//depot/b.c", "1", 400},
		{"885", "//depot/b.c", "2", 200},
		{"899", "//depot/c.c", "", 200},
		{"899", "//depot/a.c", "", 400},
		{"901", "//depot/d.c", "", 200},
		{"901", "//depot/c.c", "", 400},
	} {
		f := form("topic", "reviews/"+tt.review, "body", "x", "context[file]", tt.file, "context[rightLine]", "2", "context[version]", tt.version)
		if r := c.do("POST", "/api/v9/comments", "criticizer", "t1", f); r.status != tt.want {
			t.Errorf("review %s v%q %s: %d, want %d", tt.review, tt.version, tt.file, r.status, tt.want)
		}
	}
}
