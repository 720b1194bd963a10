//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	llmstandin "github.com/criticizer/criticizer/internal/standin/llm"
	swarmstandin "github.com/criticizer/criticizer/internal/standin/swarm"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/envelope"
	"github.com/criticizer/criticizer/shared/job"
)

// swarmRun sets up a Swarm review of a fresh copy of the pending change 12348
// (shelved files, owned by Swarm's service user), authored by bob, and starts
// a test run of its version 1 as Swarm would.
func swarmRun(t *testing.T) (cl int64, run swarmstandin.Run) {
	t.Helper()
	cl = newChange(t, 12348)
	_, run = swarmReview(cl)
	return cl, run
}

// swarmReview makes change cl version 1 of a Swarm review authored by bob
// (with reviewers, if any) and starts that version's test run.
func swarmReview(cl int64, reviewers ...string) (review int64, run swarmstandin.Run) {
	review = cl + 1 // Swarm's review id is a change number of its own
	env.local.Swarm.AddReview(swarmstandin.Review{ID: review, Author: "bob", Change: cl, Version: 1, Reviewers: reviewers})
	return review, env.local.Swarm.StartRun(review, 1)
}

// swarmJob runs the test definition for run (swarmPost) and returns the id
// of the job the service accepted it as.
func swarmJob(t *testing.T, cl int64, run swarmstandin.Run, status string) string {
	t.Helper()
	resp := swarmPost(t, cl, run, status)
	if resp.Status != http.StatusAccepted {
		t.Fatalf("Swarm's request: %d %s", resp.Status, resp.Body)
	}
	return resp.Decoded["job_id"].(string)
}

// addFile adds a file to a change fixture: path, with the content of
// fixture file after (under testdata).
func addFile(path, after string) func(fx map[string]any) {
	return func(fx map[string]any) {
		fx["files"] = append(fx["files"].([]any), map[string]any{"path": path, "action": "add", "type": "text", "rev": 0, "after_file": after})
	}
}

// swarmPost runs the documented test definition for run as Swarm does: the
// substituted JSON body, POSTed with its static Authorization header only.
func swarmPost(t *testing.T, cl int64, run swarmstandin.Run, status string) apiResponse {
	t.Helper()
	def, err := env.local.SwarmTestDefinition() // the one docs/perforce-and-swarm.md gives users
	if err != nil {
		t.Fatal(err)
	}
	out, err := env.local.Swarm.RunTest(context.Background(), def, run, cl, status)
	if err != nil {
		t.Fatal(err)
	}
	r := apiResponse{Status: out.Status, Body: out.Body}
	_ = json.Unmarshal(out.Body, &r.Decoded)
	return r
}

// awaitCalls waits until run has received a callback of kind.
func awaitCalls(t *testing.T, run swarmstandin.Run, kind string, timeout time.Duration) []swarmstandin.Call {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		calls := env.local.Swarm.Calls(run.ID)
		if slices.ContainsFunc(calls, func(c swarmstandin.Call) bool { return c.Kind == kind }) {
			return calls
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s callback after %s; calls %+v", kind, timeout, calls)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// callKinds names each callback: "running" for the first {update},
// "update:pass" / "update:fail" for the {update} that carries the outcome's
// messages, "pass" / "fail" for the callback that completes the run.
func callKinds(calls []swarmstandin.Call) []string {
	var out []string
	for _, c := range calls {
		switch {
		case c.Kind == "update" && c.Status == "running":
			out = append(out, "running")
		case c.Kind == "update":
			out = append(out, "update:"+c.Status)
		default:
			out = append(out, c.Kind)
		}
	}
	return out
}

// assertRunShows fails unless the run, as a reviewer sees it on the
// review, completed with status, the job's page as its link and a message
// holding each of want.
func assertRunShows(t *testing.T, run swarmstandin.Run, jobID, status string, want ...string) {
	t.Helper()
	v := env.local.Swarm.RunView(run.ID)
	if v.Status != status || !v.Completed || !strings.Contains(v.URL, "/view/"+jobID+"/") {
		t.Fatalf("the run shows %+v: want %s, complete, linking the job page of %s", v, status, jobID)
	}
	all := strings.Join(v.Messages, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Fatalf("the run's messages %q lack %q", v.Messages, w)
		}
	}
}

// awaitQueuesIdle waits until no stage queue holds a message, visible,
// in flight or delayed: every message sent before has been handled. A
// duplicate that met a held lease comes back one lease later, so callers
// allow several leases.
func awaitQueuesIdle(t *testing.T, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		busy := 0
		for _, u := range stageURLs("QueueUrl") {
			out, err := env.sqs.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: &u, AttributeNames: []sqstypes.QueueAttributeName{
				sqstypes.QueueAttributeNameApproximateNumberOfMessages, sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
				sqstypes.QueueAttributeNameApproximateNumberOfMessagesDelayed}})
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range out.Attributes {
				if v != "0" {
					busy++
				}
			}
		}
		if busy == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("stage queues still busy after %s", timeout)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// swarmUUID is a callback's uuid as Swarm 2022.1 builds it
