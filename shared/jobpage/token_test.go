package jobpage

import (
	"context"
	"strings"
	"testing"
	"time"
)

const jobA = "0f8fad5b-d9cb-469f-a165-70867728950e"
const jobB = "7c9e6679-7425-40de-944b-e07fc1f90ae7"

func TestTokenVerify(t *testing.T) {
	key, rotated := []byte("page-key-one"), []byte("page-key-two")
	good := Token(key, jobA)
	flip := []byte(good)
	flip[5] ^= 1 // still base64url, different bytes
	tests := []struct {
		name  string
		key   []byte
		id    string
		token string
		want  bool
	}{
		{"minted for the job", key, jobA, good, true},
		{"tampered token", key, jobA, string(flip), false},
		{"token of another job", key, jobB, good, false},
		{"key rotated: old links die", rotated, jobA, good, false},
		{"empty key verifies nothing", nil, jobA, Token(nil, jobA), false},
		{"truncated", key, jobA, good[:tokenLen-1], false},
		{"padded", key, jobA, good + "=", false},
		{"not base64url", key, jobA, "+" + good[1:], false},
		{"empty", key, jobA, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Valid(tt.key, tt.id, tt.token); got != tt.want {
				t.Errorf("Valid = %v, want %v", got, tt.want)
			}
		})
	}
	if len(good) != tokenLen || strings.ContainsAny(good, "+/=") {
		t.Errorf("token %q: want %d unpadded base64url characters", good, tokenLen)
	}
	if Token(key, jobA) != good {
		t.Error("the token of a job must be deterministic (a link minted twice is the same link)")
	}
	if p := Path(key, jobA); p != "/view/"+jobA+"/"+good {
		t.Errorf("Path = %q", p)
	}
}

// fakeSecrets is a Secrets Manager stand-in with a cache, like secrets.Store:
// Forget drops the cached value so the next Get sees a rotation.
type fakeSecrets struct {
	value, cached string
	cachedOK      bool
	reads         int
	err           error
}

func (f *fakeSecrets) Get(_ context.Context, _, _ string) (string, bool, error) {
	if f.err != nil {
		return "", false, f.err
	}
	if !f.cachedOK {
		f.reads++
		f.cached, f.cachedOK = f.value, true
	}
	return f.cached, true, nil
}

func (f *fakeSecrets) Forget(string) { f.cachedOK = false }

func TestLinksAndRefreshLimit(t *testing.T) {
	sm := &fakeSecrets{value: "k1\n"} // a pasted value with its newline still works
	k := &Key{Secrets: sm, SecretID: "page", RefreshEvery: time.Hour}
	l := &Links{Key: k, Base: "https://api.example.com/prod/"}
	u, err := l.URL(context.Background(), jobA)
	if err != nil {
		t.Fatal(err)
	}
	if want := "https://api.example.com/prod/view/" + jobA + "/" + Token([]byte("k1"), jobA); u != want {
		t.Errorf("URL = %q, want %q", u, want)
	}
	sm.value = "k2"
	if _, refreshed, _ := k.Current(context.Background(), true); !refreshed {
		t.Error("the first fresh read must reach Secrets Manager")
	}
	for range 5 {
		if _, refreshed, _ := k.Current(context.Background(), true); refreshed {
			t.Fatal("fresh reads must be rate-limited: wrong tokens would become Secrets Manager calls")
		}
	}
	if sm.reads != 2 {
		t.Errorf("secret reads = %d, want 2", sm.reads)
	}
	sm.value, sm.cachedOK = " ", false
	if _, _, err := k.Current(context.Background(), false); err != ErrNoKey {
		t.Errorf("empty secret: err = %v, want ErrNoKey", err)
	}
}
