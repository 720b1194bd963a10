package swarm

// Review comments in P4 Code Review (Helix Swarm), as a delivery channel
// needs them (docs/swarm-comments.md): send (Create), lookup (List, Marked
// over every page) and classification (failure classes; MaybeCreated tells
// a create that may have landed). Swarm's create has no idempotency key, so
// every comment the service posts ends with a marker derived from its
// delivery identity, and a lost answer is settled by finding that marker,
// never by posting again blind.

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/criticizer/criticizer/shared/failure"
)

// Task states: a plain comment, or a task open, then addressed, then verified.
const (
	TaskComment   = "comment"
	TaskOpen      = "open"
	TaskAddressed = "addressed"
	TaskVerified  = "verified"
)

// Kinds of comment the service posts, each with its own identity.
const (
	KindFinding  = "finding"  // one per (review, finding fingerprint), whatever the version
	KindSummary  = "summary"  // one per (review, review version)
	KindResolved = "resolved" // the note on a resolved plain comment, one per (review, fingerprint)
)

// CommentKey is the delivery identity of a comment the service posts: "this
// review has been told this", once.
type CommentKey struct {
	Review int64
	Kind   string
	ID     string // the finding fingerprint, or "v<version>" for a summary
}

// FindingKey is a finding's comment: commented once per review, whatever the version.
func FindingKey(review int64, fingerprint string) CommentKey {
	return CommentKey{Review: review, Kind: KindFinding, ID: fingerprint}
}

// SummaryKey is a review version's summary comment.
func SummaryKey(review int64, version int) CommentKey {
	return CommentKey{Review: review, Kind: KindSummary, ID: "v" + strconv.Itoa(version)}
}

// ResolvedKey is the note that a plain finding comment was resolved.
func ResolvedKey(review int64, fingerprint string) CommentKey {
	return CommentKey{Review: review, Kind: KindResolved, ID: fingerprint}
}

// String is the canonical form "reviews/<id>/<kind>/<id>".
func (k CommentKey) String() string {
	return reviewTopic(k.Review) + "/" + k.Kind + "/" + k.ID
}

// MarkerScheme versions the marker's hash input: changing it makes every
// posted comment unrecognisable, and its finding commented again.
const MarkerScheme = "criticizer.swarm.comment.v1"

// Marker is a posted comment's token: "criticizer:" and the first 128 bits
// of its key's SHA-256, in hex; nothing about the finding or the code.
type Marker string

// Marker returns k's marker.
func (k CommentKey) Marker() Marker {
	sum := sha256.Sum256([]byte(MarkerScheme + "\x00" + k.String()))
	return Marker("criticizer:" + hex.EncodeToString(sum[:16]))
}

// markerLine is a Markdown link reference definition: Swarm's Markdown (GFM
// or Parsedown) shows nothing for it, where safe mode would print an HTML
// comment as text; without Markdown it is one short line.
var markerLine = regexp.MustCompile(`^\[//\]: # \((criticizer:[0-9a-f]{32})\)$`)

// Line is the marker as the last line of a comment body.
func (m Marker) Line() string { return "[//]: # (" + string(m) + ")" }

// Sign returns body with m as its last line.
func (m Marker) Sign(body string) string {
	return strings.TrimRight(body, " \t\r\n") + "\n\n" + m.Line()
}

// MarkerOf returns the marker on body's last non-blank line, if any: a
// marker quoted inside a body is not the comment's identity.
func MarkerOf(body string) (Marker, bool) {
	body = strings.TrimRight(body, " \t\r\n")
	last := body[strings.LastIndexByte(body, '\n')+1:]
	m := markerLine.FindStringSubmatch(strings.TrimSpace(last))
	if m == nil {
		return "", false
	}
	return Marker(m[1]), true
}

// Comment is a review comment as the comments API lists it.
type Comment struct {
	ID        int64
	Topic     string // reviews/{id}
	Body      string
	User      string
	Time      int64 // Unix seconds
	Updated   int64
	TaskState string
	Flags     []string
	Context   *CommentContext // nil: a comment on the whole review
	// Likes are the logins that liked the comment (reference: "Outbound
	// webhooks", reactions readable without webhooks).
	Likes []string
	// ReplyTo is the comment this one answers, from context.comment
	// (*unverified* field name, per a third-party capture); 0 when none,
	// which readers must tolerate (package outcome).
	ReplyTo int64
}

