// Package swarm speaks to Helix Swarm: its reviews API (who authored a
// review: the archive change Swarm hands a test run is owned by Swarm's
// service user, not by the author) and the callback URLs of a workflow test
// run ({update}, {pass}, {fail}), through which Criticizer reports a review's
// progress and outcome (Reporter), review comments and versions, and the
// Swarm settings each function reads (Settings) with the review links built
// from them. What Swarm sends us is parsed by shared/webhook; the run is kept
// with the job (job.SwarmRun). How Swarm behaves: docs/reference/swarm.md.
package swarm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/secrets"
)

// Statuses Swarm substitutes for {status}. The guide calls a submitted
// review "committed"; the code sends "submitted". Both are accepted.
const (
	StatusShelved   = "shelved"
	StatusSubmitted = "submitted"
	statusCommitted = "committed"
)

// Shelved maps a {status} value to the describe mode: a shelved review is
// fetched from the shelf of its pending archive change, a submitted one as a
// submitted change. ok is false for any other value.
func Shelved(status string) (shelved, ok bool) {
	switch strings.ToLower(strings.TrimSpace(status)) {
	case StatusShelved:
		return true, true
	case StatusSubmitted, statusCommitted:
		return false, true
	}
	return false, false
}

// Credentials are a Swarm API login: a Perforce user and its ticket (or
// password), sent as HTTP Basic authentication as Swarm's API expects.
type Credentials struct {
	User   string `json:"user"`
	Ticket string `json:"ticket"`
}

// ParseCredentials reads the Swarm API secret: JSON {"user": …, "ticket": …}.
func ParseCredentials(secret string) (Credentials, error) {
	var c Credentials
	if err := json.Unmarshal([]byte(secret), &c); err != nil || c.User == "" || c.Ticket == "" {
		return Credentials{}, failure.Errorf(failure.InternalBug, "Swarm API secret: want JSON with user and ticket")
	}
	return c, nil
}

// Client calls Swarm's API.
type Client struct {
	BaseURL string // e.g. https://swarm.example.com (no /api suffix)
	// Credentials returns the current API login; fresh asks to bypass any
	// cache (after a 401, in case the ticket was rotated).
	Credentials func(ctx context.Context, fresh bool) (Credentials, error)
	HTTP        *http.Client // default: 10 s timeout
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return &http.Client{Timeout: 10 * time.Second}
}

// Review is what the service reads of a Swarm review: who wrote it, who
// takes part, and its versions with the changes that hold them.
type Review struct {
	ID     int64
	Author string
	// Participants are the users Swarm lists as taking part (the author,
	// reviewers, required reviewers, users who commented or voted), sorted;
	// Groups the groups among them (listed as swarm-group-<name>), by name.
	Participants, Groups []string
	// Projects are the project branches the review touches, by project id
	// (the moderators of those branches may decide on it: Moderators).
	Projects map[string][]string
	Versions []ReviewVersion
	// Changes are the review's changes as Swarm lists them (changes and
	// commits), beside the versions' own.
	Changes []int64
}

// HasChange reports whether change holds one of the review's versions:
// a version's change or archive change, or one of its changes or commits.
func (r Review) HasChange(change int64) bool {
	for _, v := range r.Versions {
		if v.Change == change || v.ArchiveChange == change {
			return true
		}
	}
	return slices.Contains(r.Changes, change)
}

