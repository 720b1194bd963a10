package llmstage_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/ledger"
	"github.com/criticizer/criticizer/shared/llmstage"
	"github.com/criticizer/criticizer/shared/result"
	"github.com/criticizer/criticizer/shared/store"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
	"github.com/criticizer/criticizer/shared/udiff"
)

const (
	digest1 = "7D305C220563D38FEF1FFA48B35FF434"
	digest2 = "0799517EAB4CECEC616D5850AFA65579"
	digest3 = "7B19CB59D01885DC74F780D3BE2D2918"
)

func strcpyFile(path, digest string, line int) domain.FileChange {
	return domain.FileChange{DepotPath: path, Action: "edit", Type: "text", Rev: 2, Digest: digest,
		Diff: fmt.Sprintf("@@ -%d,2 +%d,3 @@\n int copy(char *d, const char *s) {\n+    strcpy(d, s);\n }\n", line, line)}
}

// jobsTable is the store over an in-process table.
type jobsTable struct{ *store.Store }

func newJobs() jobsTable { return jobsTable{store.New(dynamotest.New(), dynamotest.Table)} }

// seed stores j as it is (a test's starting point).
func (t jobsTable) seed(j *job.Job) {
	if err := t.Put(context.Background(), j); err != nil {
		panic(err)
	}
}

// putFailing is the ledger over an in-process table whose next Put fails
// with fault when one is set.
type putFailing struct {
	*ledger.Store
	fault error
}

func (l *putFailing) Put(ctx context.Context, v ledger.Version) error {
	if err := l.fault; err != nil {
		l.fault = nil
		return err
	}
	return l.Store.Put(ctx, v)
}

// get returns the entry of t at version, if any.
func (l *putFailing) get(t ledger.Thread, version int) (ledger.Version, bool) {
	v, err := l.Previous(context.Background(), t, version+1)
	if err != nil || v == nil || v.Version != version {
		return ledger.Version{}, false
	}
	return *v, true
}

// rerun is a review thread's version 1 (reviewed, recorded) and the
// version 2 changeset the fetch stage would make of it: copy.c and
// clean.c unchanged (carried over), other.c changed.
type rerun struct {
	h      *harness
	jobs   jobsTable
	ledger *putFailing
	v1     domain.ReviewResult
	v1Job  *job.Job
	cs2    domain.Changeset
}

func newRerun(t *testing.T) *rerun {
	t.Helper()
	r := &rerun{jobs: newJobs(), ledger: &putFailing{Store: ledger.NewStore(dynamotest.New(), dynamotest.Table)}}
	r.h = newHarness(t, func(s *llmstage.LLM) { s.Jobs, s.Ledger = r.jobs, r.ledger })
	clean := domain.FileChange{DepotPath: "//depot/main/clean.c", Action: "edit", Type: "text", Rev: 2, Digest: digest3,
		Diff: "@@ -1,2 +1,3 @@\n int f(void) {\n+    return 1;\n }\n"}
	cs1 := domain.Changeset{Changelist: 101, Status: "shelved", User: "alice", Description: "v1",
		Files: []domain.FileChange{strcpyFile("//depot/main/copy.c", digest1, 10), strcpyFile("//depot/main/other.c", digest2, 20), clean}}
	j1 := r.h.job(t, "job-v1", cs1)
	j1.ReviewVersion, j1.Swarm = 1, &job.SwarmRun{Review: 885}
	res, err := r.h.stage.Process(context.Background(), j1)
	if err != nil {
		t.Fatal(err)
	}
	r.v1 = r.h.result(t, res)
	j1.Artifacts.Result = res.Artifacts.Result
	r.v1Job = j1
	r.jobs.seed(j1)

	r.cs2 = domain.Changeset{Changelist: 102, Status: "shelved", User: "alice", Description: "v2",
		Previous: &domain.PreviousReview{Version: 1, JobID: "job-v1"},
		Files:    []domain.FileChange{strcpyFile("//depot/main/copy.c", digest1, 10), strcpyFile("//depot/main/other.c", digest1, 30), clean}}
	r.cs2.Files[0].CarriedFrom, r.cs2.Files[2].CarriedFrom = 1, 1
	return r
}

func (r *rerun) job2(t *testing.T) *job.Job {
	j := r.h.job(t, "job-v2", r.cs2)
	j.ReviewVersion, j.Swarm = 2, &job.SwarmRun{Review: 885}
	return j
}

func findingIDs(res domain.ReviewResult, file string) []string {
	var out []string
	for _, f := range res.Findings {
		if f.File == file {
			out = append(out, f.ID)
		}
	}
	sort.Strings(out)
	return out
}

