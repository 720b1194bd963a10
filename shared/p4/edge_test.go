package p4

import (
	"context"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/failure"
)

// TestUnpromotedShelf: on a commit (or edge) server a shelved change that
// is not visible is SHELF_NOT_PROMOTED, whichever of the two answers the
// server gives ("Change N unknown." from the stand-in playing a commit
// server, or a pending change listing no shelved file); on a standard
// server it stays what it was. A submitted change that is unknown is
// NOT_FOUND on every server.
func TestUnpromotedShelf(t *testing.T) {
	pendingNoFiles := &fakeRunner{answers: map[string][]Record{
		"describe -s -S 12366": {{"change": "12366", "user": "bob", "status": "pending", "desc": "x"}},
	}}
	for _, tt := range []struct {
		name, role string
		runner     func(t *testing.T) CommandRunner
		shelved    bool
		want       failure.Class
	}{
		{"unknown on a commit server", RoleCommit, standin, true, failure.ShelfNotPromoted},
		{"unknown on an edge server", RoleEdge, standin, true, failure.ShelfNotPromoted},
		{"unknown on a standard server", RoleStandard, standin, true, failure.NotFound},
		{"pending without shelved files on a commit server", RoleCommit, func(*testing.T) CommandRunner { return pendingNoFiles }, true, failure.ShelfNotPromoted},
		{"pending without shelved files on a standard server", RoleStandard, func(*testing.T) CommandRunner { return pendingNoFiles }, true, failure.PolicyRejected},
		{"a submitted change unknown on a commit server", RoleCommit, standin, false, failure.NotFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := NewFetcher(tt.runner(t), testAllowList(t, nil), nil)
			f.WithOptions(Options{ServerRole: tt.role})
			_, err := f.Fetch(context.Background(), 12366, tt.shelved)
			if failure.Classify(err) != tt.want {
				t.Fatalf("err = %v, want %s", err, tt.want)
			}
			if tt.want == failure.ShelfNotPromoted && !strings.Contains(err.Error(), "p4 shelve -p") {
				t.Errorf("message %q does not tell the operator how to promote", err)
			}
		})
	}
	// The promoted shelf (12347, the same files) is fetched on a commit server.
	f, _ := NewFetcher(standin(t), testAllowList(t, nil), nil)
	if _, err := f.WithOptions(Options{ServerRole: RoleCommit}).Fetch(context.Background(), 12347, true); err != nil {
		t.Errorf("promoted shelf on a commit server: %v", err)
	}
}

func standin(t *testing.T) CommandRunner {
	r, _ := newTestRunner(t, fixtureDepot(t), nil)
	return r
}
