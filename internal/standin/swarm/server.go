// Package swarm is a stand-in for Helix Swarm (P4 Code Review) for the
// integration suite, built from docs/reference/swarm.md (checked against
// Swarm 2022.1's source): the reviews API (v9 and v11, HTTP Basic login),
// the comments API (comments.go, with fault injection), accounts, webhooks,
// and a workflow test run's callbacks ({update}, {pass}, {fail}) as Swarm
// builds, serves and records them, and its test request (RunTest,
// Substitute).
package swarm

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Options configures the stand-in.
type Options struct {
	User, Ticket string       // the API login the reviews API accepts
	Logger       *slog.Logger // default discards
	// ChangeFiles are the depot paths a change holds, for reviews and
	// versions without Files: an inline comment on another file is refused
	// as Swarm refuses it. nil, or a nil answer: any file goes.
	ChangeFiles func(change int64) []string
}

// Review is a Swarm review.
type Review struct {
	ID      int64
	Author  string
	Change  int64 // the head archive change: pending, shelved, owned by Swarm's service user
	Version int
	// Versions, oldest first (AddVersion); empty shows Change as the only one.
	Versions  []Version
	Reviewers []string // participants besides the author
	Files     []string // Change's files without Versions; nil: Options.ChangeFiles
	// Required are the required reviewers by participant id ("true", or
	// "1": one member of the group must vote), as callouts set them.
	Required map[string]string
	Projects map[string][]string // project id → branches touched
}

// Run is one test run of a review version, with its callback URLs.
type Run struct {
	ID, Review         int64
	Version            int
	Update, Pass, Fail string
	token              string
	view               RunView
}

// RunView is a test run as a reviewer sees it on the review.
type RunView struct {
	Status    string // notstarted, running, pass, fail
	Messages  []string
	URL       string
	Completed bool
}

// Call is one callback Swarm received.
type Call struct {
	Run                 int64
	Kind                string // update, pass or fail
	Method, ContentType string
	Status              string   // {update}'s status
	Messages            []string // as sent
	URL                 string   // the link sent
	At                  time.Time
}

// Server is the stand-in.
type Server struct {
	opts  Options
	log   *slog.Logger
	srv   *http.Server
	base  string
	mu    sync.Mutex
	revs  map[int64]Review
	runs  map[int64]*Run
	calls []Call
	fail  map[string][]int // kind → statuses to answer next, in order
	seq   int64
	// tokens are the reviews' raw tokens (Review::getToken before ".v").
	tokens     map[int64]string
	logins     map[string]string // user → ticket, besides Options'
	comments   map[int64]*Comment
	commentSeq int64
	faults     map[Op][]Fault
	requests   []Request
	onFault    func(Request)
	held       map[string]int // caller address → requests held
	closing    chan struct{}  // closed by Close: held requests end
	closeOnce  sync.Once
	events     *EventTarget // nil until SetEventTarget
	pending    []pendingEvent
	users      []string
	groups     map[string]Group
	projects   map[string]Project
}

// NewServer returns a stopped stand-in.
func NewServer(o Options) *Server {
	return &Server{opts: o, log: cmp.Or(o.Logger, slog.New(slog.DiscardHandler)), revs: map[int64]Review{}, runs: map[int64]*Run{}, fail: map[string][]int{}, seq: 700, tokens: map[int64]string{}, closing: make(chan struct{}),
		groups: map[string]Group{}, projects: map[string]Project{}, logins: map[string]string{}, comments: map[int64]*Comment{}, held: map[string]int{}, faults: map[Op][]Fault{}}
}

// Start listens on addr ("127.0.0.1:0" for any port) and returns the base URL.
func (s *Server) Start(addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	mux := http.NewServeMux()
	// v11 from 2022.1 on; v9 on every supported release (docs/reference/swarm.md,
	// "Test-run callbacks": the review's author bullet).
	mux.HandleFunc("GET /api/v11/reviews/{id}", s.reviewAPI(true))
	mux.HandleFunc("GET /api/v9/reviews/{id}", s.reviewAPI(false))
	mux.HandleFunc("GET /api/v9/groups/{id}", s.groupAPI)
	mux.HandleFunc("GET /api/v9/projects/{id}", s.projectAPI)
	// Swarm 2022.1 module/TestIntegration/config/module.config.php: the
	// callbacks' routes, v10, no login (the uuid is the credential).
	mux.HandleFunc("/api/v10/testruns/{run}/{token}", s.update)
	for _, kind := range []string{"pass", "fail"} {
		mux.HandleFunc("GET /api/v10/testruns/{run}/"+kind+"/{token}", s.finish(kind))
		mux.HandleFunc("POST /api/v10/testruns/{run}/"+kind+"/{token}", s.finish(kind))
	}
	mux.HandleFunc("GET /api/v11/comments/reviews/{id}", s.commentsAPI(OpListComments, s.listComments(true)))
	for _, p := range []string{"/api/v9/comments", "/api/v9/comments/{$}"} {
		mux.HandleFunc("GET "+p, s.commentsAPI(OpListComments, s.listComments(false)))
		mux.HandleFunc("POST "+p, s.commentsAPI(OpCreateComment, s.createComment))
	}
	mux.HandleFunc("PATCH /api/v9/comments/{id}", s.commentsAPI(OpEditComment, s.editComment))
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	s.base = "http://" + ln.Addr().String()
	go func() { _ = s.srv.Serve(ln) }()
	return s.base, nil
}