// GetReview reads review id: GET /api/v9/reviews/{id}, which every
// supported release serves (v11's route exists only from Swarm 2022.1 on;
// reference: "Review comments", versions). It reads v9's {"review": {…}}
// and v11's {"data": {"reviews": [{…}]}} alike. A refused login is retried
// once with fresh credentials; no reply text reaches the error.
func (c *Client) GetReview(ctx context.Context, id int64) (Review, error) {
	var doc struct {
		Data *struct {
			Reviews []wireReview `json:"reviews"`
		} `json:"data"`
		Review *wireReview `json:"review"`
	}
	what := fmt.Sprintf("swarm review %d", id)
	if _, err := c.api(ctx, http.MethodGet, "/api/v9/reviews/"+strconv.FormatInt(id, 10), nil, nil, &doc, what, false); err != nil {
		return Review{}, err
	}
	w := doc.Review
	if w == nil && doc.Data != nil && len(doc.Data.Reviews) > 0 {
		w = &doc.Data.Reviews[0]
	}
	if w == nil || strings.TrimSpace(w.Author) == "" {
		return Review{}, failure.Errorf(failure.SchemaInvalid, "%s: no author in the answer", what)
	}
	r := Review{ID: id, Author: strings.TrimSpace(w.Author), Projects: w.Projects}
	r.Participants, r.Groups = w.Participants.split(GroupPrefix)
	for _, n := range append(w.Changes, w.Commits...) {
		r.Changes = append(r.Changes, int64(n))
	}
	for i, v := range w.Versions {
		rv := ReviewVersion{Number: i + 1, Change: int64(v.Change), ArchiveChange: int64(v.ArchiveChange), User: v.User,
			Time: int64(v.Time), Pending: bool(v.Pending), Difference: bool(v.Difference)}
		if rv.Shelf() <= 0 {
			return Review{}, failure.Errorf(failure.SchemaInvalid, "%s: version %d names no change", what, rv.Number)
		}
		r.Versions = append(r.Versions, rv)
	}
	return r, nil
}

// wireReview is the reviews API's review. Sources: author (reference,
// "review's author … field author"), versions and their fields
// (reference, "Review versions": Swarm 2022.1 Review::normalizeVersions,
// pending stored as 0/1, hence flexBool/flexInt), participants keyed by
// user (help.perforce.com reviews endpoint, Swarm 2024.1; a group keyed
// swarm-group-<name>, Groups\Model\Config::KEY_PREFIX), projects keyed by
// project id with its branch ids, or [] when none (PHP's empty array;
// Reviews\Model\Review 'projects', Swarm 2022.1). changes and
// commits are the review's change lists as the same endpoint documents
// them; *unverified* against a capture, so each is optional.
type wireReview struct {
	Author       string        `json:"author"`
	Participants wireUsers     `json:"participants"`
	Projects     wireProjects  `json:"projects"`
	Changes      []flexInt     `json:"changes"`
	Commits      []flexInt     `json:"commits"`
	Versions     []wireVersion `json:"versions"`
}

type wireVersion struct {
	Change        flexInt  `json:"change"`
	ArchiveChange flexInt  `json:"archiveChange"`
	User          string   `json:"user"`
	Time          flexInt  `json:"time"`
	Pending       flexBool `json:"pending"`
	Difference    flexBool `json:"difference"`
}

// wireUsers reads participants, an object keyed by user id (its values
// the vote and required flags; Swarm's reviews API docs show
// {"swarm_admin": []}) or, tolerated, a list of ids.
type wireUsers []string

func (u *wireUsers) UnmarshalJSON(b []byte) error {
	switch b = bytes.TrimSpace(b); {
	case len(b) > 0 && b[0] == '{':
		var m map[string]json.RawMessage
		err := json.Unmarshal(b, &m)
		for k := range m {
			*u = append(*u, k)
		}
		return err
	case len(b) > 0 && b[0] == '[':
		return json.Unmarshal(b, (*[]string)(u))
	}
	return nil
}

// GroupPrefix names a group among a review's participants
// (Groups\Model\Config::KEY_PREFIX, Swarm 2022.1).
const GroupPrefix = "swarm-group-"

// split is the ids not starting with prefix and, cut from it, those that
// do: each sorted, once.
func (u wireUsers) split(prefix string) (users, groups []string) {
	users = make([]string, 0, len(u))
	for _, s := range u {
		if g, ok := strings.CutPrefix(strings.TrimSpace(s), prefix); ok && g != "" {
			groups = append(groups, g)
		} else if s = strings.TrimSpace(s); s != "" && !ok {
			users = append(users, s)
		}
	}
	slices.Sort(users)
	slices.Sort(groups)
	return slices.Compact(users), slices.Compact(groups)
}