// TestReviewCarriesUnchangedFiles: the files the fetch stage marked carried
// over are not sent to the model; their findings are version 1's, with the
// same fingerprints; coverage counts them as reviewed in full and says how
// many were carried; the ledger records version 2 (files reviewed in full,
// findings by fingerprint) before the stage completes.
func TestReviewCarriesUnchangedFiles(t *testing.T) {
	r := newRerun(t)
	before := len(r.h.standin.Requests())
	res, err := r.h.stage.Process(context.Background(), r.job2(t))
	if err != nil {
		t.Fatal(err)
	}
	sent := reviewedFiles(t, r.h.standin.Requests()[before:])
	if len(sent) != 1 || sent["//depot/main/other.c"] != 1 {
		t.Errorf("the model was sent %v, want only the changed other.c", sent)
	}
	out := r.h.result(t, res)
	if got, want := findingIDs(out, "//depot/main/copy.c"), findingIDs(r.v1, "//depot/main/copy.c"); len(want) == 0 || strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("copy.c findings %v, want version 1's %v", got, want)
	}
	if len(findingIDs(out, "//depot/main/other.c")) == 0 {
		t.Error("the changed file's new finding is missing")
	}
	meta := domain.ReadReviewMeta(out.Meta)
	if meta.CarriedOver != 2 || meta.CarriedFrom != 1 || meta.FilesReviewed != 3 || meta.FilesTotal != 3 || meta.ModelCalls != 1 || !meta.Complete() {
		t.Errorf("meta %+v: want 2 carried from version 1, 3 of 3 reviewed, 1 model call", meta)
	}
	if c := meta.Coverage(); !strings.Contains(c, "reviewed 3 of 3 files (2 unchanged since version 1, their findings carried over)") {
		t.Errorf("coverage %q", c)
	}

	e1, ok1 := r.ledger.get(ledger.Thread{Kind: ledger.KindReview, ID: 885}, 1)
	e2, ok2 := r.ledger.get(ledger.Thread{Kind: ledger.KindReview, ID: 885}, 2)
	if !ok1 || !ok2 || e2.JobID != "job-v2" || e2.Change != 102 {
		t.Fatalf("ledger entries: v1 %v, v2 %v %+v", ok1, ok2, e2)
	}
	fps := func(e ledger.Version, file string) string {
		var out []string
		for _, f := range e.Findings {
			if f.File == file {
				out = append(out, f.Fingerprint)
			}
		}
		sort.Strings(out)
		return strings.Join(out, ",")
	}
	if a, b := fps(e1, "//depot/main/copy.c"), fps(e2, "//depot/main/copy.c"); a == "" || a != b {
		t.Errorf("copy.c fingerprints: version 1 %q, version 2 %q; want the same", a, b)
	}
	for i, f := range e2.Files {
		if !f.FullyReviewed || f.Digest != r.cs2.Files[i].Digest || f.Path != r.cs2.Files[i].DepotPath || f.Rev != 2 || f.Type != "text" {
			t.Errorf("ledger file %+v", f)
		}
	}
}

// TestReviewReviewsAgainWhenThePreviousIsGone: when the previous job, or
// its result, has expired, nothing can be carried: every file goes to the
// model. A failure to read that may pass fails the attempt instead.
func TestReviewReviewsAgainWhenThePreviousIsGone(t *testing.T) {
	for _, tt := range []struct {
		name  string
		setup func(r *rerun)
		class failure.Class
	}{
		{"the previous job has expired", func(r *rerun) { r.jobs = newJobs(); r.h.stage.Jobs = r.jobs }, ""},
		{"the previous job is past its TTL", func(r *rerun) {
			j := *r.v1Job
			j.ExpiresAt = job.Now().Unix() - 60
			r.jobs.seed(&j)
		}, ""},
		{"the previous result has expired", func(r *rerun) {
			j := *r.v1Job
			j.Artifacts.Result = "job-v1/gone.json"
			r.jobs.seed(&j)
		}, ""},
		{"the review rules changed since", func(r *rerun) { r.h.stage.Rules = result.Rules{DisabledCategories: []string{"style"}} }, ""},
		{"the previous result was capped by the rules", func(r *rerun) {
			capped := r.v1
			meta := domain.ReadReviewMeta(capped.Meta)
			meta.HiddenByCap = 1
			capped.Meta = meta.Map()
			if err := r.h.stage.Redacted.PutJSON(context.Background(), "job-v1/capped.json", capped); err != nil {
				panic(err)
			}
			j := *r.v1Job
			j.Artifacts.Result = "job-v1/capped.json"
			r.jobs.seed(&j)
		}, ""},
		{"the job store fails", func(r *rerun) {
			r.h.stage.Jobs = failingJobs{failure.Errorf(failure.Upstream5xx, "dynamodb: 500")}
		}, failure.Upstream5xx},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRerun(t)
			tt.setup(r)
			before := len(r.h.standin.Requests())
			res, err := r.h.stage.Process(context.Background(), r.job2(t))
			sent := reviewedFiles(t, r.h.standin.Requests()[before:])
			if tt.class != "" {
				if failure.Classify(err) != tt.class || len(sent) != 0 {
					t.Fatalf("err %v, %d files sent; want %s before any model call", err, len(sent), tt.class)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(sent) != 3 {
				t.Errorf("the model was sent %v, want all three files", sent)
			}
			meta := domain.ReadReviewMeta(r.h.result(t, res).Meta)
			if meta.CarriedOver != 0 || meta.FilesReviewed != 3 || strings.Contains(meta.Coverage(), "carried") {
				t.Errorf("meta %+v", meta)
			}
		})
	}
}

