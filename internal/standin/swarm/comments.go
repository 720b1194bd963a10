package swarm

// Review comments, as docs/reference/swarm.md ("Review comments", checked
// against Swarm 2022.1's source) describes the API: list (v11 and v9 shapes,
// max/after/lastSeen pagination, oldest first), create (v9 form fields, not
// idempotent), edit (body by the author, task state by anyone), with fault
// injection and a record of every request.

import (
	"cmp"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/criticizer/criticizer/internal/faultproxy"
)

// Task states of a comment: a plain comment, or a task.
const (
	TaskComment   = "comment"
	TaskOpen      = "open"
	TaskAddressed = "addressed"
	TaskVerified  = "verified"
)

// taskTransitions is Swarm's table of task-state changes; anything else,
// the current state included, is a 400 (reference: "Review comments",
// task-state transitions; Swarm 2022.1 Comments\Model\Comment).
// verified:archive also archives.
var taskTransitions = map[string][]string{
	TaskComment:   {TaskOpen},
	TaskOpen:      {TaskAddressed, TaskComment},
	TaskAddressed: {TaskVerified, TaskVerified + ":archive", TaskOpen},
	TaskVerified:  {TaskOpen},
}

// defaultMax is the page size when a list names no max.
const defaultMax = 100

// Comment is one comment as Swarm stores it.
type Comment struct {
	ID        int64
	Topic     string // reviews/{id}
	Body      string
	User      string // the login that made it
	Time      int64  // Unix seconds
	Updated   int64
	Edited    int64 // 0: never edited (null)
	TaskState string
	Flags     []string
	Likes     []string        // the users who liked
	Context   *CommentContext // nil: a comment on the whole review (context [])
	ReplyTo   int64           // the comment this one answers (context.comment); 0: none
	// What the create asked of notifications; not part of the API's answer.
	Silenced, Delayed bool
}

// CommentContext anchors an inline comment.
type CommentContext struct {
	File      string // depot path
	LeftLine  int    // 0: null
	RightLine int    // 0: null
	Content   []string
	Version   int // the review version; 0: absent
}

// wire is the comment as the API shows it; context [] (PHP's empty array)
// on the whole review.
func (c Comment) wire() map[string]any {
	m := map[string]any{}
	if x := c.Context; x != nil {
		m = map[string]any{"file": x.File, "leftLine": orNull(x.LeftLine), "rightLine": orNull(x.RightLine), "content": orEmpty(x.Content)}
		if x.Version > 0 {
			m["version"] = x.Version
		}
	}
	if c.ReplyTo > 0 {
		m["comment"] = c.ReplyTo
	}
	return map[string]any{"id": c.ID, "topic": c.Topic, "body": c.Body, "user": c.User, "time": c.Time, "updated": c.Updated,
		"edited": orNull(c.Edited), "taskState": c.TaskState, "flags": orEmpty(c.Flags), "likes": orEmpty(c.Likes), "attachments": []any{}, "context": orPHPArray(m)}
}

// orPHPArray is m, or [] (PHP's empty array) for an empty m.
func orPHPArray[M ~map[K]V, K comparable, V any](m M) any {
	if len(m) == 0 {
		return []any{}
	}
	return m
}