// CommentContext anchors an inline comment to a file and line of a version.
type CommentContext struct {
	File      string // depot path
	LeftLine  int    // line in the old revision; 0: none
	RightLine int    // line in the new revision; 0: none
	Content   []string
	Version   int // review version; 0: none
}

// NewComment is a comment to create.
type NewComment struct {
	Review int64
	Body   string // Markdown; the marker is appended
	Marker Marker // required: how a lost answer is settled
	Task   bool   // created as an open task rather than a plain comment
	// Silent asks Swarm to send no notification; Delay lets it batch them.
	Silent, Delay bool
	Flags         []string
	Context       *CommentContext // nil: a comment on the whole review
	// Unanchored is the body posted instead, on the whole review under the
	// same marker, when Swarm refuses Context; empty: the refusal stands.
	Unanchored string
}

// ErrContextRefused marks a create Swarm refused (400, nothing stored) for
// its context: the file is not in the version's change, or there is no such
// version (reference: "Review comments"). No reply text is kept.
var ErrContextRefused = errors.New("the comment's context was refused")

// The reasons a context is refused.
var (
	ErrVersionNotFound = fmt.Errorf("the review has no such version: %w", ErrContextRefused)
	ErrNotInVersion    = fmt.Errorf("the file or line is not in the version's change: %w", ErrContextRefused)
)

// ErrMaybeCreated marks a failed create Swarm may have carried out (answer
// lost, a 5xx, unreadable): settle it by marker before any new attempt.
var ErrMaybeCreated = errors.New("the comment may have been created")

// MaybeCreated reports whether err is a create that may have landed.
func MaybeCreated(err error) bool { return errors.Is(err, ErrMaybeCreated) }

const (
	pageSize = 100 // the list page asked for: Swarm's default and the most it documents
	// maxPages bounds a listing (100,000 comments): a lookup that cannot
	// read the review whole must not answer "not there".
	maxPages  = 1000
	maxAnswer = 16 << 20 // one answer's size
)

// Create posts a comment (POST /api/v9/comments, form fields) and returns
// it as stored. A failure wraps ErrMaybeCreated when it may have happened.
func (c *Client) Create(ctx context.Context, n NewComment) (Comment, error) {
	if !markerLine.MatchString(n.Marker.Line()) {
		return Comment{}, failure.Errorf(failure.InternalBug, "swarm comment on review %d: no marker", n.Review)
	}
	if strings.TrimSpace(n.Body) == "" {
		return Comment{}, failure.Errorf(failure.InternalBug, "swarm comment on review %d: empty body", n.Review)
	}
	f := url.Values{"topic": {reviewTopic(n.Review)}, "body": {n.Marker.Sign(n.Body)}, "taskState": {TaskComment}}
	if n.Task {
		f.Set("taskState", TaskOpen)
	}
	for k, on := range map[string]bool{"silenceNotification": n.Silent, "delayNotification": n.Delay} {
		if on {
			f.Set(k, "true")
		}
	}
	for _, fl := range n.Flags {
		f.Add("flags[]", fl)
	}
	if x := n.Context; x != nil {
		f.Set("context[file]", x.File)
		for k, v := range map[string]int{"leftLine": x.LeftLine, "rightLine": x.RightLine, "version": x.Version} {
			if v > 0 {
				f.Set("context["+k+"]", strconv.Itoa(v))
			}
		}
		for _, l := range x.Content {
			f.Add("context[content][]", l)
		}
	}
	var out struct {
		Comment *wireComment `json:"comment"`
	}
	what := fmt.Sprintf("swarm create comment on review %d", n.Review)
	_, err := c.api(ctx, http.MethodPost, "/api/v9/comments", nil, f, &out, what, true)
	if err == nil && (out.Comment == nil || out.Comment.ID <= 0) {
		// Swarm answered 2xx: the comment is most likely there.
		err = failure.Errorf(failure.SchemaInvalid, "%s: the answer has no comment id: %w", what, ErrMaybeCreated)
	}
	if err != nil {
		return Comment{}, err
	}
	return out.Comment.comment(), nil
}

