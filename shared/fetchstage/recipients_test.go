package fetchstage

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/ledger"
	"github.com/criticizer/criticizer/shared/obs"
	"github.com/criticizer/criticizer/shared/p4"
	"github.com/criticizer/criticizer/shared/recipients"
	"github.com/criticizer/criticizer/shared/redact"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
	"github.com/criticizer/criticizer/shared/swarm"
)

// oneFile answers every changelist with one file by user and the e-mail
// address in their Perforce user spec.
type oneFile struct{ user, email string }

func (o oneFile) FetchSince(_ context.Context, cl int64, _ bool, _ p4.Since, sink func(int, domain.FileChange) error) (domain.Changeset, error) {
	fc := domain.FileChange{DepotPath: "//depot/projectA/a.c", Action: "edit", Type: "text", Rev: 2, Diff: "@@ -1 +1 @@\n-a\n+b\n"}
	if err := sink(0, fc); err != nil {
		return domain.Changeset{}, err
	}
	fc.Diff = ""
	return domain.Changeset{Changelist: cl, User: o.user, UserEmail: o.email, Status: "submitted", Description: "d\n", Files: []domain.FileChange{fc}}, nil
}

type swarmAuthors map[string]string // user → e-mail

// GetReview is review 9 by mallory, with the changes the tests' jobs name
// (5, 101) among its versions, carol reviewing and dave, who has no
// e-mail address (never a recipient, never a failure).
func (s swarmAuthors) GetReview(_ context.Context, id int64) (swarm.Review, error) {
	return swarm.Review{ID: id, Author: "mallory", Participants: []string{"carol", "dave", "mallory"},
		Versions: []swarm.ReviewVersion{{Number: 1, Change: 5}, {Number: 2, Change: id, ArchiveChange: 101}}}, nil
}
func (s swarmAuthors) UserEmail(_ context.Context, u string) (string, error) {
	return s[u], nil
}

// TestResolvedRecipientsAreHeldAgainstThePolicy: addresses resolved after
// the webhook (the author's user spec, Swarm's review author) are checked
// after canonicalization; an outside one is never handed on, is recorded in
// the job's history (the stage's detail) and as a security event with a
// metric; no allowed recipient left is POLICY_REJECTED with nothing stored.
func TestResolvedRecipientsAreHeldAgainstThePolicy(t *testing.T) {
	policy, err := recipients.Parse([]string{"example.com"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	red, err := redact.New(redact.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		fetcher    oneFile
		swarmEmail string // the Swarm review author's address, when the job is from Swarm
		requested  []string
		want       []string
		wantClass  failure.Class
		refused    string
	}{
		{"author inside", oneFile{"alice", " Alice@Example.COM "}, "", nil, []string{"alice@example.com"}, "", ""},
		{"author outside, a named recipient inside", oneFile{"eve", "eve@attacker.example"}, "", []string{"rev@example.com"}, []string{"rev@example.com"}, "", "eve@attacker.example (domain_not_allowed)"},
		{"author outside and alone", oneFile{"eve", "eve@attacker.example"}, "", nil, nil, failure.PolicyRejected, "eve@attacker.example"},
		{"p4's default address (user@client)", oneFile{"newbie", "newbie@newbie-ws"}, "", nil, nil, failure.PolicyRejected, "newbie@newbie-ws"},
		{"Swarm review author outside", oneFile{"swarm", "swarm@example.com"}, "mallory@attacker.example", nil, nil, failure.PolicyRejected, "mallory@attacker.example"},
		{"no address at all", oneFile{"ghost", ""}, "", nil, nil, failure.NotFound, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs, metrics bytes.Buffer
			mem := artifacts.NewMemoryBucket()
			f := &Fetch{P4: tt.fetcher, Redactor: red, Raw: artifacts.New(mem, "raw"), Redacted: artifacts.New(mem, "red"),
				Log: slog.New(slog.NewJSONHandler(&logs, nil)), SpoolDir: t.TempDir(), Recipients: policy, Metrics: obs.NewMetrics(&metrics, "test")}
			j := &job.Job{ID: "j", Changelist: 5, Source: "p4-trigger", RequestedRecipients: tt.requested}
			if tt.swarmEmail != "" {
				j.Source, j.Swarm = "swarm", &job.SwarmRun{Review: 9}
				f.Reviews, f.Users = swarmAuthors{"mallory": tt.swarmEmail}, swarmAuthors{"mallory": tt.swarmEmail}
			}
			res, err := f.Process(context.Background(), j)
			if failure.Classify(err) != tt.wantClass {
				t.Fatalf("err = %v, want class %q", err, tt.wantClass)
			}
			if err != nil {
				if tt.refused != "" && !strings.Contains(err.Error(), tt.refused) {
					t.Errorf("error %q does not name %q", err, tt.refused)
				}
				if keys := mem.Keys(""); len(keys) != 0 {
					t.Errorf("a rejected job stored %v", keys)
				}
			} else {
				if !slices.Equal(res.Recipients, tt.want) {
					t.Errorf("recipients = %q, want %q", res.Recipients, tt.want)
				}
				if adjusted := strings.Contains(res.Detail, "adjusted: "+ReasonAuthorAddressCanonicalized); adjusted != (tt.fetcher.email != strings.ToLower(strings.TrimSpace(tt.fetcher.email))) {
					t.Errorf("history detail %q: author address canonicalization reported %v", res.Detail, adjusted)
				}
				if tt.refused != "" && !strings.Contains(res.Detail, "not e-mailed, outside the recipient policy: "+tt.refused) {
					t.Errorf("history detail %q does not record %q", res.Detail, tt.refused)
				}
			}
			events := strings.Count(logs.String(), `"event":"recipient_rejected"`)
			if (tt.refused != "") != (events == 1) || (tt.refused != "") != strings.Contains(metrics.String(), `"RecipientsRejected":1`) {
				t.Errorf("%d security events for refused %q; metrics %s", events, tt.refused, metrics.String())
			}
		})
	}
}

// TestSwarmRunIsBoundToItsReview: a Swarm job reviews its changelist only
// when it holds one of the review's versions (otherwise POLICY_REJECTED and
// nothing fetched or stored), and its recipients are the review's author
// and participants, never the addresses the request named.
func TestSwarmRunIsBoundToItsReview(t *testing.T) {
	red, err := redact.New(redact.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		changelist int64
		requested  []string
		want       []string
		wantClass  failure.Class
	}{
		{"a version's change", 5, nil, []string{"carol@example.com", "mallory@example.com"}, ""},
		{"the head version's archive change", 101, nil, []string{"carol@example.com", "mallory@example.com"}, ""},
		{"the request names someone: ignored", 5, []string{"eve@example.com"}, []string{"carol@example.com", "mallory@example.com"}, ""},
		{"a change of another review", 7, nil, nil, failure.PolicyRejected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := artifacts.NewMemoryBucket()
			fetched := false
			f := &Fetch{P4: fetchSpy{oneFile{"swarm", "swarm@example.com"}, &fetched}, Redactor: red, Raw: artifacts.New(mem, "raw"), Redacted: artifacts.New(mem, "red"),
				Log: slog.New(slog.DiscardHandler), SpoolDir: t.TempDir(),
				Reviews: swarmAuthors{}, Users: swarmAuthors{"mallory": "mallory@example.com", "carol": "carol@example.com"}}
			j := &job.Job{ID: "j", Changelist: tt.changelist, Source: "swarm", RequestedRecipients: tt.requested, Swarm: &job.SwarmRun{Review: 9}}
			res, err := f.Process(context.Background(), j)
			if failure.Classify(err) != tt.wantClass {
				t.Fatalf("err = %v, want class %q", err, tt.wantClass)
			}
			if err != nil {
				if fetched || len(mem.Keys("")) != 0 {
					t.Fatalf("a refused run fetched (%v) or stored %v", fetched, mem.Keys(""))
				}
				return
			}
			if !slices.Equal(res.Recipients, tt.want) {
				t.Fatalf("recipients = %q, want %q", res.Recipients, tt.want)
			}
		})
	}
}

