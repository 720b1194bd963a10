package notifystage

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/finding"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/ledger"
	"github.com/criticizer/criticizer/shared/rerun"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
)

// readFailing is the ledger over an in-process table whose next Previous
// fails with fault when one is set.
type readFailing struct {
	*ledger.Store
	fault error
}

func newLedger() *readFailing {
	return &readFailing{Store: ledger.NewStore(dynamotest.New(), dynamotest.Table)}
}

func (l *readFailing) Previous(ctx context.Context, t ledger.Thread, version int) (*ledger.Version, error) {
	if err := l.fault; err != nil {
		l.fault = nil
		return nil, err
	}
	return l.Store.Previous(ctx, t, version)
}

// record puts what the review stage writes for j in l: every file
// reviewed in full, the distinct findings by fingerprint.
func record(t testing.TB, l *readFailing, j *job.Job, fs []domain.Finding, files []domain.FileChange) {
	t.Helper()
	v := ledger.Version{Thread: ledger.ThreadOf(j), Version: j.ReviewVersion, JobID: j.ID, Change: j.Changelist}
	for _, f := range files {
		v.Files = append(v.Files, ledger.File{Path: f.DepotPath, Action: f.Action, FullyReviewed: true})
	}
	for _, c := range rerun.Distinct(fs, &domain.Changeset{Files: files}) {
		v.Findings = append(v.Findings, ledger.Finding{Fingerprint: c.Fingerprint, File: c.File, Line: c.Line, Severity: c.Severity})
	}
	if err := l.Put(context.Background(), v); err != nil {
		t.Fatal(err)
	}
}

// withIDs gives findings the ids the review stage's merge gives them
// (finding.ID of the fingerprint).
func withIDs(fs []domain.Finding, files []domain.FileChange) []domain.Finding {
	out := make([]domain.Finding, 0, len(fs))
	for _, c := range rerun.Distinct(fs, &domain.Changeset{Files: files}) {
		f := c.Finding
		f.ID = finding.ID(c.Fingerprint)
		out = append(out, f)
	}
	return out
}

// fakeJobs is the job store, by id.
type fakeJobs map[string]*job.Job

func (f fakeJobs) put(j *job.Job) { f[j.ID] = j }

func (f fakeJobs) Get(_ context.Context, id string) (*job.Job, error) {
	if j, ok := f[id]; ok {
		return j, nil
	}
	return nil, fmt.Errorf("job %s: %w", id, job.ErrNotFound)
}

// An e-mail-only environment (no Swarm rows at all) groups a rerun's
// e-mail by the ledger: new, still open, resolved by title while version
// 1's result is kept, and by file, line and severity once it has expired.
func TestRerunEmailGroupsWithoutSwarm(t *testing.T) {
	stillOpen := domain.Finding{Severity: "medium", Category: "correctness", Title: "Error ignored", File: "//depot/app/io.go", Line: 1, Message: "m"}
	fixed := domain.Finding{Severity: "high", Category: "security", Title: "SQL built from input", File: "//depot/app/db.go", Line: 1, Message: "m"}
	fresh := domain.Finding{Severity: "low", Category: "style", Title: "Off by one", File: "//depot/app/io.go", Line: 9, Message: "m"}
	skipped := domain.Finding{Severity: "low", Category: "style", Title: "Leak", File: "//depot/app/big.go", Line: 1, Message: "m"}
	for _, tc := range []struct {
		name    string
		expire  func(r *commentRig)
		want    []string
		notWant []string
	}{
		{name: "earlier result kept", want: []string{"RESOLVED (1)", "[HIGH] //depot/app/db.go:1  SQL built from input\n"}},
		{name: "earlier job expired", expire: func(r *commentRig) { delete(r.jobs, "j-v1") },
			want: []string{"RESOLVED (1)", "[HIGH] //depot/app/db.go:1\n"}, notWant: []string{"SQL built from input"}},
		{name: "earlier result expired", expire: func(r *commentRig) { r.jobs["j-v1"].Artifacts.Result = "jobs/v1/gone.json" },
			want: []string{"[HIGH] //depot/app/db.go:1\n"}, notWant: []string{"SQL built from input"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newCommentRig(t)
			r.n.Comments = nil // e-mail only
			r.job = r.putVersion(t, 1, []domain.Finding{stillOpen, fixed, skipped}, "//depot/app/db.go", "//depot/app/io.go", "//depot/app/big.go")
			if _, err := r.process(t); err != nil {
				t.Fatal(err)
			}
			first := r.mail.msgs[len(r.mail.msgs)-1].Text
			if strings.Contains(first, "Since") || strings.Contains(first, "NEW (") {
				t.Errorf("a first version is grouped:\n%s", first)
			}
			r.job = r.putVersion(t, 2, []domain.Finding{stillOpen, fresh}, "//depot/app/db.go", "//depot/app/io.go", "//depot/app/big.go")
			if err := r.arts.PutJSON(context.Background(), r.job.Artifacts.Result, domain.ReviewResult{SchemaVersion: "1", PromptVersion: "p1",
				Findings: []domain.Finding{stillOpen, fresh},
				Meta:     domain.ReviewMeta{FilesTotal: 3, FilesReviewed: 2, SkippedFiles: []domain.SkippedFile{{File: "//depot/app/big.go", Reason: "over_budget"}}}.Map()}); err != nil {
				t.Fatal(err)
			}
			if tc.expire != nil {
				tc.expire(r)
			}
			if _, err := r.process(t); err != nil {
				t.Fatal(err)
			}
			text := r.mail.msgs[len(r.mail.msgs)-1].Text
			want := append([]string{"Since review version 1 (job j-v1): 1 new, 1 still open, 1 resolved, 1 not re-checked.",
				"NEW (1)", "STILL OPEN (1)", "1 earlier finding not re-checked"}, tc.want...)
			for _, w := range want {
				if !strings.Contains(text, w) {
					t.Errorf("e-mail lacks %q:\n%s", w, text)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(text, w) {
					t.Errorf("e-mail has %q:\n%s", w, text)
				}
			}
		})
	}
}

// A ledger that cannot be read fails the attempt (retried by the stage)
// rather than sending an e-mail that calls a rerun a first version.
func TestRerunLedgerErrorIsRetried(t *testing.T) {
	r := newCommentRig(t)
	r.job.ReviewVersion = 2
	r.ledger.fault = fmt.Errorf("throttled")
	if _, err := r.process(t); err == nil || len(r.mail.sent) != 0 {
		t.Fatalf("err %v, %d e-mails; want an error and none sent", err, len(r.mail.sent))
	}
}