// taskTransitions is Swarm's table of task-state changes; anything else,
// the current state included, is a 400 (reference: "Review comments").
var taskTransitions = map[string][]string{
	TaskComment:   {TaskOpen},
	TaskOpen:      {TaskAddressed, TaskComment},
	TaskAddressed: {TaskVerified, TaskOpen},
	TaskVerified:  {TaskOpen},
}

// ErrNoTransition marks a task change the table does not offer from the
// current state (someone moved it): nothing changed, nor will a retry.
var ErrNoTransition = errors.New("no such task-state transition in Swarm")

// SetTaskState moves comment id of review to state (PATCH
// /api/v9/comments/{id}), reading the current state first: already there
// is done (Swarm answers the same state with a 400), a move the table does
// not offer is ErrNoTransition, and a refused PATCH is read again, done if
// the state landed after all.
func (c *Client) SetTaskState(ctx context.Context, review, id int64, state string) (Comment, error) {
	if _, ok := taskTransitions[state]; !ok {
		return Comment{}, failure.Errorf(failure.InternalBug, "swarm comment %d: unknown task state %q", id, state)
	}
	cur, err := c.comment(ctx, review, id)
	if err != nil || cur.TaskState == state {
		return cur, err
	}
	if !slices.Contains(taskTransitions[cur.TaskState], state) {
		return cur, failure.Errorf(failure.PolicyRejected, "swarm comment %d is %s, not moved to %s: %w", id, cur.TaskState, state, ErrNoTransition)
	}
	var out struct {
		Comment *wireComment `json:"comment"`
	}
	what := fmt.Sprintf("swarm set task state of comment %d", id)
	_, err = c.api(ctx, http.MethodPatch, "/api/v9/comments/"+strconv.FormatInt(id, 10), nil, url.Values{"taskState": {state}}, &out, what, false)
	if err == nil && (out.Comment == nil || out.Comment.ID != id) {
		err = failure.Errorf(failure.SchemaInvalid, "%s: the answer has no comment", what)
	}
	if err != nil {
		// A 400 may be a concurrent move to the same state: look again.
		if now, rerr := c.comment(ctx, review, id); rerr == nil && now.TaskState == state {
			return now, nil
		}
		return Comment{}, err
	}
	return out.Comment.comment(), nil
}

// comment reads one comment of review by id from the listing (every page).
func (c *Client) comment(ctx context.Context, review, id int64) (Comment, error) {
	// Pages run oldest first: listed from just before its id.
	list, _, err := c.pages(ctx, review, id-1, id)
	if err != nil {
		return Comment{}, err
	}
	for _, cm := range list {
		if cm.ID == id {
			return cm, nil
		}
	}
	return Comment{}, failure.Errorf(failure.NotFound, "swarm comment %d is not on review %d", id, review)
}

// List returns every comment on a review, oldest first, reading page after
// page (GET /api/v11/comments/reviews/{id}, max and after=lastSeen) until
// Swarm has none left: a review is read whole, or the listing fails.
func (c *Client) List(ctx context.Context, review int64) ([]Comment, error) {
	list, _, err := c.pages(ctx, review, 0, 0)
	return list, err
}