// orNull is n, or null for 0.
func orNull[N int | int64](n N) any {
	if n == 0 {
		return nil
	}
	return n
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (c Comment) clone() Comment {
	c.Flags, c.Likes = slices.Clone(c.Flags), slices.Clone(c.Likes)
	if c.Context != nil {
		x := *c.Context
		x.Content = slices.Clone(x.Content)
		c.Context = &x
	}
	return c
}

// Op names a comments API operation, for faults and the request record.
type Op string

const (
	OpListComments  Op = "comments.list"
	OpCreateComment Op = "comments.create"
	OpEditComment   Op = "comments.edit"
)

// Fault is what the next request of an operation gets instead of a normal
// answer.
type Fault struct {
	Status     int    // the status to answer (ignored with Drop)
	RetryAfter string // the Retry-After header sent with Status
	// AfterStore handles the request first (a create stores its comment),
	// then loses the answer: Swarm did the work and the caller cannot know.
	AfterStore bool
	Drop       bool // close the connection without any answer
	// Hold keeps the request this long first, whatever the caller does (a
	// PHP request runs on after the client gave up); alone, the request is
	// then handled normally: a create past the caller's timeout is stored late.
	Hold time.Duration
}

// String names the fault for reports, e.g. "lost-after-store", "429".
func (f Fault) String() string {
	var s string
	switch {
	case f.Drop && f.AfterStore:
		s = "lost-after-store"
	case f.Drop:
		s = "reset"
	case f.Status != 0 && f.AfterStore:
		s = strconv.Itoa(f.Status) + "-after-store"
	case f.Status != 0:
		s = strconv.Itoa(f.Status)
	}
	if f.Hold > 0 {
		return strings.TrimSuffix("held+"+s, "+")
	}
	return s
}

// normal: once its hold is over, f leaves the request to be answered as usual.
func (f Fault) normal() bool { return f.Status == 0 && !f.Drop }

// Request is one comments API request the stand-in received.
type Request struct {
	Op           Op
	Method, Path string
	Query, Form  url.Values
	User         string // the authenticated login; "" when refused
	Status       int    // the status answered; 0 when the connection was dropped
	Fault        string // the fault the request met (Fault.String); "" none
	Listed       int    // a list: how many comments its page held
	Remote       string // the caller's address
	At           time.Time
}

// AddLogin adds an API login besides Options' (a reviewer, say).
func (s *Server) AddLogin(user, ticket string) { set(s, s.logins, user, ticket) }

// login returns the user of r's HTTP Basic login, if it is one Swarm knows.
func (s *Server) login(r *http.Request) (string, bool) {
	user, ticket, ok := r.BasicAuth()
	if !ok || user == "" {
		return "", false
	}
	if user == s.opts.User && ticket == s.opts.Ticket {
		return user, true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, found := s.logins[user]
	return user, found && t == ticket
}

// InjectFault queues faults for the next requests of op, in order.
func (s *Server) InjectFault(op Op, faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[op] = append(s.faults[op], faults...)
}

// ClearFaults drops the faults not served yet and returns how many there were.
func (s *Server) ClearFaults() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, q := range s.faults {
		n += len(q)
	}
	s.faults = map[Op][]Fault{}
	return n
}

// OnFault calls fn with each request that meets a fault, once handled and
// before its answer is given or lost: what fn does is there before the
// caller can look.
func (s *Server) OnFault(fn func(Request)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onFault = fn
}

// Held returns the callers' addresses of the requests held now (Fault.Hold).
func (s *Server) Held() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for addr, n := range s.held {
		for range n {
			out = append(out, addr)
		}
	}
	slices.Sort(out)
	return out
}

// hold keeps a request for d, or until the server closes.
func (s *Server) hold(remote string, d time.Duration) {
	s.mu.Lock()
	s.held[remote]++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.held[remote]--; s.held[remote] <= 0 {
			delete(s.held, remote)
		}
		s.mu.Unlock()
	}()
	select {
	case <-time.After(d):
	case <-s.closing:
	}
}

// Requests returns the comments API requests received, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// AddComment stores c as if a user had posted it and returns it.
func (s *Server) AddComment(c Comment) Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.store(c.clone())
}

func (s *Server) store(c Comment) Comment {
	s.commentSeq++
	c.ID = s.commentSeq
	c.Time = cmp.Or(c.Time, time.Now().Unix())
	c.Updated = cmp.Or(c.Updated, c.Time)
	c.TaskState = cmp.Or(c.TaskState, TaskComment)
	s.comments[c.ID] = &c
	return c.clone()
}

// Comments returns the comments on a review, oldest first.
func (s *Server) Comments(review int64) []Comment {
	all, _ := s.page(reviewTopic(review), 0, math.MaxInt)
	return all
}