// URL is the base URL (SWARM_URL).
func (s *Server) URL() string { return s.base }

// Close stops the server.
func (s *Server) Close() error {
	if s.srv == nil {
		return nil
	}
	s.closeOnce.Do(func() { close(s.closing) })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return s.srv.Shutdown(ctx)
}

// AddReview adds or replaces a review.
func (s *Server) AddReview(r Review) { set(s, s.revs, r.ID, r) }

// set stores v under k in one of s's maps, under s.mu.
func set[K comparable, V any](s *Server, m map[K]V, k K, v V) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m[k] = v
}

// StartRun creates a test run for a review version, as Swarm does before it
// calls the test's URL. The callbacks' uuid is Review::getToken(): the
// review's upper-case UUID, ".v", the version (Swarm 2022.1
// module/Reviews/src/Model/Review.php getToken; TestExecutor.php
// generateCallbackUrls; docs/reference/swarm.md, test-run callbacks). Their
// origin is http://localhost, Swarm's environment.external_url left empty:
// where its cron script sends the queue worker's request (reference:
// "Test-run callbacks"; QualifiedUrl view helper, p4-bin/scripts/swarm-cron.sh).
func (s *Server) StartRun(review int64, version int) Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	tok, ok := s.tokens[review]
	if !ok {
		tok = strings.ToUpper(uuid.NewString())
		s.tokens[review] = tok
	}
	r := &Run{ID: s.seq, Review: review, Version: version, token: tok + ".v" + strconv.Itoa(version),
		view: RunView{Status: "notstarted"}}
	prefix := fmt.Sprintf("http://localhost/api/v10/testruns/%d/", r.ID)
	r.Update, r.Pass, r.Fail = prefix+r.token, prefix+"pass/"+r.token, prefix+"fail/"+r.token
	s.runs[r.ID] = r
	return *r
}

// RunView returns the run as a reviewer sees it.
func (s *Server) RunView(run int64) RunView {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.runs[run]
	if !ok {
		return RunView{}
	}
	v := r.view
	v.Messages = append([]string(nil), v.Messages...)
	return v
}

// FailNext makes the next len(statuses) callbacks of kind answer those
// statuses instead of 200 (and not count as received).
func (s *Server) FailNext(kind string, statuses ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail[kind] = append(s.fail[kind], statuses...)
}

// Calls returns the callbacks run received, in order.
func (s *Server) Calls(run int64) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.DeleteFunc(slices.Clone(s.calls), func(c Call) bool { return c.Run != run })
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// apiError answers an API error as Swarm does for r's API version.
func apiError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	writeJSON(w, status, errorCode(r, status, errorBody(status, msg)))
}

func errorBody(status int, msg string) map[string]any {
	return map[string]any{"error": msg, "messages": []any{map[string]string{"code": strconv.Itoa(status), "text": msg}}, "data": nil}
}

// unauthorized refuses a request without a login Swarm knows.
func unauthorized(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("WWW-Authenticate", `Basic realm="swarm"`)
	apiError(w, r, http.StatusUnauthorized, "Unauthorized")
}

// errorCode gives an error body of a v11 request the numeric status as its
// "error" (docs/reference/swarm.md, "Review comments": "v11 error bodies
// carry the numeric code (`"error": 401`)"); older APIs keep their text.
func errorCode(r *http.Request, status int, body map[string]any) map[string]any {
	if strings.HasPrefix(r.URL.Path, "/api/v11/") {
		body["error"] = status
	}
	return body
}

