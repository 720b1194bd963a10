package webhook

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"

	"github.com/criticizer/criticizer/shared/secrets"
)

// countingSM is Secrets Manager with two version stages; it counts reads.
type countingSM struct {
	mu       sync.Mutex
	versions map[string]secrets.Version // stage → version; absent = no such stage
	errs     map[string]error
	reads    int
}

func (f *countingSM) GetSecretValue(_ context.Context, in *secretsmanager.GetSecretValueInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	stage := aws.ToString(in.VersionStage)
	if err := f.errs[stage]; err != nil {
		return nil, err
	}
	v, ok := f.versions[stage]
	if !ok {
		return nil, &smtypes.ResourceNotFoundException{Message: aws.String("no version with that stage")}
	}
	return &secretsmanager.GetSecretValueOutput{SecretString: aws.String(v.Value), VersionId: aws.String(v.ID), CreatedDate: aws.Time(v.Created)}, nil
}

func (f *countingSM) set(stage string, v *secrets.Version) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if v == nil {
		delete(f.versions, stage)
		return
	}
	f.versions[stage] = *v
}

func (f *countingSM) readCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads
}

// fakeClock is a settable time source.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestSecretKeysRotationOverlapAndRevocation(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	boom := errors.New("throttled")
	v := func(value string, created time.Time) *secrets.Version {
		return &secrets.Version{Value: value, ID: value + "-id", Created: created}
	}
	tests := []struct {
		name      string
		current   *secrets.Version
		previous  *secrets.Version
		errs      map[string]error
		want      []string
		wantErr   error
		wantReads int
	}{
		{"never rotated: current only", v("k2", now.Add(-30*24*time.Hour)), nil, nil, []string{"k2"}, nil, 1},
		{"rotated an hour ago: current then previous", v("k2", now.Add(-time.Hour)), v("k1", now.Add(-60*24*time.Hour)), nil, []string{"k2", "k1"}, nil, 2},
		{"rotated 25 h ago: the default overlap is over, previous not read", v("k2", now.Add(-25*time.Hour)), v("k1", now.Add(-60*24*time.Hour)), nil, []string{"k2"}, nil, 1},
		{"recorded deadline ahead: previous verifies", v(`{"key":"k2","previous_valid_until":"2026-11-25T13:00:00Z"}`, now.Add(-48*time.Hour)), v("k1", now), nil, []string{"k2", "k1"}, nil, 2},
		{"recorded deadline passed: previous refused", v(`{"key":"k2","previous_valid_until":"2026-11-25T11:59:59Z"}`, now.Add(-time.Minute)), v("k1", now), nil, []string{"k2"}, nil, 1},
		{"emergency rotation (overlap 0)", v(`{"key":"k2","previous_valid_until":"2026-11-25T12:00:00Z"}`, now), v("k1", now), nil, []string{"k2"}, nil, 1},
		{"previous in JSON form", v("k3", now), v(`{"key":"k2"}`, now.Add(-time.Hour)), nil, []string{"k3", "k2"}, nil, 2},
		{"previous unreadable: current still verifies", v("k2", now), nil, map[string]error{secrets.Previous: boom}, []string{"k2"}, nil, 2},
		{"current unreadable: error", nil, nil, map[string]error{secrets.Current: boom}, nil, boom, 1},
		{"current malformed JSON: error, no key", v(`{"key":""}`, now), nil, nil, nil, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sm := &countingSM{versions: map[string]secrets.Version{}, errs: tt.errs}
			sm.set(secrets.Current, tt.current)
			sm.set(secrets.Previous, tt.previous)
			clock := &fakeClock{t: now}
			keys, err := SecretKeys(secrets.New(sm, KeyCacheTTL).WithClock(clock.Now), "webhook/hmac", clock.Now)(context.Background(), false)
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if tt.want == nil && err == nil {
				t.Fatalf("keys %q, want an error", keys)
			}
			var got []string
			for _, k := range keys {
				got = append(got, string(k))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("keys = %q, want %q", got, tt.want)
			}
			if sm.readCount() != tt.wantReads {
				t.Errorf("%d secret reads, want %d", sm.readCount(), tt.wantReads)
			}
		})
	}
}