// fetchSpy records whether the changelist was fetched.
type fetchSpy struct {
	oneFile
	fetched *bool
}

func (f fetchSpy) FetchSince(ctx context.Context, cl int64, shelved bool, since p4.Since, sink func(int, domain.FileChange) error) (domain.Changeset, error) {
	*f.fetched = true
	return f.oneFile.FetchSince(ctx, cl, shelved, since, sink)
}

// firstFetched records the reviews Standing is handed.
type firstFetched []swarm.Review

func (f *firstFetched) FirstFetched(_ context.Context, rv swarm.Review) error {
	*f = append(*f, rv)
	return nil
}

// TestStandingIsTheReviewAtItsFirstFetch: who is on a Swarm review is
// recorded at the fetch of a version no earlier one precedes in the ledger
// (before any comment of ours), as Swarm listed them; a later version's
// fetch records nothing (its first did), and a refused run nothing either.
func TestStandingIsTheReviewAtItsFirstFetch(t *testing.T) {
	red, err := redact.New(redact.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	earlier := ledger.Version{Thread: ledger.Thread{Kind: ledger.KindReview, ID: 9}, Version: 1, JobID: "job-v1", Change: 5}
	tests := []struct {
		name       string
		changelist int64
		version    int
		want       int // reviews recorded
	}{
		{"the review's first version", 5, 1, 1},
		{"a version after one reviewed", 101, 2, 0},
		{"a change of another review: refused", 7, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			led := ledger.NewStore(dynamotest.New(), dynamotest.Table)
			if err := led.Put(context.Background(), earlier); err != nil {
				t.Fatal(err)
			}
			var got firstFetched
			mem := artifacts.NewMemoryBucket()
			f := &Fetch{P4: oneFile{"swarm", "swarm@example.com"}, Redactor: red, Raw: artifacts.New(mem, "raw"), Redacted: artifacts.New(mem, "red"),
				Log: slog.New(slog.DiscardHandler), SpoolDir: t.TempDir(), Ledger: led, Standing: &got,
				Reviews: swarmAuthors{}, Users: swarmAuthors{"mallory": "mallory@example.com", "carol": "carol@example.com"}}
			j := &job.Job{ID: "j", Changelist: tt.changelist, ReviewVersion: tt.version, Source: "swarm", Shelved: true, Swarm: &job.SwarmRun{Review: 9}}
			_, _ = f.Process(context.Background(), j)
			if len(got) != tt.want {
				t.Fatalf("recorded %+v, want %d", got, tt.want)
			}
			if tt.want == 1 && (got[0].ID != 9 || got[0].Author != "mallory" || !slices.Equal(got[0].Participants, []string{"carol", "dave", "mallory"})) {
				t.Fatalf("recorded %+v, want review 9 as Swarm listed it", got[0])
			}
		})
	}
}
