package webhook

import (
	"context"
	"time"

	"github.com/criticizer/criticizer/shared/secrets"
)

// SecretVersions is the part of the secrets store the key policy reads.
type SecretVersions interface {
	Version(ctx context.Context, id, stage string) (secrets.Version, bool, error)
	ForgetOlderThan(id string, age time.Duration) bool
}

// KeyCacheTTL is how long the webhook caches its credentials: a revoked
// previous credential (criticizer secret revoke-previous) is refused by every
// warm function within it. The bound is documented in docs/operating.md
// ("Rotating and revoking caller credentials").
const KeyCacheTTL = time.Minute

// RefreshEvery bounds fresh reads after a failed verification: at most one
// per interval per function instance, so unauthenticated requests cannot
// each cost a Secrets Manager call. A sender that switched to a just-rotated
// key is refused for at most this long after the last read.
const RefreshEvery = 10 * time.Second

// SecretKeys is the rotation and revocation policy of a caller credential
// (the HMAC key, Swarm's token; see secrets.CallerCredential): the current
// version always verifies; the previous one too, so senders still using it
// keep working while a rotation propagates, but only until the deadline
// recorded with the secret at rotation (default secrets.DefaultOverlap after
// it), and not at all once revoked (its AWSPREVIOUS label removed). A fresh
// read (after a mismatch) happens at most once per RefreshEvery. A missing
// or unreadable previous version is not fatal: the current key alone is a
// correct answer.
func SecretKeys(s SecretVersions, id string, now func() time.Time) Keys {
	return func(ctx context.Context, fresh bool) ([][]byte, error) {
		if fresh {
			s.ForgetOlderThan(id, RefreshEvery)
		}
		cur, _, err := s.Version(ctx, id, secrets.Current)
		if err != nil {
			return nil, err
		}
		c, err := secrets.ParseCallerCredential(cur.Value)
		if err != nil {
			return nil, err
		}
		keys := [][]byte{[]byte(c.Key)}
		if !now().Before(c.PreviousDeadline(cur)) {
			return keys, nil // past the overlap: the previous version is not even read
		}
		prev, found, err := s.Version(ctx, id, secrets.Previous)
		if err != nil || !found {
			return keys, nil
		}
		if p, err := secrets.ParseCallerCredential(prev.Value); err == nil && p.Key != c.Key {
			keys = append(keys, []byte(p.Key))
		}
		return keys, nil
	}
}