// (Review::getToken): an upper-case UUID token, ".v", the head version.
var swarmUUID = regexp.MustCompile(`/[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}\.v[0-9]+$`)

// A Swarm pre-commit review end to end: bearer token, string placeholders,
// {status} shelved. The shelved files are reviewed, the review's author (not
// Swarm's service user who owns the change) is e-mailed, and Swarm hears
// {update} then {pass}, once each, also after the job's messages are
// delivered again.
func TestSwarmPreCommitReview(t *testing.T) {
	cl, run := swarmRun(t)
	id := swarmJob(t, cl, run, "shelved")
	j := waitJob(t, id, untilSettled(), "succeeded", succeeded)

	if !j.Shelved || j.Source != "swarm" || j.ReviewVersion != 1 {
		t.Fatalf("job shelved=%v source=%q version=%d; want a shelved swarm review of version 1", j.Shelved, j.Source, j.ReviewVersion)
	}
	if !slices.Equal(j.Recipients, []string{"bob@example.com"}) {
		t.Fatalf("recipients %v, want only the review's author bob@example.com", j.Recipients)
	}
	mails := mailsFor(cl, 1)
	if len(mails) != 1 || !slices.Equal(mails[0].To, []string{"bob@example.com"}) {
		t.Fatalf("e-mails %+v, want one to bob@example.com", mails)
	}
	if !regexp.MustCompile(`(?m)^Author: +bob\r?$`).Match(mails[0].Raw) {
		t.Fatalf("the e-mail does not name the review's author bob:\n%.800s", mails[0].Raw)
	}
	for _, m := range env.smtp.Messages() {
		if slices.Contains(m.To, "swarm-service@example.com") {
			t.Fatalf("Swarm's service user was e-mailed: %q", m.Subject)
		}
	}
	// The shelved files were fetched: the added file exists only on the shelf.
	var prompt string
	for _, req := range env.llm.Requests() {
		for _, m := range req.Messages {
			if strings.Contains(m.Content, changeMarker(cl)) {
				prompt = m.Content
			}
		}
	}
	if !strings.Contains(prompt, "//depot/projectA/src/net/retry.go") {
		t.Fatalf("the prompt does not review the shelved files:\n%.600s", prompt)
	}

	if !strings.HasPrefix(run.Update, "http://localhost/api/v10/testruns/") {
		t.Fatalf("{update} is %q: want it as a default Swarm builds it, on http://localhost", run.Update)
	}
	// The uuid as Swarm builds it, Review::getToken(): the review's
	// upper-case token, ".v", the head version (docs/reference/swarm.md).
	if !swarmUUID.MatchString(run.Update) || !strings.HasSuffix(run.Update, fmt.Sprintf(".v%d", run.Version)) {
		t.Fatalf("{update} is %q: want the uuid TOKEN.v%d", run.Update, run.Version)
	}
	calls := awaitCalls(t, run, "pass", untilDeadLettered())
	if got := callKinds(calls); !slices.Equal(got, []string{"running", "update:pass", "pass"}) {
		t.Fatalf("callbacks %v, want running, the outcome, then pass", got)
	}
	// local turns the job page on: the run links it (TestJobPageOpensFromSwarmAndEmail opens it).
	if u := calls[0]; u.Status != "running" || !strings.Contains(u.URL, "/view/"+id+"/") {
		t.Fatalf("update %+v: want status running and a link to the job's page", u)
	}
	want := fmt.Sprintf("%d findings", j.FindingCount)
	if j.FindingCount == 1 {
		want = "1 finding"
	} else if j.FindingCount == 0 {
		want = "no findings"
	}
	// What a reviewer sees on the review: the outcome's message and link.
	assertRunShows(t, run, id, "pass", want)

	// Every stage's message delivered again: acknowledged, nothing called or sent twice.
	for _, s := range domain.Stages {
		if err := env.queues.Send(context.Background(), envelope.Envelope{V: envelope.Version, JobID: id, Changelist: cl, ReviewVersion: 1, Stage: s, TraceID: j.TraceID}); err != nil {
			t.Fatal(err)
		}
	}
	awaitQueuesIdle(t, 5*env.lease)
	if got := callKinds(env.local.Swarm.Calls(run.ID)); !slices.Equal(got, []string{"running", "update:pass", "pass"}) {
		t.Fatalf("after redelivery: callbacks %v, want still running, update:pass, pass", got)
	}
	if n := len(mailsFor(cl, 1)); n != 1 {
		t.Fatalf("after redelivery: %d e-mails, want 1", n)
	}
	j, _ = env.jobs.Get(context.Background(), id)
	if j.Swarm == nil || j.Swarm.UpdateAt == "" || j.Swarm.PassAt == "" || j.Swarm.FailAt != "" {
		t.Fatalf("job's callback record %+v", j.Swarm)
	}
	// The record is written once: a second recording is refused.
	if err := env.jobs.RecordCallback(context.Background(), id, job.CallbackPass, time.Now()); !errors.Is(err, job.ErrConflict) {
		t.Fatalf("recording pass again: %v, want ErrConflict", err)
	}
}

