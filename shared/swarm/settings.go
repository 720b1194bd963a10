package swarm

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/settings"
)

// Settings are the Helix Swarm settings, all optional: without SWARM_URL a
// function treats Swarm as absent. Each function reads only the part it
// uses (Use), so the stack hands a secret's name only to the function that
// needs it.
type Settings struct {
	// URL is the Swarm server's base URL (SWARM_URL): callback URLs must be
	// on its origin, and e-mails link reviews under it.
	URL string
	// TokenSecretID names the secret holding the bearer tokens Swarm
	// presents to the webhook (SWARM_TOKEN_SECRET_ID; webhook only).
	TokenSecretID string
	// APISecretID names the secret holding the API login the fetch stage
	// asks Swarm for a review's author with (SWARM_API_SECRET_ID; fetch, the
	// webhook that holds a run to its review, and the sweeper where comments
	// are posted).
	APISecretID string
	// CommentWindow is SWARM_COMMENT_WINDOW_SECONDS (ForComments only, with
	// a login): how long after a create started Swarm may still store it.
	CommentWindow time.Duration
}

// Use says which part of Settings a function reads.
type Use int

const (
	ForLinks   Use = iota // SWARM_URL only (notify: the review's link)
	ForWebhook            // SWARM_URL, SWARM_TOKEN_SECRET_ID and SWARM_API_SECRET_ID
	ForAuthors            // SWARM_URL and SWARM_API_SECRET_ID (fetch)
	// ForComments: SWARM_URL, SWARM_API_SECRET_ID and, with a login,
	// SWARM_COMMENT_WINDOW_SECONDS (the sweeper's reconciler of comment rows).
	ForComments
)

// DefaultCommentWindow is the comment window when the environment sets
// none: Swarm's request timeout (PHP max_execution_time) plus a proxy's,
// with margin.
const DefaultCommentWindow = 120 * time.Second

// CommentWindowFromEnv reads SWARM_COMMENT_WINDOW_SECONDS: the notify stage and the sweeper's reconciler judge a comment
// whose create may have landed over the same window.
func CommentWindowFromEnv(r *config.Reader) time.Duration {
	return r.Seconds(settings.SwarmCommentWindowSeconds)
}

// SettingsFromEnv reads the Swarm settings use needs. A secret without a
// URL, or a URL that is not an absolute http(s) URL, is a configuration error.
func SettingsFromEnv(r *config.Reader, use Use) Settings {
	s := Settings{URL: r.Optional(settings.SwarmURL)}
	secret := settings.SwarmAPISecretID
	switch use {
	case ForWebhook:
		secret = settings.SwarmTokenSecretID
		s.TokenSecretID = r.Stack(secret)
		s.APISecretID = r.Stack(settings.SwarmAPISecretID)
	case ForAuthors, ForComments:
		s.APISecretID = r.Stack(secret)
		if use == ForComments && s.APISecretID != "" {
			s.CommentWindow = CommentWindowFromEnv(r)
		}
	}
	if s.URL != "" {
		if u, err := url.Parse(s.URL); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			r.Fail(fmt.Errorf("SWARM_URL=%q must be an absolute http(s) URL", s.URL))
		}
	} else if s.TokenSecretID != "" || s.APISecretID != "" {
		r.Fail(fmt.Errorf("%s is set but SWARM_URL is not", secret.Name))
	}
	return s
}

// ReviewURL is the page of Swarm review id, or "" when Swarm is not
// configured or id is not a review.
func (s Settings) ReviewURL(id int64) string {
	if s.URL == "" || id <= 0 {
		return ""
	}
	return strings.TrimRight(s.URL, "/") + "/reviews/" + strconv.FormatInt(id, 10)
}
