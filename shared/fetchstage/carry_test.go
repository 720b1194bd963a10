package fetchstage

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/ledger"
	"github.com/criticizer/criticizer/shared/p4"
	"github.com/criticizer/criticizer/shared/redact"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
)

// readCounting is the ledger over an in-process table, counting its reads;
// the first read fails with fault when one is set.
type readCounting struct {
	*ledger.Store
	fault error
	reads int
}

func (l *readCounting) Previous(ctx context.Context, t ledger.Thread, version int) (*ledger.Version, error) {
	l.reads++
	if err := l.fault; err != nil {
		l.fault = nil
		return nil, err
	}
	return l.Store.Previous(ctx, t, version)
}

// diffedChange hands sink the files that have a diff, as p4.Fetcher does
// (deletes and binaries are listed only).
// The files since picks get interdiff, from since.Change, and since is
// kept for the test to see.
type diffedChange struct {
	cs        domain.Changeset
	interdiff string
	since     *p4.Since
}

func (f diffedChange) FetchSince(_ context.Context, _ int64, _ bool, since p4.Since, sink func(int, domain.FileChange) error) (domain.Changeset, error) {
	if f.since != nil {
		*f.since = since
	}
	out := f.cs
	out.Files = append([]domain.FileChange(nil), f.cs.Files...)
	for i, fc := range f.cs.Files {
		if fc.Diff == "" {
			continue
		}
		if since.Wants != nil && since.Wants(fc) {
			fc.Interdiff, fc.InterdiffFrom = f.interdiff, since.Version
		}
		if err := sink(i, fc); err != nil {
			return domain.Changeset{}, err
		}
		out.Files[i].Diff = ""
	}
	return out, nil
}

const (
	digestA = "7D305C220563D38FEF1FFA48B35FF434"
	digestB = "0799517EAB4CECEC616D5850AFA65579"
	digestC = "7B19CB59D01885DC74F780D3BE2D2918"
)