// A Swarm review that is dead-lettered tells Swarm {fail}; replayed (the
// dead letter redriven twice) it succeeds and tells Swarm {pass}: each
// callback once, one e-mail.
func TestSwarmDeadLetterFailsThenReplayPassesOnce(t *testing.T) {
	fault(t, llmstandin.Fault{Status: 403, Count: 1, Body: json.RawMessage(`{"error":{"code":"permission_denied","message":"no"}}`)})
	cl, run := swarmRun(t)
	id := swarmJob(t, cl, run, "shelved")
	waitJob(t, id, untilSettled(), "failed", failed)
	calls := awaitCalls(t, run, "fail", untilDeadLettered())
	if got := callKinds(calls); !slices.Equal(got, []string{"running", "update:fail", "fail"}) {
		t.Fatalf("callbacks %v, want running, the outcome, then fail", got)
	}
	// The run says the review could not run, with the class and the link.
	assertRunShows(t, run, id, "fail", "could not run", "AUTH_DENIED", "Not a finding")
	env.llm.Reset()

	item := awaitDLQ(t, domain.StageLLM, forJob(id), untilDeadLettered())
	u := stageURLs("QueueUrl")[domain.StageLLM]
	for range 2 { // redriven twice: replays once
		if _, err := env.sqs.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: &u, MessageBody: &item.Body}); err != nil {
			t.Fatal(err)
		}
	}
	j := waitJob(t, id, untilSettled(), "succeeded after replay", succeeded)
	awaitQueuesIdle(t, 5*env.lease)
	if got := callKinds(env.local.Swarm.Calls(run.ID)); !slices.Equal(got, []string{"running", "update:fail", "fail", "update:pass", "pass"}) {
		t.Fatalf("callbacks %v, want running, fail, pass: once each", got)
	}
	assertRunShows(t, run, id, "pass", "Criticizer review done")
	if n := len(mailsFor(cl, 1)); n != 1 {
		t.Fatalf("%d e-mails, want 1", n)
	}
	if j.StageRecord(domain.StageLLM).Replays != 1 {
		t.Fatalf("llm replays %d, want 1", j.StageRecord(domain.StageLLM).Replays)
	}
}

// The webhook's Swarm door on the deployed stack: a wrong token and a token
// for another source are refused, and nothing is created.
func TestSwarmTokenRefusals(t *testing.T) {
	cl, run := swarmRun(t)
	good := env.local.SwarmToken
	env.local.SwarmToken = "not-the-token"
	r := swarmPost(t, cl, run, "shelved")
	env.local.SwarmToken = good
	if r.Status != http.StatusUnauthorized {
		t.Fatalf("wrong token: %d %s", r.Status, r.Body)
	}
	req, _ := http.NewRequest(http.MethodPost, env.apiURL+"/webhooks/changelist",
		strings.NewReader(fmt.Sprintf(`{"changelist_id":%d,"review_version":1,"idempotency_key":"%s"}`, cl, uniqueKey(t))))
	req.Header.Set("content-type", "application/json; charset=utf-8")
	req.Header.Set("authorization", "Bearer "+good)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("the Swarm token for source api: %d, want 403", resp.StatusCode)
	}
	if calls := env.local.Swarm.Calls(run.ID); len(calls) != 0 {
		t.Fatalf("refused requests called back: %+v", calls)
	}
}

