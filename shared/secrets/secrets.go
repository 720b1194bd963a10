// Package secrets owns reading credentials from AWS Secrets Manager, the only
// approved source of SMTP, LLM and webhook secrets. Values are cached briefly,
// registered with the log masker as soon as they are read, and never printed.
package secrets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"

	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/obs"
)

// API is the part of the Secrets Manager client this package uses.
type API interface {
	GetSecretValue(ctx context.Context, in *secretsmanager.GetSecretValueInput, opts ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
}

// Stages of a secret version.
const (
	Current  = "AWSCURRENT"
	Previous = "AWSPREVIOUS"
)

// CacheTTL bounds how long a rotation takes to reach warm functions (a
// rejected credential re-reads at once: Rotating).
const CacheTTL = 5 * time.Minute

// Store reads secrets with a short cache, so a rotation is picked up within TTL.
type Store struct {
	api   API
	ttl   time.Duration
	now   func() time.Time
	mu    sync.Mutex
	cache map[string]entry
}

type entry struct {
	v       Version
	found   bool
	fetched time.Time
}

// Version is one version of a secret as Secrets Manager returned it.
type Version struct {
	Value string
	ID    string
	// Created is when the version was stored: for the current version of a
	// rotated credential, the moment of the rotation.
	Created time.Time
}

// New returns a Store over api caching values for ttl.
func New(api API, ttl time.Duration) *Store {
	return &Store{api: api, ttl: ttl, now: time.Now, cache: map[string]entry{}}
}

// WithClock sets the time source of the cache (tests).
func (s *Store) WithClock(now func() time.Time) *Store {
	s.now = now
	return s
}

// Get returns id's secret string at stage (Current or Previous); found is
// false when that stage does not exist.
func (s *Store) Get(ctx context.Context, id, stage string) (value string, found bool, err error) {
	v, found, err := s.Version(ctx, id, stage)
	return v.Value, found, err
}

// Version is Get with the version's id and creation time.
func (s *Store) Version(ctx context.Context, id, stage string) (v Version, found bool, err error) {
	key := id + "\x00" + stage
	s.mu.Lock()
	if e, ok := s.cache[key]; ok && s.now().Sub(e.fetched) < s.ttl {
		s.mu.Unlock()
		return e.v, e.found, nil
	}
	s.mu.Unlock()

	out, err := s.api.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(id), VersionStage: aws.String(stage)})
	var nf *smtypes.ResourceNotFoundException
	switch {
	case err != nil && errors.As(err, &nf) && stage != Current:
		found = false
	case err != nil:
		return Version{}, false, classify(fmt.Errorf("read secret %s (%s): %w", id, stage, err))
	default:
		v, found = Version{Value: aws.ToString(out.SecretString), ID: aws.ToString(out.VersionId), Created: aws.ToTime(out.CreatedDate)}, true
		obs.DefaultMasker.Add(v.Value)
		// A JSON secret's fields are secrets too.
		var fields map[string]any
		if json.Unmarshal([]byte(v.Value), &fields) == nil {
			for _, v := range fields {
				if str, ok := v.(string); ok {
					obs.DefaultMasker.Add(str)
				}
			}
		}
	}
	s.mu.Lock()
	s.cache[key] = entry{v: v, found: found, fetched: s.now()}
	s.mu.Unlock()
	return v, found, nil
}

// Forget drops the cached versions of id, so the next Get reads Secrets
// Manager. Callers use it when a credential is rejected, in case it rotated.
func (s *Store) Forget(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.cache {
		if strings.HasPrefix(k, id+"\x00") {
			delete(s.cache, k)
		}
	}
}

// ForgetOlderThan drops id's cached versions read more than age ago, and
// reports whether any: an unauthenticated caller cannot turn each bad
// request into a Secrets Manager call.
func (s *Store) ForgetOlderThan(id string, age time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	dropped := false
	for k, e := range s.cache {
		if strings.HasPrefix(k, id+"\x00") && s.now().Sub(e.fetched) >= age {
			delete(s.cache, k)
			dropped = true
		}
	}
	return dropped
}

// Field returns one string field of a JSON secret (current version).
func (s *Store) Field(ctx context.Context, id, field string) (string, error) {
	raw, _, err := s.Get(ctx, id, Current)
	if err != nil {
		return "", err
	}
	var fields map[string]any
	if err := json.Unmarshal([]byte(raw), &fields); err != nil {
		return "", failure.Errorf(failure.InternalBug, "secret %s is not a JSON object", id)
	}
	v, ok := fields[field].(string)
	if !ok || v == "" {
		return "", failure.Errorf(failure.InternalBug, "secret %s has no string field %q", id, field)
	}
	return v, nil
}

func classify(err error) error {
	var nf *smtypes.ResourceNotFoundException
	if errors.As(err, &nf) {
		return failure.Wrap(failure.InternalBug, err) // a missing secret is bad deploy config
	}
	var ad interface{ ErrorCode() string }
	if errors.As(err, &ad) && (ad.ErrorCode() == "AccessDeniedException" || ad.ErrorCode() == "UnrecognizedClientException") {
		return failure.Wrap(failure.AuthDenied, err)
	}
	if failure.Classify(err) == failure.NetworkTimeout {
		return err
	}
	return failure.Wrap(failure.Upstream5xx, err)
}