// reviewAPI answers the reviews API, abridged to what is read: v11 as
// {"data": {"reviews": [...]}}, v9 as {"review": {...}}
// (docs/reference/swarm.md: the review's author under "Test-run callbacks",
// "Review versions", and the answer shapes under "Added by this project").
func (s *Server) reviewAPI(v11 bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if _, ok := s.login(r); !ok {
			unauthorized(w, r)
			return
		}
		id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
		s.mu.Lock()
		rev, found := s.revs[id]
		s.mu.Unlock()
		if err != nil || !found {
			apiError(w, r, http.StatusNotFound, "Cannot fetch entry. Id does not exist.")
			return
		}
		// projects: [] without any (Reviews\Model\Review 'projects').
		doc := map[string]any{"id": rev.ID, "type": "default", "author": rev.Author, "changes": changesOf(rev), "state": "needsReview",
			"versions": versionsWire(rev), "participants": participantsWire(rev), "projects": orPHPArray(rev.Projects)}
		if !v11 {
			writeJSON(w, http.StatusOK, map[string]any{"review": doc})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"error": nil, "messages": []any{}, "data": map[string]any{"reviews": []any{doc}}})
	}
}

// participantsWire is the review's participants keyed by user, the author
// included, as Swarm's API docs show them: "participants": {"swarm_admin":
// []} (help.perforce.com, Swarm 2024.1, swarm-apidoc_endpoint_reviews.html;
// not in docs/reference/swarm.md); a required one {"required": true}, or
// "1" for a group (Reviews\Model\Review::addRequired). The client reads
// every key whatever its value: *unverified* shapes count the same.
func participantsWire(r Review) map[string]any {
	out := map[string]any{}
	for _, p := range participantsOf(r) {
		switch p.Required {
		case "":
			out[p.ID] = []any{} // PHP's empty array, as the docs show it
		case "true":
			out[p.ID] = map[string]any{"required": true}
		default:
			out[p.ID] = map[string]any{"required": p.Required}
		}
	}
	return out
}

// runFor finds the callback's run: an unknown run is a 404, a wrong uuid a
// 401 (Swarm 2022.1 src/Controller/TestRunApi.php). Called with s.mu held.
func (s *Server) runFor(w http.ResponseWriter, r *http.Request) *Run {
	id, _ := strconv.ParseInt(r.PathValue("run"), 10, 64)
	run, ok := s.runs[id]
	switch {
	case !ok:
		apiError(w, r, http.StatusNotFound, "Test run not found")
		return nil
	case r.PathValue("token") != run.token:
		apiError(w, r, http.StatusUnauthorized, "Unauthorized")
		return nil
	}
	return run
}

// failed answers a status FailNext queued for kind. Called with s.mu held.
func (s *Server) failed(w http.ResponseWriter, r *http.Request, kind string) bool {
	if q := s.fail[kind]; len(q) > 0 {
		s.fail[kind] = q[1:]
		apiError(w, r, q[0], http.StatusText(q[0]))
		return true
	}
	return false
}

// update is {update}: POST only, JSON with only messages, status (pass,
// fail, running, notstarted) and url (≤ 1024 characters); Swarm keeps 10
// messages of 80 characters (reference: "Test-run callbacks"; Swarm 2022.1
// src/Filter/TestRun.php).
func (s *Server) update(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	s.mu.Lock()
	defer s.mu.Unlock()
	run := s.runFor(w, r)
	if run == nil {
		return
	}
	if r.Method != http.MethodPost {
		apiError(w, r, http.StatusMethodNotAllowed, "Method not allowed")
		return
	}
	if s.failed(w, r, "update") {
		return
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		apiError(w, r, http.StatusBadRequest, "Invalid JSON body")
		return
	}
	for k := range raw {
		if k != "status" && k != "messages" && k != "url" {
			apiError(w, r, http.StatusBadRequest, "Unknown field "+k)
			return
		}
	}
	var rep struct {
		Status   string   `json:"status"`
		Messages []string `json:"messages"`
		URL      string   `json:"url"`
	}
	if err := json.Unmarshal(body, &rep); err != nil || len(rep.URL) > 1024 {
		apiError(w, r, http.StatusBadRequest, "Invalid messages, status or url")
		return
	}
	if !slices.Contains([]string{"", "pass", "fail", "running", "notstarted"}, rep.Status) {
		apiError(w, r, http.StatusBadRequest, "Invalid status")
		return
	}
	msgs := slices.Clone(rep.Messages[:min(len(rep.Messages), 10)]) // the call records them as sent
	for i, m := range msgs {
		if rs := []rune(m); len(rs) > 80 {
			msgs[i] = string(rs[:80])
		}
	}
	if rep.Status != "" {
		run.view.Status = rep.Status
	}
	if _, ok := raw["messages"]; ok {
		run.view.Messages = msgs
	}
	if _, ok := raw["url"]; ok {
		run.view.URL = rep.URL
	}
	s.recordCall(w, r, run, Call{Kind: "update", Status: rep.Status, Messages: rep.Messages, URL: rep.URL})
}