type failingJobs struct{ err error }

func (f failingJobs) Get(context.Context, string) (*job.Job, error) { return nil, f.err }

// TestReviewLedgerWrite: a failed ledger write fails the attempt (the
// retry asks the model nothing again: the chunks are stored); a version
// another job recorded first is kept, and the job's detail says so.
func TestReviewLedgerWrite(t *testing.T) {
	r := newRerun(t)
	r.ledger.fault = failure.Errorf(failure.RateLimited, "throttled")
	before := len(r.h.standin.Requests())
	if _, err := r.h.stage.Process(context.Background(), r.job2(t)); failure.Classify(err) != failure.RateLimited {
		t.Fatalf("err %v, want the ledger's RATE_LIMITED", err)
	}
	calls := len(r.h.standin.Requests())
	if _, err := r.h.stage.Process(context.Background(), r.job2(t)); err != nil {
		t.Fatal(err)
	}
	if len(r.h.standin.Requests()) != calls || calls-before != 1 {
		t.Errorf("model calls: %d on the first attempt, %d on the retry; want 1 and 0", calls-before, len(r.h.standin.Requests())-calls)
	}
	if _, ok := r.ledger.get(ledger.Thread{Kind: ledger.KindReview, ID: 885}, 2); !ok {
		t.Error("the retry did not record version 2")
	}

	// Another job of version 2 (a test re-run on demand) keeps job-v2's entry.
	j := r.h.job(t, "job-v2-again", r.cs2)
	j.ReviewVersion, j.Swarm = 2, &job.SwarmRun{Review: 885}
	res, err := r.h.stage.Process(context.Background(), j)
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := r.ledger.get(ledger.Thread{Kind: ledger.KindReview, ID: 885}, 2); e.JobID != "job-v2" || !strings.Contains(res.Detail, "rerun ledger keeps version 2 of job job-v2") {
		t.Errorf("entry of %s, detail %q", e.JobID, res.Detail)
	}
}

// bigC is a 40-line file with an unbounded strcpy at lines 5 and 30; edit
// changes it as version 2 of its review does.
func bigC(edit func(lines []string) []string) string {
	lines := make([]string, 40)
	for i := range lines {
		lines[i] = fmt.Sprintf("int step_%02d(void) { return %d; }", i+1, i+1)
	}
	lines[4] = "    strcpy(name, input);"
	lines[29] = "    strcpy(path, dir);"
	if edit != nil {
		lines = edit(lines)
	}
	return strings.Join(lines, "\n") + "\n"
}

