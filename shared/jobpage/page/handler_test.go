package page

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/jobpage"
	"github.com/criticizer/criticizer/shared/outbox"
)

const (
	jobA = "0f8fad5b-d9cb-469f-a165-70867728950e"
	jobB = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
)

// fakeSecrets is a cached secret like secrets.Store: Forget makes the next
// Get see a rotation.
type fakeSecrets struct {
	value, cached string
	cachedOK      bool
	err           error
}

func (f *fakeSecrets) Get(_ context.Context, _, _ string) (string, bool, error) {
	if f.err != nil {
		return "", false, f.err
	}
	if !f.cachedOK {
		f.cached, f.cachedOK = f.value, true
	}
	return f.cached, true, nil
}

func (f *fakeSecrets) Forget(string) { f.cachedOK = false }

var now = time.Date(2026, 11, 25, 2, 0, 0, 0, time.UTC)

type fakeJobs map[string]*job.Job

func (f fakeJobs) Get(_ context.Context, id string) (*job.Job, error) {
	if j, ok := f[id]; ok {
		return j, nil
	}
	return nil, fmt.Errorf("job %s: %w", id, job.ErrNotFound)
}

// fakeResults serves artifacts by key and records which keys were read.
type fakeResults struct {
	objects map[string]any
	read    []string
}

func (f *fakeResults) GetJSON(_ context.Context, key string, v any) error {
	f.read = append(f.read, key)
	o, ok := f.objects[key]
	if !ok {
		return failure.Errorf(failure.NotFound, "no such key")
	}
	b, _ := json.Marshal(o)
	return json.Unmarshal(b, v)
}

type fakeRows []outbox.Row

// JobRows splits the rows as the outbox does: e-mails, then channel rows.
func (f fakeRows) JobRows(context.Context, *job.Job) (emails, comments []outbox.Row, err error) {
	for _, r := range f {
		if r.Channel == "" {
			emails = append(emails, r)
		} else {
			comments = append(comments, r)
		}
	}
	return emails, comments, nil
}

// hostile is model output that tries to become markup on the page.
const hostile = `<script>alert(1)</script><img src=x onerror=alert(2)>"'&`

func finishedJob(id string) *job.Job {
	j := job.New(id, "k-"+id, 4242, 2, now.Add(-time.Hour), time.Minute)
	j.State, j.Stage, j.FindingCount = job.Succeeded, domain.StageNotify, 3
	j.ExpiresAt = now.Add(29 * 24 * time.Hour).Unix()
	j.Artifacts = job.Artifacts{Raw: "jobs/" + id + "/changeset.raw.json", Redacted: "jobs/" + id + "/changeset.json", Result: "jobs/" + id + "/review.json"}
	j.Swarm = &job.SwarmRun{Review: 77, UpdateURL: "https://swarm.example.com/runs/secret-run-token/update", UpdateAt: job.FormatTime(now.Add(-50 * time.Minute))}
	return j
}

func reviewResult() domain.ReviewResult {
	return domain.ReviewResult{SchemaVersion: "1.0", PromptVersion: "1.0.0", Summary: "Two problems. " + hostile,
		Findings: []domain.Finding{
			{ID: "F-1", Severity: "low", Category: "style", Title: "Naming", File: "//depot/projectA/b.go", Line: 3, Message: "rename"},
			{ID: "F-2", Severity: "high", Category: "security", Title: "SQL injection " + hostile, File: "//depot/projectA/a.go", Line: 10, EndLine: 12,
				Message: "query built from input " + hostile, Suggestion: "use placeholders " + hostile, RuleID: "sqli"},
			{ID: "F-3", Severity: "bogus", Title: "odd", File: "//depot/projectA/a.go", Line: 1, Message: "unknown severity still shown"},
		},
		Meta: domain.ReviewMeta{FilesReviewed: 2, ModelCalls: 1,
			SkippedFiles:   []domain.SkippedFile{{File: "//depot/projectA/logo.png", Reason: "no_textual_diff"}},
			TruncatedFiles: []domain.TruncatedFile{{File: "//depot/projectA/big.go", ReviewedBytes: 1000, OriginalBytes: 5000}}}.Map()}
}