// Retried stages do not repeat callbacks: fetch fails twice (the Perforce
// server unreachable) after {update} was made, and the first {pass} meets a
// Swarm outage. Swarm still hears {update} once and {pass} once, and the
// author one e-mail.
func TestSwarmCallbacksSurviveStageRetries(t *testing.T) {
	cl, run := swarmRun(t)
	path := filepath.Join(env.depot, "changes", fmt.Sprintf("%d.json", cl))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var fx map[string]any
	_ = json.Unmarshal(b, &fx)
	fx["faults"] = []any{map[string]any{"command": "describe", "exit": 1, "times": 2,
		"stderr": "Perforce client error:\n\tConnect to server failed; check $P4PORT.\n\tTCP connect to perforce:1666 failed.\n\tconnect: 127.0.0.1:1666: Connection refused"}}
	b, _ = json.Marshal(fx)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	env.local.Swarm.FailNext("pass", http.StatusServiceUnavailable)

	id := swarmJob(t, cl, run, "shelved")
	j := waitJob(t, id, untilSettled(), "succeeded", succeeded)
	if a := j.StageRecord(domain.StageFetch).Attempts; a != 3 {
		t.Fatalf("fetch attempts %d, want 3 (two refused connections)", a)
	}
	if a := j.StageRecord(domain.StageNotify).Attempts; a != 2 {
		t.Fatalf("notify attempts %d, want 2 (the first pass callback met a 503)", a)
	}
	// The outcome's {update} is repeated by the retry (the same status);
	// the run is completed once.
	if got := callKinds(env.local.Swarm.Calls(run.ID)); !slices.Equal(got, []string{"running", "update:pass", "update:pass", "pass"}) {
		t.Fatalf("callbacks %v, want running, the outcome (again on the retry), then pass once", got)
	}
	if n := len(mailsFor(cl, 1)); n != 1 {
		t.Fatalf("%d e-mails, want 1: a failing callback must not repeat the e-mail", n)
	}
}

// TestSwarmGateFailsTheRunOnHighFindings: with SWARM_GATE_SEVERITY=high on
// the llm function (an environment's opt-in; the gate is decided there), a review with a high
// finding (12345's unbounded strcpy) ends its Swarm run failed, naming the
// count and the worst finding, while the job itself succeeds: the findings
// block, the review ran.
func TestSwarmGateFailsTheRunOnHighFindings(t *testing.T) {
	setFunctionEnv(t, "LlmFunctionName", map[string]string{"SWARM_GATE_SEVERITY": "high"}) // the gate is decided before notify (shared/decide)
	cl := newChange(t, 12345)
	_, run := swarmReview(cl)
	id := swarmJob(t, cl, run, "submitted")
	j := waitJob(t, id, untilSettled(), "succeeded", succeeded)
	if j.FindingCount == 0 {
		t.Fatal("the review found nothing; the gate has nothing to judge")
	}
	awaitCalls(t, run, "fail", untilDeadLettered())
	assertRunShows(t, run, id, "fail", "finding(s) at or above high block this review", "Worst: critical security finding in",
		fmt.Sprintf("%d finding(s) in all", j.FindingCount))
}

// TestSwarmRunOfAnotherChangeIsRefused: a Swarm run naming a changelist
// that holds none of its review's versions (here another review's change)
// is refused before anything is fetched: the job fails POLICY_REJECTED, the
// run says so with the job's link, the model never sees the change, and
// nobody is e-mailed.
func TestSwarmRunOfAnotherChangeIsRefused(t *testing.T) {
	other := newChange(t, 12345) // a change of no review of this run
	cl, run := swarmRun(t)
	resp := swarmPost(t, other, run, "shelved")
	// The webhook holds the run to its review: 422 with the reason, nothing
	// stored (Swarm marks the run failed with the status line). The fetch
	// stage makes the same check where the webhook cannot reach Swarm
	// (fetchstage.TestSwarmRunIsBoundToItsReview).
	if resp.Status != http.StatusUnprocessableEntity || !strings.Contains(string(resp.Body), "change_not_in_review") {
		t.Fatalf("Swarm's request: %d %s, want 422 change_not_in_review", resp.Status, resp.Body)
	}
	for _, req := range env.llm.Requests() {
		for _, m := range req.Messages {
			if strings.Contains(m.Content, changeMarker(other)) {
				t.Fatal("the model was shown the change of another review")
			}
		}
	}
	if n := len(mailsFor(other, 1)) + len(mailsFor(cl, 1)); n != 0 {
		t.Fatalf("%d e-mails, want none", n)
	}
}