func reviewTopic(id int64) string { return "reviews/" + strconv.FormatInt(id, 10) }

// answer is a handler's result.
type answer struct {
	status int
	body   any
	listed int // a list: the comments on the page
}

// badRequest is a refused form: the reference's messages, their shape
// ("details" by field) *unverified*; the client matches a context refusal by
// its message anywhere (swarm.contextRefusal).
func badRequest(field, msg string) answer {
	return answer{status: http.StatusBadRequest, body: map[string]any{"error": "Bad Request", "details": map[string]string{field: msg}}}
}

func notFound(msg string) answer {
	return answer{status: http.StatusNotFound, body: errorBody(http.StatusNotFound, msg)}
}

// commentsAPI wraps a comments API handler with the login check, faults and
// the request record.
func (s *Server) commentsAPI(op Op, h func(r *http.Request, user string) answer) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm() // the body of a POST or PATCH form; a bad one leaves Form empty
		rec := Request{Op: op, Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Form: r.PostForm, Remote: r.RemoteAddr, At: time.Now()}
		user, ok := s.login(r)
		if !ok {
			rec.Status = http.StatusUnauthorized
			s.record(rec)
			unauthorized(w, r)
			return
		}
		rec.User = user
		s.mu.Lock()
		var f *Fault
		if q := s.faults[op]; len(q) > 0 {
			f, s.faults[op] = &q[0], q[1:]
		}
		onFault := s.onFault
		s.mu.Unlock()
		if f != nil && f.Hold > 0 {
			s.hold(r.RemoteAddr, f.Hold)
		}
		var a answer
		if f == nil || f.AfterStore || f.normal() {
			a = h(r, user)
			if body, ok := a.body.(map[string]any); ok && a.status >= 400 {
				a.body = errorCode(r, a.status, body)
			}
		}
		rec.Status, rec.Listed = a.status, a.listed
		if f != nil {
			rec.Fault = f.String()
			if !f.normal() {
				rec.Status = f.Status
				if f.Drop {
					rec.Status = 0
				}
			}
		}
		s.record(rec) // first: once the connection drops, the caller may look
		if f != nil {
			s.log.Info("swarm comments fault", "op", op, "fault", rec.Fault, "status", rec.Status)
			if onFault != nil {
				onFault(rec)
			}
			if !f.normal() {
				s.answerFault(w, r, *f)
				return
			}
		}
		writeJSON(w, a.status, a.body) // with a fault, to a caller that may be gone
	}
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r)
}

// answerFault answers f: its status, or no answer at all.
func (s *Server) answerFault(w http.ResponseWriter, r *http.Request, f Fault) {
	if f.Drop {
		faultproxy.Reset(w) // a reset, as a crashed or cut-off server gives
		return
	}
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	apiError(w, r, f.Status, http.StatusText(f.Status))
}