// pages lists the comments with ids above from (0: all) and the login it
// listed as. Swarm numbers comments as it stores them and pages oldest
// first, after=<id> starting past that id (reference "Review comments"), so
// the comments stored since a comment existed are those listed after its
// id. until > 0 stops at the first page holding an id of at least until
// (then a page is one comment).
func (c *Client) pages(ctx context.Context, review, from, until int64) ([]Comment, string, error) {
	var out []Comment
	seen := map[int64]bool{}
	after := from
	user := ""
	for range maxPages {
		size := pageSize
		if until > 0 {
			size = 1
		}
		q := url.Values{"max": {strconv.Itoa(size)}}
		if after > 0 {
			q.Set("after", strconv.FormatInt(after, 10))
		}
		var page struct {
			Data *struct {
				Comments *wireCommentList `json:"comments"`
				LastSeen flexInt          `json:"lastSeen"`
			} `json:"data"`
		}
		what := fmt.Sprintf("swarm list comments of review %d", review)
		u, err := c.api(ctx, http.MethodGet, "/api/v11/comments/reviews/"+strconv.FormatInt(review, 10), q, nil, &page, what, false)
		if err != nil {
			return nil, "", err
		}
		if user != "" && u != user {
			// Rotated to another login mid-listing: "ours" would change.
			return nil, "", failure.Errorf(failure.Conflict, "%s: the login changed during the listing", what)
		}
		user = u
		// No data.comments is not an empty review (a second comment would follow).
		if page.Data == nil || page.Data.Comments == nil {
			return nil, "", failure.Errorf(failure.SchemaInvalid, "%s: the answer has no data.comments", what)
		}
		for _, w := range *page.Data.Comments {
			if !seen[w.ID] {
				seen[w.ID] = true
				out = append(out, w.comment())
			}
		}
		last := int64(page.Data.LastSeen)
		if last <= 0 || (until > 0 && slices.ContainsFunc(out, func(cm Comment) bool { return cm.ID >= until })) {
			slices.SortFunc(out, func(a, b Comment) int { return cmp.Compare(a.ID, b.ID) })
			return out, user, nil
		}
		if last == after {
			return nil, "", failure.Errorf(failure.SchemaInvalid, "%s: lastSeen %d does not move on", what, last)
		}
		after = last
	}
	return nil, "", failure.Errorf(failure.SchemaInvalid, "swarm list comments of review %d: more than %d pages", review, maxPages)
}

// Marked lists a review's comments (all pages) and returns those the
// service posted, by marker: each comment of the listing's login whose last
// line is a marker (a reviewer quoting ours is not ours); a marker held
// twice is the first comment's. One listing settles any number of
// uncertain creates.
func (c *Client) Marked(ctx context.Context, review int64) (map[Marker]Comment, error) {
	return c.MarkedAfter(ctx, review, 0)
}

// MarkedAfter is Marked over the comments stored after comment id after
// only: a create that began once that comment existed can only have made a
// comment with a higher id. A marker missing still means the whole listing
// was read (to a null lastSeen) without it.
func (c *Client) MarkedAfter(ctx context.Context, review, after int64) (map[Marker]Comment, error) {
	list, user, err := c.pages(ctx, review, max(after, 0), 0)
	if err != nil {
		return nil, err
	}
	out := map[Marker]Comment{}
	for _, cm := range list {
		if m, ok := MarkerOf(cm.Body); ok && cm.User == user {
			if _, dup := out[m]; !dup {
				out[m] = cm
			}
		}
	}
	return out, nil
}

// FindByMarker looks for the service's comment carrying m on a review:
// found is false only when the whole listing holds none.
func (c *Client) FindByMarker(ctx context.Context, review int64, m Marker) (cm Comment, found bool, err error) {
	marked, err := c.Marked(ctx, review)
	cm, found = marked[m]
	return cm, found, err
}

// api makes one Swarm API call, decoding a 2xx answer into out, and
// returns the login it was made as. A refused login is retried once with
// fresh credentials (a rotated ticket). create marks failures that may have
// been carried out with ErrMaybeCreated. Only statuses reach the error.
func (c *Client) api(ctx context.Context, method, path string, q, form url.Values, out any, what string, create bool) (string, error) {
	user, err := c.apiOnce(ctx, method, path, q, form, out, what, create, false)
	if failure.Classify(err) == failure.AuthDenied && !MaybeCreated(err) {
		user, err = c.apiOnce(ctx, method, path, q, form, out, what, create, true)
	}
	return user, err
}