// rawSecret is in the raw changeset only: the page must never show it.
const rawSecret = "AKIAIOSFODNN7EXAMPLE-raw-only"

func newHandler(t *testing.T, key string) (*Handler, *fakeResults, *bytes.Buffer, *fakeSecrets) {
	t.Helper()
	j := finishedJob(jobA)
	res := &fakeResults{objects: map[string]any{
		j.Artifacts.Result:   reviewResult(),
		j.Artifacts.Raw:      map[string]any{"files": []any{map[string]any{"diff": rawSecret}}},
		j.Artifacts.Redacted: map[string]any{"files": []any{map[string]any{"diff": "[REDACTED] " + rawSecret}}},
	}}
	var logs bytes.Buffer
	sm := &fakeSecrets{value: key}
	return &Handler{
		Key:  &jobpage.Key{Secrets: sm, SecretID: "page"},
		Jobs: fakeJobs{jobA: j}, Results: res,
		Deliveries: fakeRows{{Recipient: "alice@example.com", Status: outbox.Sent, NotifiedAt: job.FormatTime(now.Add(-40 * time.Minute))}},
		Log:        slog.New(slog.NewJSONHandler(&logs, nil)), Now: job.Clock(func() time.Time { return now }),
	}, res, &logs, sm
}

func get(h *Handler, path string) events.APIGatewayProxyResponse {
	parts := strings.Split(strings.TrimPrefix(path, "/view/"), "/")
	req := events.APIGatewayProxyRequest{HTTPMethod: http.MethodGet, Path: "/prod" + path, Resource: "/view/{id}/{token}"}
	if len(parts) == 2 {
		req.PathParameters = map[string]string{"id": parts[0], "token": parts[1]}
	}
	req.RequestContext.Identity.SourceIP = "203.0.113.9"
	resp, _ := h.Handle(context.Background(), req)
	return resp
}

func TestPageServedWithSecurityHeaders(t *testing.T) {
	h, res, _, _ := newHandler(t, "key-1")
	resp := get(h, jobpage.Path([]byte("key-1"), jobA))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, resp.Body)
	}
	for name, want := range map[string]string{
		"Content-Type": "text/html; charset=utf-8", "X-Content-Type-Options": "nosniff",
		"Referrer-Policy": "no-referrer", "Cache-Control": "no-store",
	} {
		if got := resp.Headers[name]; got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	csp := resp.Headers["Content-Security-Policy"]
	if !strings.HasPrefix(csp, "default-src 'none'") || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "'"+styleHash(pageCSS)+"'") {
		t.Errorf("CSP %q: want default-src 'none' and the stylesheet allowed by its hash only", csp)
	}
	if !strings.Contains(resp.Body, "<style>"+pageCSS+"</style>") {
		t.Error("the stylesheet must be served byte for byte as hashed in the CSP, or the browser drops it")
	}
	body := resp.Body
	for _, want := range []string{
		"Changelist 4242, review version 2", "succeeded",
		"3 findings", "SQL injection", "//depot/projectA/a.go:10-12", "rule: sqli", "use placeholders",
		"2 files reviewed, 1 not reviewed, 1 reviewed in part", "//depot/projectA/logo.png", "no textual diff",
		"first 1000 of 5000 bytes", "a…@example.com", "review 77", "unknown severity still shown",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// Findings in the e-mail's order: most severe file first, severity within.
	if strings.Index(body, "SQL injection") > strings.Index(body, "Naming") {
		t.Error("the high finding must come before the low one")
	}
	for _, leak := range []string{"<script>", "<img", "alice@example.com", rawSecret, "secret-run-token"} {
		if strings.Contains(body, leak) {
			t.Errorf("page contains %q", leak)
		}
	}
	if !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("hostile finding text must be shown escaped, not dropped")
	}
	if len(res.read) != 1 || res.read[0] != "jobs/"+jobA+"/review.json" {
		t.Errorf("artifacts read: %v; the page reads the stored review result only, never a changeset", res.read)
	}
}