// finish is {pass} or {fail}, GET or POST: it reads only a url (form or
// query; a JSON body is ignored) and leaves {update}'s messages (reference:
// "Test-run callbacks"; Swarm 2022.1 TestRunApi.php).
func (s *Server) finish(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var link string
		if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") || r.Method == http.MethodGet {
			_ = r.ParseForm()
			link = r.Form.Get("url")
		} else {
			link = r.URL.Query().Get("url")
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		run := s.runFor(w, r)
		if run == nil || s.failed(w, r, kind) {
			return
		}
		run.view.Status, run.view.Completed = kind, true
		if link != "" {
			run.view.URL = link
		}
		s.recordCall(w, r, run, Call{Kind: kind, Status: kind, URL: link})
	}
}

// recordCall keeps a call and answers it as Swarm does. Called with s.mu held.
func (s *Server) recordCall(w http.ResponseWriter, r *http.Request, run *Run, c Call) {
	c.Run, c.Method, c.ContentType, c.At = run.ID, r.Method, r.Header.Get("Content-Type"), time.Now()
	s.calls = append(s.calls, c)
	s.log.Info("swarm callback", "run", run.ID, "kind", c.Kind)
	writeJSON(w, http.StatusOK, map[string]any{"error": nil, "messages": []any{}, "data": map[string]any{"testruns": []any{
		map[string]any{"id": run.ID, "version": run.Version, "status": run.view.Status, "messages": run.view.Messages, "url": run.view.URL}}}})
}

// Values are a run's placeholder values, as Swarm fills them: all strings.
func (s *Server) Values(run Run, change int64, status string) map[string]string {
	return map[string]string{
		"change": strconv.FormatInt(change, 10), "status": status, "review": strconv.FormatInt(run.Review, 10),
		"version": strconv.Itoa(run.Version), "testRunId": strconv.FormatInt(run.ID, 10),
		"update": run.Update, "pass": run.Pass, "fail": run.Fail, "test": "criticizer",
	}
}

// Substitute fills a json-encoded test definition body as Swarm does: each
// {placeholder} becomes its value JSON-escaped (so it must sit in a JSON
// string), and the result must be valid JSON.
func Substitute(template string, values map[string]string) (string, error) {
	out := template
	for k, v := range values {
		esc, _ := json.Marshal(v)
		out = strings.ReplaceAll(out, "{"+k+"}", string(esc[1:len(esc)-1]))
	}
	if !json.Valid([]byte(out)) {
		return "", errors.New("swarm: the test definition body is not valid JSON after substitution")
	}
	return out, nil
}

// TestDefinition is a Swarm workflow test definition (json encoding).
type TestDefinition struct {
	URL     string            // placeholders URL-encoded when substituted
	Body    string            // placeholders JSON-escaped; empty: Swarm sends a GET
	Headers map[string]string // static: sent as stored, no placeholders
	Timeout time.Duration     // default 10 s
}

// Outcome is how a run's request ended: a non-2xx or no answer fails the
// run; a 2xx leaves it running until a callback arrives.
type Outcome struct {
	Status     int
	StatusLine string
	Body       []byte
	Failed     bool
}

// RunTest sends run's request for def the way Swarm does.
func (s *Server) RunTest(ctx context.Context, def TestDefinition, run Run, change int64, status string) (Outcome, error) {
	vals := s.Values(run, change, status)
	u := def.URL
	for k, v := range vals {
		u = strings.ReplaceAll(u, "{"+k+"}", url.QueryEscape(v))
	}
	method, body := http.MethodGet, io.Reader(nil)
	if def.Body != "" {
		b, err := Substitute(def.Body, vals)
		if err != nil {
			return Outcome{}, err
		}
		method, body = http.MethodPost, strings.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return Outcome{}, err
	}
	if def.Body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range def.Headers {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: cmp.Or(def.Timeout, 10*time.Second)}).Do(req)
	if err != nil {
		return Outcome{Failed: true, StatusLine: err.Error()}, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return Outcome{Status: resp.StatusCode, StatusLine: resp.Status, Body: b, Failed: resp.StatusCode/100 != 2}, nil
}
