package decide

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/jobpage"
)

type pageKey struct {
	key string
	err error
}

func (k pageKey) Get(context.Context, string, string) (string, bool, error) {
	return k.key, k.err == nil, k.err
}
func (pageKey) Forget(string) {}

// The job page link is minted with the review, so notify delivers it and
// reads no key: the decided review holds the page's capability URL; no page,
// no link; an unreadable key fails the decision (retried) rather than
// deliver a review without the link the environment promises.
func TestDecideMintsTheJobPageLink(t *testing.T) {
	ctx := context.Background()
	j := &job.Job{ID: "job-1", Changelist: 42, ReviewVersion: 1}
	tests := []struct {
		name    string
		page    PageLinks
		want    string // the decided link's prefix; "" none
		wantErr bool
	}{
		{name: "no page"},
		{name: "page on", page: &jobpage.Links{Key: &jobpage.Key{Secrets: pageKey{key: "k"}, SecretID: "page"}, Base: "https://api.example.com/prod/"},
			want: "https://api.example.com/prod/view/job-1/"},
		{name: "key unreadable", page: &jobpage.Links{Key: &jobpage.Key{Secrets: pageKey{err: errors.New("throttled")}, SecretID: "page"}, Base: "https://x"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &Decider{Artifacts: artifacts.New(artifacts.NewMemoryBucket(), "red"), Page: tt.page}
			err := d.Decide(ctx, j, domain.ReviewResult{SchemaVersion: "1"}, &domain.Changeset{Changelist: 42})
			if (err != nil) != tt.wantErr {
				t.Fatalf("Decide: %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			var decided Decided
			if err := d.Artifacts.GetJSON(ctx, Key(j.ID), &decided); err != nil {
				t.Fatal(err)
			}
			if tt.want == "" && decided.PageURL != "" || !strings.HasPrefix(decided.PageURL, tt.want) || (tt.want != "" && len(decided.PageURL) <= len(tt.want)) {
				t.Fatalf("decided page link %q, want %q + token", decided.PageURL, tt.want)
			}
		})
	}
}