func (c *Client) apiOnce(ctx context.Context, method, path string, q, form url.Values, out any, what string, create, fresh bool) (string, error) {
	creds, err := c.Credentials(ctx, fresh)
	if err != nil {
		return "", err
	}
	u := strings.TrimSuffix(c.BaseURL, "/") + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return "", failure.Wrap(failure.InternalBug, err)
	}
	req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(creds.User+":"+creds.Ticket)))
	req.Header.Set("Accept", "application/json")
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := c.http().Do(req)
	if err != nil {
		if notSent(err) {
			return "", failure.Errorf(failure.NetworkTimeout, "%s: %w", what, err)
		}
		// Sent, and the answer lost: reset, closed, timed out.
		return "", failure.Errorf(failure.NetworkTimeout, "%s: %w", what, maybe(create, err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return "", failure.Errorf(failure.NetworkTimeout, "%s: reading the answer: %w", what, maybe(create, err))
	}
	var refusal error // a create's context refused: nothing stored
	if create && resp.StatusCode == http.StatusBadRequest {
		refusal = contextRefusal(b)
	}
	switch {
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusRequestTimeout:
		// Swarm (or a proxy in front of it) may have done the work first.
		return "", failure.Upstream(resp.StatusCode, retryAfter(resp), maybe(create, fmt.Errorf("%s: HTTP %d", what, resp.StatusCode)))
	case create && resp.StatusCode == http.StatusNotFound:
		// A create can answer 404 with the comment stored (helix-swarm
		// issue #2; reference: "Review comments"): settled by lookup, whose
		// listing fails with its own 404 if the review is gone.
		return "", &failure.Error{Class: failure.Conflict, UpstreamCode: resp.StatusCode, Err: maybe(create, fmt.Errorf("%s: HTTP %d", what, resp.StatusCode))}
	case refusal != nil:
		return "", failure.Upstream(resp.StatusCode, 0, fmt.Errorf("%s: HTTP %d: %w", what, resp.StatusCode, refusal))
	case resp.StatusCode/100 != 2:
		// 429, 401/403 (login, or not the author), 404, 400: refused before
		// any work.
		return "", failure.Upstream(resp.StatusCode, retryAfter(resp), fmt.Errorf("%s: HTTP %d", what, resp.StatusCode))
	case len(b) > maxAnswer:
		return "", failure.Errorf(failure.SchemaInvalid, "%s: answer over %d bytes: %w", what, maxAnswer, maybe(create, errors.New("unread")))
	}
	// Some releases answer a refused login with 200 and {"error": "Unauthorized"}.
	var env struct {
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return "", failure.Errorf(failure.SchemaInvalid, "%s: answer is not JSON: %w", what, maybe(create, errors.New("unreadable")))
	}
	if e := bytes.TrimSpace(env.Error); len(e) > 0 && !bytes.Equal(e, []byte("null")) {
		if bytes.EqualFold(e, []byte(`"Unauthorized"`)) {
			return "", failure.Errorf(failure.AuthDenied, "%s: HTTP %d with error Unauthorized", what, resp.StatusCode)
		}
		return "", failure.Errorf(failure.SchemaInvalid, "%s: HTTP %d with an error: %w", what, resp.StatusCode, maybe(create, errors.New("error set")))
	}
	if err := json.Unmarshal(b, out); err != nil {
		return "", failure.Errorf(failure.SchemaInvalid, "%s: answer does not fit: %w", what, maybe(create, errors.New("unreadable")))
	}
	return creds.User, nil
}

// maybe marks a create's failure as one that may have created the comment.
func maybe(create bool, err error) error {
	if create {
		return fmt.Errorf("%w (%w)", err, ErrMaybeCreated)
	}
	return err
}

// contextRefusal is why a create's 400 answer b refuses its context, nil
// for any other 400. The reference names the messages; their keying by
// form field in "details" is the stand-in's reading, *unverified*: a key
// "context" or "context[…]", or either message anywhere, is accepted.
func contextRefusal(b []byte) error {
	var a struct {
		Details map[string]json.RawMessage `json:"details"`
	}
	_ = json.Unmarshal(b, &a) // an unreadable answer is matched by its messages alone
	version := bytes.Contains(b, []byte("Specified version was not found"))
	file := bytes.Contains(b, []byte("Provided context could not be filtered"))
	for k := range a.Details {
		switch {
		case k == "context[version]":
			version = true
		case k == "context" || strings.HasPrefix(k, "context["):
			file = true
		}
	}
	switch {
	case version:
		return ErrVersionNotFound
	case file:
		return ErrNotInVersion
	}
	return nil
}

// notSent reports whether a transport error came before any connection.
func notSent(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}

func reviewTopic(id int64) string { return "reviews/" + strconv.FormatInt(id, 10) }

// flexInt is a number Swarm may send as a number, a numeric string or null.
type flexInt int64

func (n *flexInt) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(bytes.TrimSpace(b)), `"`)
	if s == "" || s == "null" {
		*n = 0
		return nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("not an integer")
	}
	*n = flexInt(v)
	return nil
}

