// Package configtest runs a settings loader over a map of variables in a
// table test, so each package's loader test states only its cases.
package configtest

import (
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/config"
)

// Load runs load over env. With wantErr set, the loader must report an error
// containing it; otherwise it must report none. ok says whether the result
// is there to check (no error was wanted).
func Load[T any](t *testing.T, env map[string]string, load func(*config.Reader) T, wantErr string) (got T, ok bool) {
	t.Helper()
	r := config.NewReaderFrom(env)
	got = load(r)
	err := r.Err()
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("err = %v, want one naming %q", err, wantErr)
		}
		return got, false
	}
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	return got, true
}
