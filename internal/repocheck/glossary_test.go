package repocheck

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// glossaryDirs are the trees the glossary's references and word rules cover.
var glossaryDirs = []string{"cmd", "functions", "infra", "integration", "internal", "shared"}

// againAllowed are the packages a word for doing something again may name
// things in although its glossary row does not cite them: each is that
// word's one meaning, held by another package. Nothing else goes here.
var againAllowed = []WordUse{
	{"retry", "shared/failure", "a failure's class says whether the pipeline retries it (Class.Retryable); RetryAfter is the provider's Retry-After, the wait before that retry"},
	{"retry", "shared/job", "the job's states and history record the pipeline's retry (RetryWait, OpRetry, EventRetryScheduled)"},
	{"replay", "shared/job", "the job's history records an operator's replay (OpReplay, EventReplayed, ErrNotReplayable)"},
	{"restart", "shared/job", "the job's history records an operator's restart (OpRestart, EventRestarted)"},
	{"retry", "shared/stage", "the stage runtime's small interface over store.Store keeps its methods' names (Jobs.Retry)"},
	{"replay", "shared/stage", "the stage runtime's small interface over store.Store keeps its methods' names (Jobs.Replay)"},
	{"restart", "shared/stage", "the stage runtime's small interface over store.Store keeps its methods' names (Jobs.Restart)"},
	{"retry", "shared/envelope", "a dead letter says whether its failure was one the pipeline retries (DeadLetter.Retryable)"},
	// Envelope.Replay is the wire's "replay" block, kept for compatibility,
	// although a restart or a redelivery travels in it too (its type is
	// Request, its modes Mode…).
	{"replay", "shared/envelope", "the wire's replay block (Envelope.Replay) and a dead letter's count of operator replays (ReplayCount)"},
	{"restart", "shared/envelope", "ModeFullRestart is the restart's mode on the wire"},
	{"redeliver", "shared/envelope", "ModeRedeliver is the redelivery's mode on the wire; Redeliver builds that message"},
	{"redeliver", "shared/reconcile", "the reconciler sends the redeliveries its row names (Reconciler.Redeliver, Report.Redelivered)"},
	{"rerun", "shared/letter", "an e-mail says whether it reports a rerun (Content.Rerun)"},
	{"reconcile", "shared/outbox", "the row status reconciling the reconciler sets and an operator resolves (Reconciling, MarkReconciling, RequeueReconciled)"},
}

// reviewAllowed are the packages, beside the glossary's `swarm.Review`, that
// may declare a type named Review: each is a Swarm review.
var reviewAllowed = []WordUse{
	{"review", "internal/standin/swarm", "the Swarm stand-in's own record of a Swarm review"},
}