// Report is the body of {update}, the only callback that reads messages:
// JSON with status (pass, fail, running, notstarted), at most 10 messages
// of which Swarm keeps 80 characters each, and the URL the run links to
// (reference: "Test-run callbacks"; Swarm 2022.1 src/Filter/TestRun.php).
type Report struct {
	Status   string   `json:"status,omitempty"`
	Messages []string `json:"messages,omitempty"`
	URL      string   `json:"url,omitempty"`
}

// Swarm's {update} limits.
const (
	maxMessages    = 10
	maxMessageLen  = 80
	maxCallbackURL = 1024
)

// clip fits a report to Swarm's limits, so what the run shows is what we
// wrote rather than Swarm's cut: whole words up to 80 characters, "…" where cut.
func (r Report) clip() Report {
	msgs := r.Messages[:min(len(r.Messages), maxMessages)]
	out := Report{Status: r.Status, Messages: make([]string, 0, len(msgs))}
	for _, m := range msgs {
		out.Messages = append(out.Messages, clipText(m, maxMessageLen))
	}
	if len(r.URL) <= maxCallbackURL {
		out.URL = r.URL
	}
	return out
}

func clipText(s string, n int) string {
	rs := []rune(strings.TrimSpace(s))
	if len(rs) <= n {
		return string(rs)
	}
	cut := string(rs[:n-1])
	if i := strings.LastIndexByte(cut, ' '); i > n/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:") + "…"
}

// Update POSTs report as JSON to a run's {update} URL (it carries Swarm's
// per-run uuid, so no login is sent and the URL is never logged).
func (c *Client) Update(ctx context.Context, callbackURL string, report Report) error {
	b, _ := json.Marshal(report.clip()) // strings only: cannot fail
	return c.callback(ctx, callbackURL, "application/json", b)
}

// Finish calls a run's {pass} or {fail} URL. Swarm reads only a url there,
// from form parameters or the query, never messages: the outcome's
// messages go through Update first.
func (c *Client) Finish(ctx context.Context, callbackURL, link string) error {
	f := url.Values{}
	if link != "" && len(link) <= maxCallbackURL {
		f.Set("url", link)
	}
	return c.callback(ctx, callbackURL, "application/x-www-form-urlencoded", []byte(f.Encode()))
}

func (c *Client) callback(ctx context.Context, callbackURL, contentType string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, callbackURL, bytes.NewReader(body))
	if err != nil {
		return failure.Errorf(failure.InternalBug, "swarm callback: bad URL")
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := c.http().Do(req)
	if err != nil {
		// The url.Error names the URL with its uuid: keep only the cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("swarm callback: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		// 401: a wrong uuid; 404: the run is gone (Swarm's TestRunApi.php).
		return failure.Upstream(resp.StatusCode, retryAfter(resp), fmt.Errorf("swarm callback: HTTP %d", resp.StatusCode))
	}
	return nil
}

func retryAfter(resp *http.Response) time.Duration {
	if s, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After"))); err == nil && s > 0 && s <= 300 {
		return time.Duration(s) * time.Second
	}
	return 0
}

// SecretReader is the part of the secrets store the Swarm credentials use.
type SecretReader interface {
	Get(ctx context.Context, id, stage string) (value string, found bool, err error)
	Forget(id string)
}

// SecretCredentials reads the Swarm API credentials from the secret id's
// current version; fresh re-reads it (after Swarm refused a cached ticket).
func SecretCredentials(s SecretReader, id string) func(ctx context.Context, fresh bool) (Credentials, error) {
	return func(ctx context.Context, fresh bool) (Credentials, error) {
		if fresh {
			s.Forget(id)
		}
		v, _, err := s.Get(ctx, id, secrets.Current)
		if err != nil {
			return Credentials{}, err
		}
		return ParseCredentials(v)
	}
}
