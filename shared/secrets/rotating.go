package secrets

import (
	"context"
	"sync"

	"github.com/criticizer/criticizer/shared/failure"
)

// Rotating holds a client built from a secret and rebuilds it when the
// value changes, so an emergency rotation reaches warm functions (after a
// rejection, Get with fresh=true).
type Rotating[T any] struct {
	store *Store
	id    string
	build func(value string) (T, error)

	mu    sync.Mutex
	value string
	built T
	ok    bool
}

// NewRotating returns a Rotating for secret id that builds clients with build.
func NewRotating[T any](s *Store, id string, build func(value string) (T, error)) *Rotating[T] {
	return &Rotating[T]{store: s, id: id, build: build}
}

// Get returns the client for the secret's current value. fresh bypasses the
// cache. changed reports whether the client differs from the previous Get's.
func (r *Rotating[T]) Get(ctx context.Context, fresh bool) (client T, changed bool, err error) {
	if fresh {
		r.store.Forget(r.id)
	}
	v, _, err := r.store.Get(ctx, r.id, Current)
	if err != nil {
		var zero T
		return zero, false, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ok && v == r.value {
		return r.built, false, nil
	}
	c, err := r.build(v)
	if err != nil {
		var zero T
		return zero, false, err
	}
	changed = r.ok
	r.value, r.built, r.ok = v, c, true
	return c, changed, nil
}

// Do runs call with the current client; on AUTH_DENIED it reads the secret
// afresh and, when it changed, runs call once more.
func Do[T, R any](ctx context.Context, r *Rotating[T], call func(T) (R, error)) (R, error) {
	c, _, err := r.Get(ctx, false)
	if err != nil {
		var zero R
		return zero, err
	}
	out, err := call(c)
	if failure.Classify(err) != failure.AuthDenied {
		return out, err
	}
	fresh, changed, ferr := r.Get(ctx, true)
	if ferr != nil || !changed {
		return out, err
	}
	return call(fresh)
}