// TestReviewShowsTheInterdiff: a file that changed since the version where
// it was reviewed in full is shown to the model only as that change (its
// interdiff); the earlier finding on lines the change left alone is carried
// over to where those lines are now, with the same fingerprint; the one on
// the fixed line is gone (resolved); the model's new finding is kept.
func TestReviewShowsTheInterdiff(t *testing.T) {
	const path = "//depot/main/big.c"
	v1 := bigC(nil)
	v2 := bigC(func(l []string) []string {
		l[4] = "    snprintf(name, sizeof name, \"%s\", input);"
		return append(l[:11], append([]string{"    sprintf(label, \"%d\", id);"}, l[11:]...)...)
	})
	added := func(content string) string { return udiff.Unified("", content, 3) }
	r := newRerun(t)
	big1 := domain.FileChange{DepotPath: path, Action: "add", Type: "text", Digest: digest1, Diff: added(v1)}
	j1 := r.h.job(t, "job-big-v1", domain.Changeset{Changelist: 201, Status: "shelved", User: "alice", Files: []domain.FileChange{big1}})
	j1.ReviewVersion, j1.Swarm = 1, &job.SwarmRun{Review: 886}
	res1, err := r.h.stage.Process(context.Background(), j1)
	if err != nil {
		t.Fatal(err)
	}
	j1.Artifacts.Result = res1.Artifacts.Result
	r.jobs.seed(j1)
	out1 := r.h.result(t, res1)
	var at30 string
	for _, f := range out1.Findings {
		if f.Line == 30 {
			at30 = f.ID
		}
	}
	if len(out1.Findings) != 2 || at30 == "" {
		t.Fatalf("version 1 findings %+v, want the two strcpy", out1.Findings)
	}

	interdiff := "--- " + path + "@=201\n+++ " + path + "@=202\n" + udiff.Unified(v1, v2, 3)
	big2 := domain.FileChange{DepotPath: path, Action: "add", Type: "text", Digest: digest2, Diff: added(v2), Interdiff: interdiff, InterdiffFrom: 1}
	j2 := r.h.job(t, "job-big-v2", domain.Changeset{Changelist: 202, Status: "shelved", User: "alice",
		Previous: &domain.PreviousReview{Version: 1, JobID: "job-big-v1"}, Files: []domain.FileChange{big2}})
	j2.ReviewVersion, j2.Swarm = 2, &job.SwarmRun{Review: 886}
	before := len(r.h.standin.Requests())
	res2, err := r.h.stage.Process(context.Background(), j2)
	if err != nil {
		t.Fatal(err)
	}
	reqs := r.h.standin.Requests()[before:]
	if len(reqs) != 1 {
		t.Fatalf("%d model calls, want 1", len(reqs))
	}
	prompt := reqs[0].Messages[len(reqs[0].Messages)-1].Content
	if !strings.Contains(prompt, "sprintf(label") || strings.Contains(prompt, "strcpy(path, dir)") || strings.Contains(prompt, "step_40") {
		t.Errorf("the model was shown more than the change since version 1:\n%s", prompt)
	}
	out2 := r.h.result(t, res2)
	got := map[int]string{}
	for _, f := range out2.Findings {
		got[f.Line] = f.Title
		if f.Line == 31 && f.ID != at30 {
			t.Errorf("the carried strcpy is %s at line 31, want version 1's %s", f.ID, at30)
		}
	}
	if len(got) != 2 || got[31] != "Unbounded strcpy" || got[12] != "Unbounded sprintf" {
		t.Errorf("version 2 findings %v, want the carried strcpy at 31 and the new sprintf at 12 (the fixed one at 5 gone)", got)
	}
	meta := domain.ReadReviewMeta(out2.Meta)
	if meta.Interdiffs != 1 || meta.CarriedFrom != 1 || meta.FilesReviewed != 1 || !meta.Complete() ||
		!strings.Contains(meta.Coverage(), "reviewed 1 of 1 file (1 reviewed as its change since version 1)") {
		t.Errorf("meta %+v, coverage %q", meta, meta.Coverage())
	}
	e2, ok := r.ledger.get(ledger.Thread{Kind: ledger.KindReview, ID: 886}, 2)
	if !ok || len(e2.Files) != 1 || !e2.Files[0].FullyReviewed || len(e2.Findings) != 2 {
		t.Fatalf("ledger version 2: %v %+v", ok, e2)
	}

	// Without the earlier result the file is reviewed whole: nothing lost.
	r.jobs = newJobs()
	r.h.stage.Jobs = r.jobs
	j3 := r.h.job(t, "job-big-v2-again", domain.Changeset{Changelist: 202, Status: "shelved", User: "alice",
		Previous: &domain.PreviousReview{Version: 1, JobID: "job-big-v1"}, Files: []domain.FileChange{big2}})
	j3.ReviewVersion, j3.Swarm = 2, &job.SwarmRun{Review: 886}
	before = len(r.h.standin.Requests())
	res3, err := r.h.stage.Process(context.Background(), j3)
	if err != nil {
		t.Fatal(err)
	}
	if reqs := r.h.standin.Requests()[before:]; len(reqs) != 1 || !strings.Contains(reqs[0].Messages[len(reqs[0].Messages)-1].Content, "strcpy(path, dir)") {
		t.Error("with version 1's result gone, the file was not reviewed whole")
	}
	if n := len(r.h.result(t, res3).Findings); n != 2 {
		t.Errorf("reviewed whole: %d findings, want 2", n)
	}
}
