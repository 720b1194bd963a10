package llmstage

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/fetchstage"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/llm"
	"github.com/criticizer/criticizer/shared/p4"
	"github.com/criticizer/criticizer/shared/redact"
)

type fetcherFunc func() domain.Changeset

func (f fetcherFunc) FetchSince(_ context.Context, _ int64, _ bool, _ p4.Since, sink func(int, domain.FileChange) error) (domain.Changeset, error) {
	cs := f()
	cs.Files = slices.Clone(cs.Files)
	for i, fc := range cs.Files {
		if err := sink(i, fc); err != nil {
			return domain.Changeset{}, err
		}
		cs.Files[i].Diff = ""
	}
	return cs, nil
}

// errCalled stops the review right after the LLM call: the guard let it through.
var errCalled = errors.New("llm called")

// The fetch stage's proof of redaction lets the llm stage's guard skip the
// diffs it proves; a changed artifact blocks the call; without a proof the
// whole prompt is scanned.
func TestReviewGuardVerifiesFetchProof(t *testing.T) {
	const secret = "AKIAQX7N3PLV2KD5RTWE"
	log := slog.New(slog.DiscardHandler)
	policy := redact.Policy{RedactEmails: true}
	red, err := redact.New(policy)
	if err != nil {
		t.Fatal(err)
	}
	bucket := artifacts.NewMemoryBucket()
	store3 := artifacts.New(bucket, "redacted")
	fetch := &fetchstage.Fetch{Redactor: red, Raw: artifacts.New(artifacts.NewMemoryBucket(), "raw"), Redacted: store3, Log: log,
		P4: fetcherFunc(func() domain.Changeset {
			return domain.Changeset{Changelist: 7, User: "bob", UserEmail: "bob@example.com", Description: "add client\n",
				Files: []domain.FileChange{{DepotPath: "//depot/a.go", Action: "add", Diff: "@@ -0,0 +1,2 @@\n+key := \"" + secret + "\"\n+return nil\n"}}}
		})}
	j0 := &job.Job{ID: "j-1", Changelist: 7}
	res, err := fetch.Process(context.Background(), j0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Artifacts.RedactedProof == "" {
		t.Fatal("fetch recorded no proof of redaction")
	}
	var prompts []string
	guard, err := redact.New(policy)
	if err != nil {
		t.Fatal(err)
	}
	rev := &LLM{Redacted: store3, Guard: guard, Log: log, Model: "gpt-4o",
		LLM: llm.ProviderFunc(func(_ context.Context, p llm.Prompt) (llm.Completion, error) {
			prompts = append(prompts, p.User)
			return llm.Completion{}, errCalled
		})}
	run := func(j job.Job) error {
		_, err := rev.Process(context.Background(), &j)
		return err
	}
	proven := *j0
	proven.Artifacts = res.Artifacts
	if err := run(proven); !errors.Is(err, errCalled) {
		t.Fatalf("proven artifact: %v, want the LLM called", err)
	}
	if strings.Contains(prompts[0], secret) {
		t.Fatal("the secret reached the prompt")
	}

	// The stored artifact changed after fetch sealed it: blocked, even when
	// the change holds no secret.
	orig, _ := bucket.Get(res.Artifacts.Redacted)
	for name, content := range map[string]string{"secret inserted": secret, "harmless edit": "return 1"} {
		var cs domain.Changeset
		if err := json.Unmarshal(orig, &cs); err != nil {
			t.Fatal(err)
		}
		cs.Files[0].Diff += "+" + content + "\n"
		b, _ := json.Marshal(cs)
		bucket.Put(res.Artifacts.Redacted, b)
		err := run(proven)
		if failure.Classify(err) != failure.PolicyRejected || errors.Is(err, errCalled) {
			t.Errorf("%s: %v, want POLICY_REJECTED before any LLM call", name, err)
		}
	}

	// No proof (fetched before proofs existed): the prompt is scanned, and a
	// secret in it blocks.
	unproven := proven
	unproven.Artifacts.RedactedProof = ""
	bucket.Put(res.Artifacts.Redacted, func() []byte {
		var cs domain.Changeset
		_ = json.Unmarshal(orig, &cs)
		cs.Files[0].Diff += "+" + secret + "\n"
		b, _ := json.Marshal(cs)
		return b
	}())
	if err := run(unproven); failure.Classify(err) != failure.PolicyRejected || errors.Is(err, errCalled) {
		t.Errorf("unproven artifact with a secret: %v, want POLICY_REJECTED", err)
	}
	bucket.Put(res.Artifacts.Redacted, orig)
	if err := run(unproven); !errors.Is(err, errCalled) {
		t.Errorf("unproven clean artifact: %v, want the LLM called", err)
	}
}