// TestFetchMarksCarriedFiles: at a higher version, a file whose path,
// action, type, base revision and digest equal the previous version's, and
// that was reviewed in full there, is marked carried over (its findings are
// the previous job's); of a Swarm review, a file that changed since such a
// version against the same base is diffed against that version's shelf
// (its interdiff, redacted like the diff); anything else is reviewed as
// usual.
func TestFetchMarksCarriedFiles(t *testing.T) {
	edit := func(path, digest string) domain.FileChange {
		return domain.FileChange{DepotPath: path, Action: "edit", Type: "text", Rev: 3, Digest: digest, Diff: "@@ -1 +1 @@\n-a\n+b\n"}
	}
	files := []domain.FileChange{
		edit("//depot/projectA/same.c", digestA),                                                          // unchanged, reviewed in full: carried
		edit("//depot/projectA/changed.c", digestB),                                                       // content changed
		edit("//depot/projectA/partly.c", digestC),                                                        // unchanged, but only partly reviewed before
		edit("//depot/projectA/new.c", digestA),                                                           // not in the previous version
		{DepotPath: "//depot/projectA/logo.png", Action: "edit", Type: "binary", Rev: 2, Digest: digestC}, // no diff: never carried
	}
	review := ledger.Thread{Kind: ledger.KindReview, ID: 885}
	prevEntry := ledger.Version{Thread: review, Version: 1, JobID: "job-v1", Change: 100, Files: []ledger.File{
		{Path: "//depot/projectA/same.c", Action: "edit", Type: "text", Rev: 3, Digest: digestA, FullyReviewed: true},
		{Path: "//depot/projectA/changed.c", Action: "edit", Type: "text", Rev: 3, Digest: digestA, FullyReviewed: true},
		{Path: "//depot/projectA/partly.c", Action: "edit", Type: "text", Rev: 3, Digest: digestC},
		{Path: "//depot/projectA/logo.png", Action: "edit", Type: "binary", Rev: 2, Digest: digestC, FullyReviewed: true},
	}}
	swarmJob := func(version int) *job.Job {
		return &job.Job{ID: "j", Changelist: 101, ReviewVersion: version, Shelved: true, Swarm: &job.SwarmRun{Review: 885}}
	}
	tests := []struct {
		name     string
		job      *job.Job
		ledger   bool
		fault    error
		want     []string // carried paths
		class    failure.Class
		previous bool     // a ledger read is expected
		inter    []string // paths diffed against the previous shelf
	}{
		{"version 2 carries the unchanged file", swarmJob(2), true, nil, []string{"//depot/projectA/same.c"}, "", true, []string{"//depot/projectA/changed.c"}},
		{"version 5 compares with the latest below it", swarmJob(5), true, nil, []string{"//depot/projectA/same.c"}, "", true, []string{"//depot/projectA/changed.c"}},
		{"version 1 has nothing before it", swarmJob(1), true, nil, nil, "", false, nil},
		{"a changelist job is not the review's thread", &job.Job{ID: "j", Changelist: 101, ReviewVersion: 2}, true, nil, nil, "", true, nil},
		{"no ledger configured", swarmJob(2), false, nil, nil, "", false, nil},
		{"a failed ledger read fails the attempt", swarmJob(2), true, failure.Errorf(failure.Upstream5xx, "dynamodb down"), nil, failure.Upstream5xx, true, nil},
	}
	red, err := redact.New(redact.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := artifacts.NewMemoryBucket()
			led := &readCounting{Store: ledger.NewStore(dynamotest.New(), dynamotest.Table), fault: tt.fault}
			if err := led.Put(context.Background(), prevEntry); err != nil {
				t.Fatal(err)
			}
			var since p4.Since
			const secret = "AKIAQX7N3PLV2KD5RTWE"
			fetcher := diffedChange{cs: domain.Changeset{Changelist: 101, User: "alice", UserEmail: "alice@example.com", Status: "shelved", Files: files},
				interdiff: "--- //depot/projectA/changed.c@=100\n+++ //depot/projectA/changed.c@=101\n@@ -1 +1 @@\n-b\n+key = \"" + secret + "\"\n", since: &since}
			stage := &Fetch{P4: fetcher,
				Redactor: red, Raw: artifacts.New(mem, "raw"), Redacted: artifacts.New(mem, "red"), Log: slog.New(slog.DiscardHandler),
				Reviews: swarmAuthors{}, Users: swarmAuthors{"mallory": "mallory@example.com"}}
			if tt.ledger {
				stage.Ledger = led
			}
			res, err := stage.Process(context.Background(), tt.job)
			if tt.class != "" {
				if failure.Classify(err) != tt.class || len(mem.Keys("")) != 0 {
					t.Fatalf("err %v (%d artifacts), want %s and nothing stored", err, len(mem.Keys("")), tt.class)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := led.reads; (got > 0) != tt.previous {
				t.Errorf("ledger read %d times, want a read %v", got, tt.previous)
			}
			for _, key := range []string{res.Artifacts.Redacted, res.Artifacts.Raw} {
				store := stage.Redacted
				if key == res.Artifacts.Raw {
					store = stage.Raw
				}
				var cs domain.Changeset
				if err := store.GetJSON(context.Background(), key, &cs); err != nil {
					t.Fatal(err)
				}
				var got, inter []string
				for _, f := range cs.Files {
					if f.InterdiffFrom != 0 {
						inter = append(inter, f.DepotPath)
						if f.InterdiffFrom != 1 || !strings.HasPrefix(f.Interdiff, "--- //depot/projectA/changed.c@=100") {
							t.Errorf("%s: interdiff from %d: %q", f.DepotPath, f.InterdiffFrom, f.Interdiff)
						}
						if leaked := strings.Contains(f.Interdiff, secret); leaked != (key == res.Artifacts.Raw) {
							t.Errorf("%s: secret in the interdiff %v, want it only in the raw changeset", key, leaked)
						}
					}
					if f.CarriedFrom != 0 {
						got = append(got, f.DepotPath)
						if f.CarriedFrom != 1 {
							t.Errorf("%s carried from %d, want 1", f.DepotPath, f.CarriedFrom)
						}
					}
					if f.Digest == "" {
						t.Errorf("%s: digest not kept in the changeset", f.DepotPath)
					}
				}
				if strings.Join(got, ",") != strings.Join(tt.want, ",") {
					t.Errorf("%s: carried %v, want %v", key, got, tt.want)
				}
				if strings.Join(inter, ",") != strings.Join(tt.inter, ",") {
					t.Errorf("%s: diffed against the previous shelf %v, want %v", key, inter, tt.inter)
				}
				switch {
				case len(tt.want) == 0 && cs.Previous != nil:
					t.Errorf("%s: previous %+v with nothing carried", key, cs.Previous)
				case len(tt.want) > 0 && (cs.Previous == nil || *cs.Previous != domain.PreviousReview{Version: 1, JobID: "job-v1"}):
					t.Errorf("%s: previous %+v, want version 1 of job-v1", key, cs.Previous)
				}
			}
			if carried := strings.Contains(res.Detail, "carried over 1 unchanged from version 1"); carried != (len(tt.want) > 0) {
				t.Errorf("detail %q", res.Detail)
			}
			if len(tt.inter) > 0 && (since.Change != 100 || since.Version != 1 || !strings.Contains(res.Detail, "1 diffed against version 1's shelf")) {
				t.Errorf("since %+v, detail %q: want the shelf of version 1, change 100", since, res.Detail)
			}
			// The carried marks are inside what the proof of redaction seals.
			var cs domain.Changeset
			_ = stage.Redacted.GetJSON(context.Background(), res.Artifacts.Redacted, &cs)
			if err := red.Verify(res.Artifacts.RedactedProof, cs); err != nil {
				t.Errorf("proof of redaction: %v", err)
			}
		})
	}
}