// listComments answers GET /api/v11/comments/reviews/{id} and
// /api/v9/comments?topic=….
func (s *Server) listComments(v11 bool) func(r *http.Request, user string) answer {
	return func(r *http.Request, _ string) answer {
		q := r.URL.Query()
		topic := q.Get("topic")
		if v11 {
			id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
			s.mu.Lock()
			_, found := s.revs[id]
			s.mu.Unlock()
			if err != nil || !found {
				return notFound("Review does not exist")
			}
			topic = reviewTopic(id)
		}
		var bad *answer
		num := func(field, msg string, def int64) int64 {
			v := q.Get(field)
			if v == "" || bad != nil {
				return def
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 1 {
				a := badRequest(field, msg)
				bad = &a
			}
			return n
		}
		limit, after, version := num("max", "must be a positive integer", defaultMax), num("after", "must be a comment id", 0), 0
		if !v11 {
			version = int(num("context[version]", "must be a review version", 0))
		}
		if bad != nil {
			return *bad
		}
		page, lastSeen := s.page(topic, after, int(limit))
		if version > 0 {
			// Filtered after paging: "max does not guarantee that max
			// comments are returned".
			page = slices.DeleteFunc(page, func(c Comment) bool { return c.Context == nil || c.Context.Version != version })
		}
		last := orNull(lastSeen)
		if v11 {
			list := make([]any, 0, len(page))
			for _, c := range page {
				list = append(list, c.wire())
			}
			return answer{status: http.StatusOK, body: map[string]any{"error": nil, "messages": []any{}, "data": map[string]any{"comments": list, "lastSeen": last}}, listed: len(page)}
		}
		// v9 keys comments by id; an empty set is PHP's empty array, [].
		set := map[string]any{}
		for _, c := range page {
			set[strconv.FormatInt(c.ID, 10)] = c.wire()
		}
		return answer{status: http.StatusOK, body: map[string]any{"topic": topic, "comments": orPHPArray(set), "lastSeen": last}, listed: len(page)}
	}
}

// page returns up to limit comments of topic ("" all) after the id after,
// ids ascending (the code's order, whatever the v11 docs say; reference:
// "Review comments", pagination), and the last one's id (0: none).
func (s *Server) page(topic string, after int64, limit int) ([]Comment, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var all []Comment
	for _, c := range s.comments {
		if (topic == "" || c.Topic == topic) && c.ID > after {
			all = append(all, c.clone())
		}
	}
	slices.SortFunc(all, func(a, b Comment) int { return cmp.Compare(a.ID, b.ID) })
	if len(all) > limit {
		all = all[:limit]
	}
	if len(all) == 0 {
		return nil, 0
	}
	return all, all[len(all)-1].ID
}

// truthy: silenceNotification and delayNotification need the exact "true";
// silence implies delay (reference: "Review comments").
func truthy(v string) bool { return v == "true" }

// createComment answers POST /api/v9/comments. Every accepted request makes
// a new comment: Swarm has no idempotency key.
func (s *Server) createComment(r *http.Request, user string) answer {
	f := r.PostForm
	topic := strings.TrimSpace(f.Get("topic"))
	if topic == "" {
		return badRequest("topic", "Value is required and can't be empty")
	}
	id, ok := strings.CutPrefix(topic, "reviews/")
	review, err := strconv.ParseInt(id, 10, 64)
	if !ok || err != nil {
		return badRequest("topic", "The stand-in knows review topics only (reviews/{id})")
	}
	s.mu.Lock()
	rev, found := s.revs[review]
	s.mu.Unlock()
	if !found {
		return notFound("Review does not exist")
	}
	body := f.Get("body")
	if strings.TrimSpace(body) == "" {
		return badRequest("body", "Value is required and can't be empty")
	}
	state := f.Get("taskState")
	switch state {
	case "":
		state = TaskComment
	case TaskComment, TaskOpen:
	default:
		return badRequest("taskState", "A new comment is a comment or an open task")
	}
	ctx, a := commentContext(f, s.withFiles(rev))
	if a != nil {
		return *a
	}
	now := time.Now().Unix()
	s.mu.Lock()
	c := s.store(Comment{Topic: topic, Body: body, User: user, Time: now, Updated: now, TaskState: state, Flags: f["flags[]"],
		Context: ctx, Silenced: truthy(f.Get("silenceNotification")),
		Delayed: truthy(f.Get("delayNotification")) || truthy(f.Get("silenceNotification"))})
	s.applyCallouts(review, body) // CommentListener, on create (callouts.go)
	s.commented(topic, user)
	s.mu.Unlock()
	s.log.Info("swarm comment created", "id", c.ID, "topic", topic, "user", user)
	return answer{status: http.StatusOK, body: map[string]any{"comment": c.wire()}}
}

// commentContext reads the context[…] fields (nil: none), an inline
// comment's version defaulting to the head. A version the review lacks, or
// a file its change does not hold (where known), is a 400
// (docs/reference/swarm.md, "Review comments": "Specified version was not
// found", "Provided context could not be filtered").
func commentContext(f url.Values, rev Review) (*CommentContext, *answer) {
	head := headVersion(rev)
	var ctx CommentContext
	given := false
	bad := func(field, msg string) (*CommentContext, *answer) {
		a := badRequest(field, msg)
		return nil, &a
	}
	for field, dst := range map[string]*int{"context[leftLine]": &ctx.LeftLine, "context[rightLine]": &ctx.RightLine, "context[version]": &ctx.Version} {
		if v := strings.TrimSpace(f.Get(field)); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return bad(field, "must be a positive integer")
			}
			*dst, given = n, true
		}
	}
	ctx.File = strings.TrimSpace(f.Get("context[file]"))
	ctx.Content = append(f["context[content][]"], f["context[content]"]...)
	if ctx.File != "" || len(ctx.Content) > 0 {
		given = true
	}
	if !given {
		return nil, nil
	}
	if ctx.File == "" && (ctx.LeftLine > 0 || ctx.RightLine > 0 || len(ctx.Content) > 0) {
		return bad("context[file]", "A comment on a line names its file")
	}
	if ctx.File != "" && !strings.HasPrefix(ctx.File, "//") {
		return bad("context[file]", "must be a depot path")
	}
	if ctx.File != "" && ctx.Version == 0 {
		ctx.Version = head
	}
	if ctx.Version > head {
		return bad("context[version]", "Specified version was not found")
	}
	if files := versionFiles(rev, ctx.Version); ctx.File != "" && files != nil && !slices.Contains(files, ctx.File) {
		return bad("context[file]", "Provided context could not be filtered")
	}
	return &ctx, nil
}

