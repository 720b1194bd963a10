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
	"strconv"
	"strings"
	"time"

	"github.com/criticizer/criticizer/shared/secrets"

	"github.com/criticizer/criticizer/shared/failure"
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

// SameOrigin reports whether u is an absolute http(s) URL on the same
// scheme, host and port as base. Callback URLs must be: otherwise anyone who
// can start a run could make Criticizer POST to an address of their choice.
func SameOrigin(base, u string) bool {
	b, err1 := url.Parse(base)
	p, err2 := url.Parse(u)
	if err1 != nil || err2 != nil || p.User != nil || p.Host == "" || (p.Scheme != "http" && p.Scheme != "https") {
		return false
	}
	return strings.EqualFold(b.Scheme, p.Scheme) && strings.EqualFold(b.Host, p.Host)
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

// ReviewAuthor returns the author of review id: GET /api/v11/reviews/{id},
// field author. A rejected login is retried once with fresh credentials.
func (c *Client) ReviewAuthor(ctx context.Context, review int64) (string, error) {
	// v11 answers {"error":null,"messages":[],"data":{"reviews":[{…}]}};
	// v9/v10 answered {"review":{…}}: both are read. The call is the
	// comments API's (api): a refused login — HTTP 401 or Swarm's 200 with
	// {"error": "Unauthorized"} — is retried once with fresh credentials,
	// and no reply text reaches the error.
	var doc struct {
		Data struct {
			Reviews []struct {
				ID     json.Number `json:"id"`
				Author string      `json:"author"`
			} `json:"reviews"`
		} `json:"data"`
		Review *struct {
			Author string `json:"author"`
		} `json:"review"`
	}
	what := fmt.Sprintf("swarm review %d", review)
	if _, err := c.api(ctx, http.MethodGet, "/api/v11/reviews/"+strconv.FormatInt(review, 10), nil, nil, &doc, what, false); err != nil {
		return "", err
	}
	author := ""
	switch {
	case len(doc.Data.Reviews) > 0:
		author = doc.Data.Reviews[0].Author
	case doc.Review != nil:
		author = doc.Review.Author
	}
	if strings.TrimSpace(author) == "" {
		return "", failure.Errorf(failure.SchemaInvalid, "%s: no author in the answer", what)
	}
	return strings.TrimSpace(author), nil
}

// Report is the body of a callback: {update} takes a status, messages and
// a URL to link the run to; {pass} and {fail} take messages and a URL.
type Report struct {
	Status   string   `json:"status,omitempty"`
	Messages []string `json:"messages,omitempty"`
	URL      string   `json:"url,omitempty"`
}

// Call POSTs report as JSON to a callback URL Swarm gave the run (it carries
// Swarm's per-run token, so no login is sent and the URL is never logged).
func (c *Client) Call(ctx context.Context, callbackURL string, report Report) error {
	b, _ := json.Marshal(report) // strings only: cannot fail
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, callbackURL, bytes.NewReader(b))
	if err != nil {
		return failure.Errorf(failure.InternalBug, "swarm callback: bad URL")
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http().Do(req)
	if err != nil {
		// The url.Error names the URL with its token: keep only the cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("swarm callback: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
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
