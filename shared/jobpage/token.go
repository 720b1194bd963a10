// Package jobpage owns the links to the read-only job page a reviewer opens
// from Swarm or the e-mail: the capability URL (/view/<job id>/<token>, the
// token an HMAC of the job id under the page key, so a link names one job
// and can be neither guessed nor moved to another) and the key that mints
// and checks it (the JobPageSecret in Secrets Manager: rotating it kills
// every link). The page itself is shared/jobpage/page, linked only by the
// jobpage function; this package stays small enough for the webhook and
// notify functions, which mint links.
package jobpage

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/criticizer/criticizer/shared/secrets"
)

// tokenContext binds a token to this use of the key: the same key could
// never produce a valid token for anything but a job page.
const tokenContext = "criticizer-jobpage-v1\x00"

// tokenLen is the length of a token: base64url of 32 bytes, unpadded.
const tokenLen = 43

// PathPrefix is the route of the page on the API.
const PathPrefix = "/view/"

// Token returns the page token of jobID under key.
func Token(key []byte, jobID string) string {
	return base64.RawURLEncoding.EncodeToString(mac(key, jobID))
}

func mac(key []byte, jobID string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(tokenContext + jobID))
	return m.Sum(nil)
}

// Valid reports whether token is jobID's token under key, in constant time.
// An empty key verifies nothing.
func Valid(key []byte, jobID, token string) bool {
	if len(key) == 0 || len(token) != tokenLen {
		return false
	}
	got, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return false
	}
	return hmac.Equal(got, mac(key, jobID))
}

// Path is the page's path for jobID: /view/<job id>/<token>.
func Path(key []byte, jobID string) string {
	return PathPrefix + jobID + "/" + Token(key, jobID)
}

// SecretReader is the part of the secrets store the key is read through
// (secrets.Store).
type SecretReader interface {
	Get(ctx context.Context, id, stage string) (value string, found bool, err error)
	Forget(id string)
}

// Key is the page key: the current version of the JobPageSecret only. The
// previous version is deliberately not accepted (unlike the webhook key):
// rotating the secret is how every outstanding link is revoked.
type Key struct {
	Secrets  SecretReader
	SecretID string
	// RefreshEvery bounds how often a mismatch may force a fresh read of
	// the secret (default 30 s): a stream of wrong tokens must not turn into
	// a stream of Secrets Manager calls.
	RefreshEvery time.Duration

	mu        sync.Mutex
	refreshed time.Time
}

// ErrNoKey is a page secret with an empty value.
var ErrNoKey = errors.New("jobpage: the page secret is empty")

// Current returns the key. fresh bypasses the cache (the secret may have
// been rotated since it was read), at most once per RefreshEvery; it
// reports whether a fresh read happened.
func (k *Key) Current(ctx context.Context, fresh bool) (key []byte, refreshed bool, err error) {
	if fresh {
		every := cmp.Or(max(k.RefreshEvery, 0), 30*time.Second)
		k.mu.Lock()
		if time.Since(k.refreshed) >= every {
			k.refreshed = time.Now()
			refreshed = true
			k.Secrets.Forget(k.SecretID)
		}
		k.mu.Unlock()
	}
	v, _, err := k.Secrets.Get(ctx, k.SecretID, secrets.Current)
	if err != nil {
		return nil, refreshed, err
	}
	v = strings.TrimSpace(v)
	if v == "" {
		return nil, refreshed, ErrNoKey
	}
	return []byte(v), refreshed, nil
}

// Links mints page links with the current key.
type Links struct {
	Key *Key
	// Base is the API's public base URL (https://<api>/<stage>), for links
	// that leave the request's context (e-mail); empty for Path only.
	Base string
}

// Path returns jobID's page path (/view/<job id>/<token>).
func (l *Links) Path(ctx context.Context, jobID string) (string, error) {
	key, _, err := l.Key.Current(ctx, false)
	if err != nil {
		return "", err
	}
	return Path(key, jobID), nil
}

// URL returns jobID's page URL on Base.
func (l *Links) URL(ctx context.Context, jobID string) (string, error) {
	p, err := l.Path(ctx, jobID)
	if err != nil {
		return "", err
	}
	return strings.TrimRight(l.Base, "/") + p, nil
}
