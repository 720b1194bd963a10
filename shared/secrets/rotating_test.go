package secrets

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/criticizer/criticizer/shared/failure"
)

type fakeSM struct {
	mu    sync.Mutex
	value string
	reads int
}

func (f *fakeSM) GetSecretValue(_ context.Context, in *secretsmanager.GetSecretValueInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	return &secretsmanager.GetSecretValueOutput{SecretString: aws.String(f.value)}, nil
}

func TestRotatingRebuildsOnlyWhenTheSecretChanges(t *testing.T) {
	sm := &fakeSM{value: "password-one"}
	builds := 0
	r := NewRotating(New(sm, time.Hour), "smtp", func(v string) (string, error) { builds++; return "client(" + v + ")", nil })
	ctx := context.Background()

	c, changed, err := r.Get(ctx, false)
	if err != nil || c != "client(password-one)" || changed || builds != 1 {
		t.Fatalf("first Get: %q changed=%v err=%v builds=%d", c, changed, err, builds)
	}
	sm.value = "password-two" // emergency rotation
	if c, _, _ := r.Get(ctx, false); c != "client(password-one)" {
		t.Fatalf("cached Get = %q: the cache should hold until asked for fresh", c)
	}
	c, changed, _ = r.Get(ctx, true) // the old credential was rejected
	if c != "client(password-two)" || !changed || builds != 2 {
		t.Fatalf("fresh Get: %q changed=%v builds=%d", c, changed, builds)
	}
	if _, changed, _ := r.Get(ctx, true); changed || builds != 2 {
		t.Fatal("an unchanged secret must not rebuild the client")
	}
}

func TestDoRetriesOnceWithARotatedCredential(t *testing.T) {
	sm := &fakeSM{value: "old"}
	r := NewRotating(New(sm, time.Hour), "llm", func(v string) (string, error) { return v, nil })
	ctx := context.Background()
	_, _, _ = r.Get(ctx, false) // warm: holds "old"
	sm.value = "new"            // rotated behind the warm client's back
	var used []string
	out, err := Do(ctx, r, func(key string) (string, error) {
		used = append(used, key)
		if key != "new" {
			return "", failure.Errorf(failure.AuthDenied, "401")
		}
		return "ok", nil
	})
	if err != nil || out != "ok" || len(used) != 2 || used[0] != "old" || used[1] != "new" {
		t.Fatalf("Do = %q, %v; keys used %v", out, err, used)
	}
	// Rejected again with an unchanged secret: no retry loop.
	used = nil
	_, err = Do(ctx, r, func(key string) (string, error) {
		used = append(used, key)
		return "", failure.Errorf(failure.AuthDenied, "401")
	})
	if failure.Classify(err) != failure.AuthDenied || len(used) != 1 {
		t.Fatalf("err %v, calls %v", err, used)
	}
}