// editComment answers PATCH /api/v9/comments/{id}: body and flags by the
// author only, the task state by anyone along taskTransitions (reference:
// "Review comments").
func (s *Server) editComment(r *http.Request, user string) answer {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	f := r.PostForm
	s.mu.Lock()
	defer s.mu.Unlock()
	c, found := s.comments[id]
	if err != nil || !found {
		return notFound("Comment does not exist")
	}
	_, body := f["body"]
	_, flags := f["flags[]"]
	if c.User != user && (body || flags) {
		return answer{status: http.StatusForbidden, body: map[string]any{"error": "Forbidden", "messages": []any{map[string]string{"code": "403", "text": "Only the author can edit this comment"}}}}
	}
	next := *c
	if st, ok := f["taskState"]; ok {
		to := strings.TrimSpace(st[0])
		if !slices.Contains(taskTransitions[c.TaskState], to) {
			return badRequest("taskState", "Invalid task state transition specified. Valid transitions are: "+strings.Join(taskTransitions[c.TaskState], ", "))
		}
		var archive bool
		next.TaskState, archive = strings.CutSuffix(to, ":archive")
		if archive && !slices.Contains(next.Flags, ArchivedFlag) { // the flag *unverified*
			next.Flags = append(slices.Clone(next.Flags), ArchivedFlag)
		}
	}
	if b, ok := f["body"]; ok {
		if strings.TrimSpace(b[0]) == "" {
			return badRequest("body", "Value is required and can't be empty")
		}
		if b[0] != c.Body {
			next.Body, next.Edited = b[0], time.Now().Unix()
		}
	}
	if fl, ok := f["flags[]"]; ok {
		next.Flags = slices.Clone(fl)
	}
	next.Updated = time.Now().Unix()
	changed := next.Body != c.Body || next.TaskState != c.TaskState || !slices.Equal(next.Flags, c.Flags)
	*c = next
	if changed { // CommentListener runs on every change but none (callouts.go)
		if review, err := strconv.ParseInt(strings.TrimPrefix(c.Topic, "reviews/"), 10, 64); err == nil {
			s.applyCallouts(review, c.Body)
		}
	}
	return answer{status: http.StatusOK, body: map[string]any{"comment": c.clone().wire()}}
}
