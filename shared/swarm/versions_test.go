package swarm_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	swarmstandin "github.com/criticizer/criticizer/internal/standin/swarm"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/swarm"
)

func TestGetReviewVersions(t *testing.T) {
	s := startStandin(t)
	s.AddReview(swarmstandin.Review{ID: 500, Author: "bob"})
	s.AddVersion(500, swarmstandin.Version{Change: 501, Pending: true, Time: 1700000000})                        // a release without archiveChange
	s.AddVersion(500, swarmstandin.Version{Change: 510, ArchiveChange: 509, Difference: true, Time: 1700000100}) // committed: change is the submit
	// A Swarm before 2022.1 has no v10/v11 review routes: the review is
	// read through v9, which every supported release serves.
	answer := func(body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasPrefix(r.URL.Path, "/api/v9/reviews/") {
				http.NotFound(w, r)
				return
			}
			fmt.Fprint(w, body)
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	tests := []struct {
		name      string
		base      string
		review    int64
		want      []swarm.ReviewVersion
		wantShelf []int64
		wantClass failure.Class
	}{
		{"both shapes of a version", s.URL(), 500, []swarm.ReviewVersion{
			{Number: 1, Change: 501, User: "swarm", Time: 1700000000, Pending: true},
			{Number: 2, Change: 510, ArchiveChange: 509, User: "swarm", Time: 1700000100, Difference: true}}, []int64{501, 509}, ""},
		{"a review added without versions", s.URL(), review, []swarm.ReviewVersion{{Number: 1, Change: review, ArchiveChange: 12348, User: "swarm", Pending: true}}, []int64{12348}, ""},
		{"unknown review", s.URL(), 99, nil, nil, failure.NotFound},
		{"flags as numbers, ids as strings", answer(`{"review":{"author":"a","versions":[{"change":"7","difference":1,"pending":0}]}}`), 1,
			[]swarm.ReviewVersion{{Number: 1, Change: 7, Difference: true}}, []int64{7}, ""},
		{"no versions: none a run can name", answer(`{"review":{"id":1,"author":"a"}}`), 1, nil, nil, ""},
		{"a version without a change", answer(`{"error":null,"data":{"reviews":[{"author":"a","versions":[{"user":"x"}]}]}}`), 1, nil, nil, failure.SchemaInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := commentsClient(tt.base, "ticket-1")
			r, err := c.GetReview(context.Background(), tt.review)
			got := r.Versions
			if failure.Classify(err) != tt.wantClass || len(got) != len(tt.want) {
				t.Fatalf("GetReview versions = %+v, %v; want %+v, class %q", got, err, tt.want, tt.wantClass)
			}
			for i := range got {
				if got[i] != tt.want[i] || got[i].Shelf() != tt.wantShelf[i] {
					t.Fatalf("version %d = %+v (shelf %d), want %+v (shelf %d)", i+1, got[i], got[i].Shelf(), tt.want[i], tt.wantShelf[i])
				}
			}
		})
	}
}

// TestGetReview: author, participants and the changes a run may name.
func TestGetReview(t *testing.T) {
	s := startStandin(t)
	s.AddReview(swarmstandin.Review{ID: 600, Author: "bob", Reviewers: []string{"carol", "alice"}})
	s.AddVersion(600, swarmstandin.Version{Change: 601, Pending: true})
	s.AddVersion(600, swarmstandin.Version{Change: 600, ArchiveChange: 605, Pending: true})
	c, _ := commentsClient(s.URL(), "ticket-1")
	r, err := c.GetReview(context.Background(), 600)
	if err != nil {
		t.Fatal(err)
	}
	if r.Author != "bob" || !slices.Equal(r.Participants, []string{"alice", "bob", "carol"}) {
		t.Fatalf("review %+v: want author bob, participants alice, bob, carol", r)
	}
	for change, want := range map[int64]bool{601: true, 605: true, 600: true, 602: false, 12348: false} {
		if r.HasChange(change) != want {
			t.Errorf("HasChange(%d) = %v, want %v", change, !want, want)
		}
	}
}