// TestGlossary keeps docs/design.md's "Words with one meaning" true: every
// code reference in it names something that exists (a declared name, a
// path, a setting or status, an operator command); each word for doing
// something again names exported things and packages only where its row
// (or againAllowed) says; a type named Review is a Swarm review.
func TestGlossary(t *testing.T) {
	doc, err := os.ReadFile("../../docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	ix, err := indexCode("../..", glossaryDirs...)
	if err != nil {
		t.Fatal(err)
	}
	section, _ := glossarySection(string(doc))
	if n := len(backquoted(section)); n < 50 || len(ix.exported) < 1000 {
		t.Fatalf("%d references, %d exported names: the check would prove nothing", n, len(ix.exported))
	}
	for _, p := range GlossaryReferences(string(doc), ix) {
		t.Error(p)
	}
	for _, p := range MisusedWords(string(doc), ix, againAllowed) {
		t.Error(p)
	}
	for _, p := range ReviewTypes(string(doc), ix, reviewAllowed) {
		t.Error(p)
	}
}

// TestGlossaryChecksFindOffenders runs the checks on a tree and glossary
// built for them: each kind of broken reference, each word used outside the
// packages its row cites (in a name, a method, a field or a package's name),
// a Review type that is not Swarm's, and an allowance nothing needs are
// reported; what the rows cite, an allowed use, a kept term (the webhook's
// replay window), unexported names and test files are not.
func TestGlossaryChecksFindOffenders(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"cmd/criticizer/main.go": "// Command criticizer.\npackage main\n\nconst usage = `\n  criticizer [--stack NAME] dlq replay --note TEXT\n  criticizer [--stack NAME] restart JOB_ID\n`\n\n" +
			"func main() { _ = []string{\"dlq\", \"replay\", \"restart\"} }\n",
		"shared/dlq/dlq.go":           "package dlq\n\ntype Client struct{ Queue string }\n\nfunc (c *Client) Replay() {}\n\nfunc (c *Client) Restart() {}\n",
		"shared/store/store.go":       "package store\n\ntype Store struct{}\n\nfunc (s *Store) Retry() {}\n\nconst mode = \"full_restart\"\n",
		"shared/job/job.go":           "package job\n\nconst OpReplay = \"replay\"\n\nfunc replayed() {}\n",
		"shared/swarm/swarm.go":       "package swarm\n\ntype Review struct{}\n",
		"shared/eval/eval.go":         "package eval\n\ntype Review struct{}\n\ntype Replay struct{}\n\nfunc PathReconciled() {}\n\nfunc (Replay) ReRun() {}\n\ntype Hook struct{ ReplayWindow, SendAgain, Resent int }\n",
		"shared/eval/eval_test.go":    "package eval\n\nfunc TestReplay() {}\n",
		"shared/reconcile/r.go":       "package reconcile\n\nfunc ReconcileRows() {}\n",
		"shared/settlement/s.go":      "package settlement\n",
		"internal/standin/swarm/x.go": "package swarm\n\ntype Reviews []int\n",
	}
	writeTree(t, root, files)
	doc := "# Design\n\n## Words with one meaning\n\n| word | means | never used for |\n|---|---|---|\n" +
		"| **review** (alone) | a Swarm review (`swarm.Review`) | a package |\n" +
		"| **refs** | `dlq.Client.Queue`, `dlq.Replay`, `store.Gone`, `nopkg.X`, `shared/dlq/dlq.go`, `shared/none`, `internal/standin/…`, `criticizer dlq replay`, `criticizer dlq purge`, `criticizer dlq restart`, `full_restart`, `Store`, `Missing`, `*slog.Logger` | — |\n\n" +
		"Again:\n\n| word | means | never used for |\n|---|---|---|\n" +
		"| **retry** | `store.Retry` | — |\n| **returns** (a message) | SQS | — |\n| **replay** | `criticizer dlq replay`, `dlq.Replay` | — |\n" +
		"| **restart** | `dlq.Restart`, mode `full_restart` | — |\n| **redeliver** | — | — |\n| **requeue** | — | — |\n| **resend** | — | — |\n" +
		"| **settle** | — | — |\n| **reconcile** | `shared/reconcile` | — |\n| **rerun** | — | — |\n| **redo** | — | — |\n\n## Next\n\n`outside.Section`\n"
	ix, err := indexCode(root, "cmd", "internal", "shared")
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, got, want []string) {
		t.Helper()
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s =\n%s\nwant\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	check("GlossaryReferences", GlossaryReferences(doc, ix), []string{
		"glossary: `store.Gone`: package store (shared/store) declares no Gone",
		"glossary: `nopkg.X`: no package nopkg",
		"glossary: `shared/none`: no such path",
		"glossary: `criticizer dlq purge`: cmd/criticizer never reads \"purge\"",
		"glossary: `criticizer dlq restart`: no such command in cmd/criticizer's usage",
		"glossary: `Missing`: no declared name, package or string literal",
	})
	check("MisusedWords", MisusedWords(doc, ix, []WordUse{
		{"replay", "shared/job", "the job's history records a replay"},
		{"resend", "shared/job", "nothing there"},
	}), []string{
		`glossary: "redo" has no name rule: add it to againWords`,
		`againWords has "re-enqueue", which the glossary's again table does not list`,
		`shared/eval/eval.go:5: type Replay says "replay" outside its glossary meaning (its row cites cmd/criticizer, shared/dlq)`,
		`shared/eval/eval.go:7: func PathReconciled says "reconcile" outside its glossary meaning (its row cites shared/reconcile)`,
		`shared/eval/eval.go:9: func Replay.ReRun says "replay" outside its glossary meaning (its row cites cmd/criticizer, shared/dlq)`,
		`shared/eval/eval.go:9: func Replay.ReRun says "rerun" outside its glossary meaning (its row cites no package)`,
		`shared/eval/eval.go:11: member Hook.Resent says "resend" outside its glossary meaning (its row cites no package)`,
		`shared/settlement: package settlement says "settle" outside its glossary meaning (its row cites no package)`,
		`allowed "resend" in shared/job, but no exported name there needs it: remove the allowance`,
	})
	check("ReviewTypes", ReviewTypes(doc, ix, []WordUse{{"review", "shared/job", "none there"}}), []string{
		"shared/eval/eval.go:3: type Review is not a Swarm review (the glossary's review row cites shared/swarm): name it for what it is",
		"internal/standin/swarm/x.go:3: type Reviews is not a Swarm review (the glossary's review row cites shared/swarm): name it for what it is",
		"allowed type Review/Reviews in shared/job, but there is none there: remove the allowance",
	})
}

// TestIdentWords: a name splits into the words a reader sees, acronyms kept
// whole, so "rerun" is found in ReRun but not in PreRun.
func TestIdentWords(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"RequeueReconciled", "requeue_reconciled"},
		{"HTTPRetryAfter", "http_retry_after"},
		{"Store.Retry", "store_retry"},
		{"ReEnqueue", "re_enqueue"},
		{"PreRun", "pre_run"},
		{"shared/outbox", "shared/outbox"},
		{"max_retries", "max_retries"},
	} {
		if got := identWords(tt.in); got != tt.want {
			t.Errorf("identWords(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if againWords["rerun"].MatchString(identWords("PreRun")) || !againWords["rerun"].MatchString(identWords("ReRun")) {
		t.Error("rerun: want ReRun matched, PreRun not")
	}
}
