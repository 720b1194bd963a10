package webhook

import (
	"context"

	"github.com/criticizer/criticizer/shared/secrets"
)

// SecretVersions is the part of the secrets store the key policy reads.
type SecretVersions interface {
	Get(ctx context.Context, id, stage string) (value string, found bool, err error)
	Forget(id string)
}

// SecretKeys is the signing-key rotation policy: the current version of the
// secret always verifies, and the previous version too, so that senders
// still signing with the old key keep working while a rotation propagates.
// A missing previous version (never rotated) is normal; failing to read it
// is not fatal either, because the current key alone is a correct answer.
func SecretKeys(s SecretVersions, id string) Keys {
	return func(ctx context.Context, fresh bool) ([][]byte, error) {
		if fresh {
			s.Forget(id)
		}
		cur, _, err := s.Get(ctx, id, secrets.Current)
		if err != nil {
			return nil, err
		}
		keys := [][]byte{[]byte(cur)}
		if prev, found, err := s.Get(ctx, id, secrets.Previous); err == nil && found {
			keys = append(keys, []byte(prev))
		}
		return keys, nil
	}
}
