package comments

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/swarm"
)

// fakeAPI is the Swarm client as the channel uses it: a create answers
// createErr or the next id; a listing answers the marked comments after
// an id, or listErr, and is counted.
type fakeAPI struct {
	next      int64
	createErr error
	marked    map[swarm.Marker]swarm.Comment
	listErr   error
	listings  []int64 // the after of each listing
}

func (f *fakeAPI) Create(_ context.Context, _ swarm.NewComment) (swarm.Comment, error) {
	if f.createErr != nil {
		return swarm.Comment{}, f.createErr
	}
	f.next++
	return swarm.Comment{ID: f.next}, nil
}

func (f *fakeAPI) MarkedAfter(_ context.Context, _, after int64) (map[swarm.Marker]swarm.Comment, error) {
	f.listings = append(f.listings, after)
	return f.marked, f.listErr
}

func TestSendTellsARefusalFromACreateThatMayHaveLanded(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		refused   bool // failed for good, never retried
		maybeSent bool // the row stays sending for the lookup
	}{
		{"401: refused for good", failure.Upstream(401, 0, errors.New("HTTP 401")), true, false},
		{"answer lost: may have landed", &failure.Error{Class: failure.NetworkTimeout, Err: fmt.Errorf("reset: %w", swarm.ErrMaybeCreated)}, false, true},
		{"404 on create: may have landed", &failure.Error{Class: failure.Conflict, UpstreamCode: 404, Err: swarm.ErrMaybeCreated}, false, true},
		{"unreadable answer: may have landed, not refused", failure.Errorf(failure.SchemaInvalid, "no comment id: %w", swarm.ErrMaybeCreated), false, true},
		{"429: retried, certainly not created", failure.Upstream(429, 0, errors.New("HTTP 429")), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := New(&fakeAPI{createErr: tt.err})
			_, err := ch.Send(context.Background(), swarm.NewComment{Review: 7})
			if got := errors.Is(err, ErrRefused); got != tt.refused {
				t.Errorf("refused = %v, want %v (%v)", got, tt.refused, err)
			}
			if v := ch.Classify(err); v.MaybeSent != tt.maybeSent || v.Class != failure.Classify(tt.err) {
				t.Errorf("verdict %+v, want maybe-sent %v with the error's class", v, tt.maybeSent)
			}
		})
	}
}

func TestLookupFindsByMarkerWithOneListingPerAttempt(t *testing.T) {
	a, b := swarm.FindingKey(7, "fp-a").Marker(), swarm.FindingKey(7, "fp-b").Marker()
	api := &fakeAPI{marked: map[swarm.Marker]swarm.Comment{a: {ID: 40}}}
	ch := New(api)
	ctx := context.Background()
	id, found, err := ch.Lookup(ctx, swarm.NewComment{Review: 7, Marker: a}, 30)
	if err != nil || !found || id != "40" || ch.Known() != 40 {
		t.Fatalf("lookup of a stored create: %q found %v, %v (known %d); want comment 40", id, found, err, ch.Known())
	}
	if _, found, err := ch.Lookup(ctx, swarm.NewComment{Review: 7, Marker: b}, 35); err != nil || found {
		t.Fatalf("lookup of a create that never landed: found %v, %v", found, err)
	}
	if len(api.listings) != 1 || api.listings[0] != 30 {
		t.Fatalf("listings after %v, want one listing after comment 30 for the attempt", api.listings)
	}
	// A row whose lookup must start earlier is listed again from there.
	if _, _, err := ch.Lookup(ctx, swarm.NewComment{Review: 7, Marker: b}, 10); err != nil || len(api.listings) != 2 {
		t.Fatalf("an earlier start reused the later listing: %v, listings %v", err, api.listings)
	}
}

func TestLookupOnAReviewThatIsGoneIsRefused(t *testing.T) {
	ch := New(&fakeAPI{listErr: failure.Upstream(404, 0, errors.New("HTTP 404"))})
	if _, _, err := ch.Lookup(context.Background(), swarm.NewComment{Review: 7}, 0); !errors.Is(err, ErrRefused) {
		t.Fatalf("lookup on a deleted review: %v, want refused for good", err)
	}
	ch = New(&fakeAPI{listErr: failure.Upstream(503, 0, errors.New("HTTP 503"))})
	if _, _, err := ch.Lookup(context.Background(), swarm.NewComment{Review: 7}, 0); err == nil || errors.Is(err, ErrRefused) {
		t.Fatalf("lookup during an outage: %v, want a retryable error, not refused", err)
	}
}

type fakeTasks struct{ err error }

func (f fakeTasks) SetTaskState(context.Context, int64, int64, string) (swarm.Comment, error) {
	return swarm.Comment{}, f.err
}

func TestTaskChangesAreRedoneNeverLookedUp(t *testing.T) {
	ctx := context.Background()
	if id, err := NewTasks(fakeTasks{}).Send(ctx, Task{Review: 7, Comment: 41}); err != nil || id != "41" {
		t.Fatalf("task change: %q, %v; want the comment id as evidence", id, err)
	}
	ch := NewTasks(fakeTasks{err: failure.Upstream(403, 0, errors.New("HTTP 403"))})
	_, err := ch.Send(ctx, Task{Review: 7, Comment: 41})
	if !errors.Is(err, ErrRefused) || ch.Classify(err).MaybeSent {
		t.Fatalf("403 on a task change: %v, verdict %+v; want refused for good, never in doubt", err, ch.Classify(err))
	}
	if _, found, err := ch.Lookup(ctx, Task{Review: 7, Comment: 41}, 40); found || err != nil {
		t.Fatalf("task lookup found %v, %v; want never (the PATCH is redone)", found, err)
	}
}