// TestRevokedPreviousRefusedWithinTheCacheBound: a warm function that cached
// the previous key stops accepting it once KeyCacheTTL has passed after the
// revocation (the AWSPREVIOUS label removed).
func TestRevokedPreviousRefusedWithinTheCacheBound(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	clock := &fakeClock{t: now}
	sm := &countingSM{versions: map[string]secrets.Version{
		secrets.Current:  {Value: "new-key", ID: "v2", Created: now.Add(-time.Hour)},
		secrets.Previous: {Value: "leaked-key", ID: "v1", Created: now.Add(-90 * 24 * time.Hour)},
	}}
	h := &Handler{Jobs: &recordingJobs{}, Queue: nopQueue{}, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		ReplayWindow: time.Hour, Now: clock.Now,
		Keys: SecretKeys(secrets.New(sm, KeyCacheTTL).WithClock(clock.Now), "webhook/hmac", clock.Now)}
	post := func(key, idem string) int {
		body := `{"changelist_id":7,"review_version":1,"idempotency_key":"` + idem + `"}`
		resp, err := h.Handle(context.Background(), signedAt(clock.Now(), []byte(key), body))
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode
	}
	if s := post("leaked-key", "a"); s != http.StatusAccepted {
		t.Fatalf("previous key during the overlap: %d", s)
	}
	sm.set(secrets.Previous, nil) // criticizer secret revoke-previous
	clock.Add(KeyCacheTTL)
	if s := post("leaked-key", "b"); s != http.StatusUnauthorized {
		t.Fatalf("revoked key %v after the revocation: %d, want 401", KeyCacheTTL, s)
	}
	if s := post("new-key", "c"); s != http.StatusAccepted {
		t.Fatalf("current key: %d", s)
	}
}

func signedAt(at time.Time, key []byte, body string) events.APIGatewayProxyRequest {
	r := signed(key, body)
	ts := at.Unix()
	r.Headers[HeaderTimestamp] = strconv.FormatInt(ts, 10)
	r.Headers[HeaderSignature] = Sign(key, ts, "POST", "/webhooks/changelist", []byte(body))
	return r
}

// TestBadRequestsAreCheap: 100 requests with a wrong signature or token cost
// at most 2 Secrets Manager reads per function instance (the current and
// previous version, read once), not a fresh read each.
func TestBadRequestsAreCheap(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for _, mode := range []string{"hmac", "bearer"} {
		t.Run(mode, func(t *testing.T) {
			clock := &fakeClock{t: now}
			sm := &countingSM{versions: map[string]secrets.Version{
				secrets.Current:  {Value: "right-key", ID: "v2", Created: now.Add(-time.Hour)},
				secrets.Previous: {Value: "older-key", ID: "v1", Created: now.Add(-48 * time.Hour)},
			}}
			keys := SecretKeys(secrets.New(sm, KeyCacheTTL).WithClock(clock.Now), "caller", clock.Now)
			h := &Handler{Jobs: &recordingJobs{}, Queue: nopQueue{}, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
				ReplayWindow: time.Hour, Now: clock.Now, Keys: keys, SwarmTokens: keys, SwarmURL: swarmBase}
			body := `{"changelist_id":7,"review_version":1,"idempotency_key":"k"}`
			for i := range 100 {
				req := signedAt(clock.Now(), []byte("wrong-key"), body)
				if mode == "bearer" {
					req = events.APIGatewayProxyRequest{HTTPMethod: "POST", Resource: "/webhooks/changelist", Body: swarmBody("shelved", ""),
						Headers: map[string]string{"Authorization": "Bearer wrong-token"}}
				}
				resp, err := h.Handle(context.Background(), req)
				if err != nil || resp.StatusCode != http.StatusUnauthorized {
					t.Fatalf("bad request %d: %d %v", i, resp.StatusCode, err)
				}
				clock.Add(50 * time.Millisecond) // 100 requests in 5 s
			}
			if n := sm.readCount(); n > 2 {
				t.Fatalf("100 bad requests made %d secret reads, want at most 2", n)
			}
			// After the refresh interval, one more bad request may re-read
			// (a rotation could have happened), and then it is cheap again.
			clock.Add(RefreshEvery)
			for range 10 {
				h.Handle(context.Background(), signedAt(clock.Now(), []byte("wrong-key"), body))
			}
			if n := sm.readCount(); n > 4 {
				t.Fatalf("after the interval: %d reads, want at most 4", n)
			}
		})
	}
}
