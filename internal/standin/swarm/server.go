// Package swarm is a stand-in for Helix Swarm, built from
// docs/reference/swarm.md, for the integration suite: the reviews API
// (GET /api/v11/reviews/{id}, HTTP Basic login, field author, the versions
// array), the review comments API (comments.go: list, create, edit, with
// fault injection) and the three callback URLs of a workflow test run
// ({update}, {pass}, {fail}, each carrying the run's own token), whose calls
// it records. It also does what Swarm does when a test runs: Substitute
// fills a test definition's body template with string placeholders,
// JSON-escaped.
package swarm

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Options configures the stand-in.
type Options struct {
	User, Ticket string       // the API login the reviews API accepts
	Logger       *slog.Logger // default discards
}

// Review is a Swarm review.
type Review struct {
	ID      int64
	Author  string
	Change  int64 // the head archive change: pending, shelved, owned by Swarm's service user
	Version int
	// Versions, oldest first (AddVersion); empty shows Change as the only one.
	Versions []Version
}

// Run is one test run of a review version, with its callback URLs.
type Run struct {
	ID      int64
	Review  int64
	Version int
	Update  string
	Pass    string
	Fail    string
	token   string
}

// Call is one callback Swarm received.
type Call struct {
	Run         int64
	Kind        string // update, pass or fail
	Method      string
	ContentType string
	Status      string   // {update}'s status
	Messages    []string // as sent
	URL         string   // the link sent
	At          time.Time
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
	// The comments API (comments.go).
	logins     map[string]string // user → ticket, besides Options'
	comments   map[int64]*Comment
	commentSeq int64
	faults     map[Op][]Fault
	requests   []Request
	onFault    func(Request)
	held       map[string]int // caller address → requests held
	closing    chan struct{}  // closed by Close: held requests end
	closeOnce  sync.Once
}

// NewServer returns a stopped stand-in.
func NewServer(o Options) *Server {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Server{opts: o, log: log, revs: map[int64]Review{}, runs: map[int64]*Run{}, fail: map[string][]int{}, seq: 700, closing: make(chan struct{})}
}

// Start listens on addr ("127.0.0.1:0" for any port) and returns the base URL.
func (s *Server) Start(addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v11/reviews/{id}", s.review)
	mux.HandleFunc("POST /api/v11/reviews/{review}/testruns/{run}/{token}", s.callback("update"))
	mux.HandleFunc("PATCH /api/v11/reviews/{review}/testruns/{run}/{token}", s.callback("update"))
	mux.HandleFunc("POST /api/v11/reviews/{review}/testruns/{run}/{token}/pass", s.callback("pass"))
	mux.HandleFunc("POST /api/v11/reviews/{review}/testruns/{run}/{token}/fail", s.callback("fail"))
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
func (s *Server) AddReview(r Review) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revs[r.ID] = r
}

// StartRun creates a test run for a review version, as Swarm does before it
// calls the test's URL, and returns it with its callback URLs.
func (s *Server) StartRun(review int64, version int) Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	r := &Run{ID: s.seq, Review: review, Version: version, token: strings.ToUpper(hex.EncodeToString(b))}
	prefix := fmt.Sprintf("%s/api/v11/reviews/%d/testruns/%d/%s", s.base, review, r.ID, r.token)
	r.Update, r.Pass, r.Fail = prefix, prefix+"/pass", prefix+"/fail"
	s.runs[r.ID] = r
	return *r
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
	var out []Call
	for _, c := range s.calls {
		if c.Run == run {
			out = append(out, c)
		}
	}
	return out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func apiError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"error": msg, "messages": []any{map[string]string{"code": strconv.Itoa(status), "text": msg}}, "data": nil})
}

func (s *Server) review(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.login(r); !ok {
		w.Header().Set("WWW-Authenticate", `Basic realm="swarm"`)
		apiError(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	s.mu.Lock()
	rev, found := s.revs[id]
	s.mu.Unlock()
	if err != nil || !found {
		apiError(w, http.StatusNotFound, "Cannot fetch entry. Id does not exist.")
		return
	}
	// The v11 shape: a list under data.reviews, abridged to what is read.
	writeJSON(w, http.StatusOK, map[string]any{"error": nil, "messages": []any{}, "data": map[string]any{"reviews": []any{map[string]any{
		"id": rev.ID, "type": "default", "author": rev.Author, "changes": changesOf(rev), "state": "needsReview",
		"versions": versionsWire(rev),
	}}}})
}

func (s *Server) callback(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		runID, _ := strconv.ParseInt(r.PathValue("run"), 10, 64)
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		s.mu.Lock()
		defer s.mu.Unlock()
		run, ok := s.runs[runID]
		if !ok || r.PathValue("token") != run.token || r.PathValue("review") != strconv.FormatInt(run.Review, 10) {
			apiError(w, http.StatusForbidden, "Invalid test run or token")
			return
		}
		if q := s.fail[kind]; len(q) > 0 {
			s.fail[kind] = q[1:]
			apiError(w, q[0], http.StatusText(q[0]))
			return
		}
		var rep struct {
			Status   string   `json:"status"`
			Messages []string `json:"messages"`
			URL      string   `json:"url"`
		}
		if len(body) > 0 {
			if err := json.Unmarshal(body, &rep); err != nil {
				apiError(w, http.StatusBadRequest, "Invalid JSON body")
				return
			}
		}
		status := kind
		if kind == "update" {
			if rep.Status != "" && rep.Status != "running" && rep.Status != "pass" && rep.Status != "fail" {
				apiError(w, http.StatusBadRequest, "Invalid status")
				return
			}
			status = rep.Status
		}
		s.calls = append(s.calls, Call{Run: runID, Kind: kind, Method: r.Method, ContentType: r.Header.Get("Content-Type"),
			Status: status, Messages: rep.Messages, URL: rep.URL, At: time.Now()})
		s.log.Info("swarm callback", "run", runID, "kind", kind)
		writeJSON(w, http.StatusOK, map[string]any{"error": nil, "messages": []any{}, "data": map[string]any{"testruns": []any{
			map[string]any{"id": runID, "version": run.Version, "status": status, "messages": rep.Messages, "url": rep.URL}}}})
	}
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
// {placeholder} inside the template is replaced by its value JSON-escaped
// (so a placeholder must sit inside a JSON string to yield valid JSON), and
// the result must be valid JSON.
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

// Outcome is how a run's request ended, as Swarm judges it: a non-2xx
// answer or no answer fails the run with the status line; a 2xx leaves it
// running until a callback arrives.
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
	timeout := def.Timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	resp, err := (&http.Client{Timeout: timeout}).Do(req)
	if err != nil {
		return Outcome{Failed: true, StatusLine: err.Error()}, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return Outcome{Status: resp.StatusCode, StatusLine: resp.Status, Body: b, Failed: resp.StatusCode/100 != 2}, nil
}