func TestWrongLinksAre404WithASecurityEvent(t *testing.T) {
	other := finishedJob(jobB)
	expired := "3b241101-e2bb-4255-8caf-4136c566a962"
	old := finishedJob(expired)
	old.ExpiresAt = now.Add(-time.Second).Unix()
	good := jobpage.Token([]byte("key-1"), jobA)
	tests := []struct {
		name, path, reason string
	}{
		{"tampered token", "/view/" + jobA + "/" + "A" + good[1:], "invalid_token"},
		{"token of another job", "/view/" + jobB + "/" + good, "invalid_token"},
		{"token under a rotated key", jobpage.Path([]byte("key-0"), jobA), "invalid_token"},
		{"no token", "/view/" + jobA, "malformed_job_id"},
		{"not a job id", "/view/..%2f..%2fetc/" + good, "malformed_job_id"},
		{"unknown job with a valid token", jobpage.Path([]byte("key-1"), "9b2d6c0e-1f7a-4c55-8a43-2f4a7f0d9c11"), "job_not_found"},
		{"expired job", jobpage.Path([]byte("key-1"), expired), "job_expired"},
	}
	var bodies []string
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _, logs, _ := newHandler(t, "key-1")
			h.Jobs.(fakeJobs)[jobB] = other
			h.Jobs.(fakeJobs)[expired] = old
			resp := get(h, tt.path)
			if resp.StatusCode != http.StatusNotFound {
				t.Fatalf("status %d, want 404", resp.StatusCode)
			}
			bodies = append(bodies, resp.Body)
			if resp.Headers["Cache-Control"] != "no-store" {
				t.Error("a 404 must not be cached either")
			}
			var ev map[string]any
			if err := json.Unmarshal(bytes.TrimSpace(logs.Bytes()), &ev); err != nil {
				t.Fatalf("want one JSON log record, got %q", logs.String())
			}
			if ev["security_event"] != "jobpage_denied" || ev["reason"] != tt.reason || ev["source_ip"] != "203.0.113.9" {
				t.Errorf("security event = %v, want jobpage_denied/%s with the source", ev, tt.reason)
			}
			for _, secret := range []string{good, "key-1", strings.TrimPrefix(tt.path, "/view/"+jobA+"/")} {
				if secret != "" && strings.Contains(logs.String(), secret) && secret != jobA {
					t.Errorf("log contains %q", secret)
				}
			}
		})
	}
	for _, b := range bodies {
		if b != bodies[0] {
			t.Errorf("404 bodies differ (%q vs %q): they must not tell a wrong token from a missing job", b, bodies[0])
		}
	}
}

func TestRotatedKeyIsPickedUpAndOldLinksDie(t *testing.T) {
	h, _, _, sm := newHandler(t, "key-1")
	if r := get(h, jobpage.Path([]byte("key-1"), jobA)); r.StatusCode != http.StatusOK {
		t.Fatalf("before rotation: %d", r.StatusCode)
	}
	sm.value = "key-2" // rotated; this environment still caches key-1
	if r := get(h, jobpage.Path([]byte("key-2"), jobA)); r.StatusCode != http.StatusOK {
		t.Errorf("a link minted with the new key: %d, want 200 after a fresh read", r.StatusCode)
	}
	if r := get(h, jobpage.Path([]byte("key-1"), jobA)); r.StatusCode != http.StatusNotFound {
		t.Errorf("a link minted with the old key: %d, want 404", r.StatusCode)
	}
}

func TestPageOfAJobStillRunning(t *testing.T) {
	h, _, _, _ := newHandler(t, "key-1")
	j := h.Jobs.(fakeJobs)[jobA]
	j.State, j.Stage, j.Artifacts.Result, j.Swarm = job.Running, domain.StageLLM, "", nil
	h.Deliveries = fakeRows{}
	r := get(h, jobpage.Path([]byte("key-1"), jobA))
	if r.StatusCode != http.StatusOK || !strings.Contains(r.Body, "has not finished yet") || !strings.Contains(r.Body, "Nothing delivered yet") ||
		!strings.Contains(r.Body, "current stage llm") {
		t.Errorf("running job: %d %s", r.StatusCode, r.Body)
	}
}

func TestKeyUnreadableIs503(t *testing.T) {
	h, _, _, sm := newHandler(t, "key-1")
	sm.err = failure.Errorf(failure.NetworkTimeout, "secrets manager down")
	if r := get(h, jobpage.Path([]byte("key-1"), jobA)); r.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("status %d, want 503", r.StatusCode)
	}
}
