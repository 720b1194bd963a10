package secrets

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"

	"github.com/criticizer/criticizer/shared/failure"
)

// DefaultOverlap is how long a caller credential's previous version keeps
// verifying after a rotation that records no deadline: time to roll the new
// value out, not enough for a leaked old one to stay useful.
const DefaultOverlap = 24 * time.Hour

// CallerCredential is a credential callers present to us. Its secret holds
// either the bare value (as the stack generates it) or, once rotated with
// the operator tool, a JSON object that also records until when the
// previous version verifies:
//
//	{"key": "<value>", "previous_valid_until": "2026-11-26T09:00:00Z"}
//
// With the bare form the previous version verifies until DefaultOverlap
// after the current one was created; a past deadline (revocation) or no
// previous version: only the current value.
type CallerCredential struct {
	Key                string    `json:"key"`
	PreviousValidUntil time.Time `json:"previous_valid_until,omitzero"`
}

// ParseCallerCredential reads a caller credential secret value. The error
// names neither the value nor any part of it.
func ParseCallerCredential(value string) (CallerCredential, error) {
	if !strings.HasPrefix(strings.TrimSpace(value), "{") {
		if value == "" {
			return CallerCredential{}, failure.Errorf(failure.InternalBug, "caller credential secret is empty")
		}
		return CallerCredential{Key: value}, nil
	}
	var c CallerCredential
	dec := json.NewDecoder(strings.NewReader(value))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil || c.Key == "" {
		return CallerCredential{}, failure.Errorf(failure.InternalBug,
			`caller credential secret: want the bare value or {"key": "…", "previous_valid_until": "<RFC 3339>"}`)
	}
	return c, nil
}

// PreviousDeadline is until when the previous version verifies, given the
// current v (zero: creation unknown, no previous version).
func (c CallerCredential) PreviousDeadline(v Version) time.Time {
	if !c.PreviousValidUntil.IsZero() {
		return c.PreviousValidUntil
	}
	if v.Created.IsZero() {
		return time.Time{}
	}
	return v.Created.Add(DefaultOverlap)
}

// AdminAPI is the part of the Secrets Manager client the operator's
// rotation and revocation use.
type AdminAPI interface {
	API
	PutSecretValue(ctx context.Context, in *secretsmanager.PutSecretValueInput, opts ...func(*secretsmanager.Options)) (*secretsmanager.PutSecretValueOutput, error)
	UpdateSecretVersionStage(ctx context.Context, in *secretsmanager.UpdateSecretVersionStageInput, opts ...func(*secretsmanager.Options)) (*secretsmanager.UpdateSecretVersionStageOutput, error)
}

// NewCallerKey returns a fresh random credential value (32 bytes, URL-safe
// base64 without padding: safe in a header and in a shell variable).
func NewCallerKey() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// RotateCallerCredential stores key as the new current version of secret
// id, recording that the version it replaces (then AWSPREVIOUS) verifies
// until now+overlap; overlap 0 ends it at once (emergency rotation).
func RotateCallerCredential(ctx context.Context, api AdminAPI, id, key string, overlap time.Duration, now time.Time) (CallerCredential, error) {
	if overlap < 0 {
		return CallerCredential{}, errors.New("overlap must not be negative")
	}
	c := CallerCredential{Key: key, PreviousValidUntil: now.Add(overlap).UTC().Truncate(time.Second)}
	b, err := json.Marshal(c)
	if err != nil {
		return CallerCredential{}, err
	}
	if _, err := api.PutSecretValue(ctx, &secretsmanager.PutSecretValueInput{SecretId: aws.String(id), SecretString: aws.String(string(b))}); err != nil {
		return CallerCredential{}, fmt.Errorf("store the new version of %s: %w", id, err)
	}
	return c, nil
}

// RevokePrevious takes the AWSPREVIOUS label off secret id's previous
// version and reports it ("" when none).
func RevokePrevious(ctx context.Context, api AdminAPI, id string) (string, error) {
	out, err := api.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(id), VersionStage: aws.String(Previous)})
	var nf *smtypes.ResourceNotFoundException
	if errors.As(err, &nf) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("find the previous version of %s: %w", id, err)
	}
	vid := aws.ToString(out.VersionId)
	if _, err := api.UpdateSecretVersionStage(ctx, &secretsmanager.UpdateSecretVersionStageInput{SecretId: aws.String(id),
		VersionStage: aws.String(Previous), RemoveFromVersionId: aws.String(vid)}); err != nil {
		return "", fmt.Errorf("revoke version %s of %s: %w", vid, id, err)
	}
	return vid, nil
}