// wireComment is a comment as the API sends it: id, topic, body, user,
// time, updated, taskState, flags, likes, context (reference, "Review
// comments"; Swarm 2022.1 module/Comments/src/Model/Comment.php, public
// copy github.com/dfrees/swarm). Numbers may arrive as strings (flexInt).
type wireComment struct {
	ID        int64       `json:"id"`
	Topic     string      `json:"topic"`
	Body      string      `json:"body"`
	User      string      `json:"user"`
	Time      flexInt     `json:"time"`
	Updated   flexInt     `json:"updated"`
	TaskState string      `json:"taskState"`
	Flags     []string    `json:"flags"`
	Likes     likeList    `json:"likes"`
	Context   wireContext `json:"context"`
}

func (w wireComment) comment() Comment {
	return Comment{ID: w.ID, Topic: w.Topic, Body: w.Body, User: w.User, Time: int64(w.Time), Updated: int64(w.Updated),
		TaskState: w.TaskState, Flags: w.Flags, Context: w.Context.ctx, Likes: w.Likes, ReplyTo: w.Context.replyTo}
}

// likeList is likes as logins, from a list or an object keyed by login
// (PHP's associative array); anything else is none: never a failed listing.
type likeList []string

func (l *likeList) UnmarshalJSON(b []byte) error {
	var a []string
	if json.Unmarshal(b, &a) == nil {
		*l = a
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) == nil {
		for k := range m {
			*l = append(*l, k)
		}
		slices.Sort(*l)
	}
	return nil
}

// wireContext is [] (PHP's empty array) for a comment on the whole review,
// an object for an inline one.
type wireContext struct {
	ctx     *CommentContext
	replyTo int64 // context.comment (unverified field name)
}

func (w *wireContext) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return nil // [], null
	}
	var x struct {
		File      string          `json:"file"`
		LeftLine  flexInt         `json:"leftLine"`
		RightLine flexInt         `json:"rightLine"`
		Content   json.RawMessage `json:"content"`
		Version   flexInt         `json:"version"`
	}
	if err := json.Unmarshal(b, &x); err != nil {
		return err
	}
	var reply struct {
		Comment flexInt `json:"comment"`
	}
	if json.Unmarshal(b, &reply) == nil {
		w.replyTo = int64(reply.Comment)
	}
	if x.File == "" && x.LeftLine == 0 && x.RightLine == 0 && x.Version == 0 {
		return nil
	}
	ctx := &CommentContext{File: x.File, LeftLine: int(x.LeftLine), RightLine: int(x.RightLine), Version: int(x.Version)}
	// content is a list of lines; tolerate a single string.
	if json.Unmarshal(x.Content, &ctx.Content) != nil {
		var one string
		if json.Unmarshal(x.Content, &one) == nil && one != "" {
			ctx.Content = []string{one}
		}
	}
	w.ctx = ctx
	return nil
}

// wireCommentList is v11's array of comments; v9 keys them by id in an
// object (or sends [] when there are none): both are read.
type wireCommentList []wireComment

func (l *wireCommentList) UnmarshalJSON(b []byte) error {
	if b = bytes.TrimSpace(b); len(b) > 0 && b[0] == '{' {
		var m map[string]wireComment
		err := json.Unmarshal(b, &m)
		for _, c := range m {
			*l = append(*l, c)
		}
		return err
	}
	return json.Unmarshal(b, (*[]wireComment)(l))
}
