package swarm_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	swarmstandin "github.com/criticizer/criticizer/internal/standin/swarm"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/swarm"
)

func startStandin(t *testing.T) *swarmstandin.Server {
	t.Helper()
	s := swarmstandin.NewServer(swarmstandin.Options{User: "criticizer", Ticket: "ticket-1"})
	if _, err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	s.AddReview(swarmstandin.Review{ID: 12340, Author: "bob", Change: 12348, Version: 1})
	return s
}

func TestGetReviewAuthor(t *testing.T) {
	s := startStandin(t)
	tests := []struct {
		name      string
		review    int64
		ticket    []string // the ticket per read: cached, then fresh
		want      string
		wantClass failure.Class
		wantReads int
	}{
		{"author of the review", 12340, []string{"ticket-1"}, "bob", "", 1},
		{"rotated ticket: the fresh read works", 12340, []string{"old-ticket", "ticket-1"}, "bob", "", 2},
		{"wrong ticket twice", 12340, []string{"bad", "bad"}, "", failure.AuthDenied, 2},
		{"unknown review", 99, []string{"ticket-1"}, "", failure.NotFound, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reads := 0
			c := &swarm.Client{BaseURL: s.URL(), Credentials: func(_ context.Context, fresh bool) (swarm.Credentials, error) {
				if fresh != (reads > 0) {
					t.Errorf("read %d: fresh=%v", reads, fresh)
				}
				tk := tt.ticket[min(reads, len(tt.ticket)-1)]
				reads++
				return swarm.Credentials{User: "criticizer", Ticket: tk}, nil
			}}
			r, err := c.GetReview(context.Background(), tt.review)
			got := r.Author
			if got != tt.want || failure.Classify(err) != tt.wantClass || reads != tt.wantReads {
				t.Fatalf("GetReview author = %q, %v (class %s, %d reads); want %q, class %q, %d reads", got, err, failure.Classify(err), reads, tt.want, tt.wantClass, tt.wantReads)
			}
		})
	}
}

func TestShelved(t *testing.T) {
	for status, want := range map[string][2]bool{"shelved": {true, true}, "submitted": {false, true}, "committed": {false, true}, " Shelved ": {true, true}, "pending": {false, false}, "{status}": {false, false}} {
		if s, ok := swarm.Shelved(status); s != want[0] || ok != want[1] {
			t.Errorf("Shelved(%q) = %v, %v; want %v", status, s, ok, want)
		}
	}
}

// TestRunCallbacks: callbacks are accepted by path shape whatever origin
// Swarm put on them (http://localhost without external_url) and rebuilt on
// SWARM_URL; anything else names the refused field.
func TestRunCallbacks(t *testing.T) {
	const base = "https://swarm.example.com/sw/"
	// Review::getToken(): the review's upper-case token, ".v", the head
	// version (docs/reference/swarm.md, test-run callbacks).
	const id = "FAE4501C-1E7B-4C65-9A5F-FF710601BC3F.v3"
	cb := func(origin, kind string) string {
		if kind != "" {
			kind += "/"
		}
		return origin + "/api/v10/testruns/42/" + kind + id
	}
	want := [3]string{"https://swarm.example.com/sw/api/v10/testruns/42/" + id, "https://swarm.example.com/sw/api/v10/testruns/42/pass/" + id, "https://swarm.example.com/sw/api/v10/testruns/42/fail/" + id}
	tests := []struct {
		name              string
		update, pass, fai string
		wantField         string
	}{
		{"localhost, as the cron worker's request gives", cb("http://localhost", ""), cb("http://localhost", "pass"), cb("http://localhost", "fail"), ""},
		{"external_url with a sub-path", cb("https://public.example/swarm", ""), cb("https://public.example/swarm", "pass"), cb("https://public.example/swarm", "fail"), ""},
		{"an attacker's host: still called on SWARM_URL", cb("https://evil.example", ""), cb("https://evil.example", "pass"), cb("https://evil.example", "fail"), ""},
		{"not a callback path", "https://swarm.example.com/x", "", "", "update"},
		{"another API", "", "https://swarm.example.com/api/v9/comments", "", "pass"},
		{"kinds swapped", cb("http://localhost", "fail"), cb("http://localhost", "pass"), cb("http://localhost", ""), "update"},
		{"two runs", cb("http://localhost", ""), "http://localhost/api/v10/testruns/43/pass/" + id, "", "pass"},
		{"a query", cb("http://localhost", "") + "?to=evil", "", "", "update"},
		{"a login", cb("http://u:p@localhost", ""), "", "", "update"},
		{"not http", cb("file://localhost", ""), "", "", "update"},
		{"unsubstituted", "{update}", "", "", "update"},
		{"path traversal", "http://localhost/api/v10/testruns/42/../../comments/" + id, "", "", "update"},
		{"two versions of one review", cb("http://localhost", ""), strings.Replace(cb("http://localhost", "pass"), ".v3", ".v4", 1), "", "pass"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, field, err := swarm.RunCallbacks(base, tt.update, tt.pass, tt.fai)
			if field != tt.wantField || (err != nil) != (tt.wantField != "") {
				t.Fatalf("RunCallbacks: field %q, %v; want field %q", field, err, tt.wantField)
			}
			if tt.wantField == "" && got != want {
				t.Fatalf("RunCallbacks = %q, want %q", got, want)
			}
		})
	}
}

// TestCallbackUUIDs: the uuid Swarm puts on a callback is accepted in
// Swarm's shape (token, ".v", head version) and kept whole when the
// callback is rebuilt on SWARM_URL; anything else in its place is refused.
func TestCallbackUUIDs(t *testing.T) {
	for _, tt := range []struct {
		name, uuid string
		ok         bool
	}{
		{"Swarm's token and head version", "FAE4501C-1E7B-4C65-9A5F-FF710601BC3F.v3", true},
		{"a two-digit version", "FAE4501C-1E7B-4C65-9A5F-FF710601BC3F.v12", true},
		{"the token alone (no source; tolerated)", "FAE4501C-1E7B-4C65-9A5F-FF710601BC3F", true},
		{"a lower-case token", "fae4501c-1e7b-4c65-9a5f-ff710601bc3f.v1", true},
		{"version 0", "FAE4501C-1E7B-4C65-9A5F-FF710601BC3F.v0", false},
		{"no version number", "FAE4501C-1E7B-4C65-9A5F-FF710601BC3F.v", false},
		{"two versions", "FAE4501C-1E7B-4C65-9A5F-FF710601BC3F.v3.v4", false},
		{"another suffix", "FAE4501C-1E7B-4C65-9A5F-FF710601BC3F.json", false},
		{"a dot-dot segment", "..", false},
		{"too short", "FAE4.v3", false},
		{"an encoded dot", "FAE4501C-1E7B-4C65-9A5F-FF710601BC3F%2Ev3", false},
		{"a path after it", "FAE4501C-1E7B-4C65-9A5F-FF710601BC3F.v3/x", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, kind := range []string{"", "pass/", "fail/"} {
				raw := "http://localhost/api/v10/testruns/706/" + kind + tt.uuid
				c, err := swarm.ParseCallback(raw)
				if (err == nil) != tt.ok {
					t.Fatalf("ParseCallback(%s) = %+v, %v; want ok=%v", raw, c, err, tt.ok)
				}
				if tt.ok && (c.UUID != tt.uuid || c.Run != 706 || c.On("https://swarm.example.com") != "https://swarm.example.com/api/v10/testruns/706/"+kind+tt.uuid) {
					t.Errorf("ParseCallback(%s) = %+v, rebuilt %s", raw, c, c.On("https://swarm.example.com"))
				}
			}
		})
	}
}

// memRecorder is the job record's callback fields, with the store's
// conditional-write semantics.
type memRecorder struct{ run *job.SwarmRun }

func (m *memRecorder) RecordCallback(_ context.Context, _ string, c job.Callback, now time.Time) error {
	at := now.Format(time.RFC3339)
	field := map[job.Callback]*string{job.CallbackUpdate: &m.run.UpdateAt, job.CallbackPass: &m.run.PassAt, job.CallbackFail: &m.run.FailAt}[c]
	if *field != "" {
		return job.ErrConflict
	}
	*field = at
	return nil
}

// swarmRunJob is a job holding run's callbacks as the webhook keeps them:
// the stand-in puts http://localhost on them (a default installation), and
// they are rebuilt on the stand-in's own address (SWARM_URL).
func swarmRunJob(t *testing.T, s *swarmstandin.Server, id string, run swarmstandin.Run) *job.Job {
	t.Helper()
	cbs, field, err := swarm.RunCallbacks(s.URL(), run.Update, run.Pass, run.Fail)
	if err != nil {
		t.Fatalf("swarm.%s: %v", field, err)
	}
	return &job.Job{ID: id, Changelist: 12348, ReviewVersion: 1, Swarm: &job.SwarmRun{Review: 12340, JobURL: "https://api.example/prod/view/" + id,
		UpdateURL: cbs[0], PassURL: cbs[1], FailURL: cbs[2]}}
}

func TestReporterCallsEachCallbackOnce(t *testing.T) {
	s := startStandin(t)
	run := s.StartRun(12340, 1)
	if !strings.HasPrefix(run.Update, "http://localhost/api/v10/testruns/") {
		t.Fatalf("the stand-in's {update} is %q, want it on http://localhost as a default Swarm builds it", run.Update)
	}
	j := swarmRunJob(t, s, "job-1", run)
	rec := &memRecorder{run: j.Swarm}
	r := &swarm.Reporter{Swarm: &swarm.Client{}, Jobs: rec, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ctx := context.Background()
	done := swarm.Outcome{Findings: 3, Where: "posted on the review"}

	// Swarm is briefly unavailable: the pass callback fails retryably and is not recorded.
	s.FailNext("pass", 503)
	if err := r.Update(ctx, j); err != nil {
		t.Fatal(err)
	}
	if v := s.RunView(run.ID); v.Status != "running" || v.URL != j.Swarm.JobURL {
		t.Fatalf("run after {update}: %+v, want running with the job link", v)
	}
	err := pass(ctx, r, j, done)
	if !failure.Classify(err).Retryable() || j.Swarm.PassAt != "" {
		t.Fatalf("pass during an outage: %v (class %s), recorded %q", err, failure.Classify(err), j.Swarm.PassAt)
	}
	if strings.Contains(err.Error(), j.Swarm.PassURL) || strings.Contains(err.Error(), "testruns") {
		t.Fatal("the error names the callback URL with Swarm's uuid")
	}
	// The stage retries; then a redelivery of the finished job calls nothing.
	for range 2 {
		if err := r.Update(ctx, j); err != nil {
			t.Fatal(err)
		}
		if err := pass(ctx, r, j, done); err != nil {
			t.Fatal(err)
		}
	}
	calls := s.Calls(run.ID)
	var kinds []string
	for _, c := range calls {
		kinds = append(kinds, c.Kind+":"+c.Status)
	}
	// running once; the final {update} once per attempt at the outcome; {pass} once.
	if !slices.Equal(kinds, []string{"update:running", "update:pass", "update:pass", "pass:pass"}) {
		t.Fatalf("calls %v", kinds)
	}
	if c := calls[0]; c.ContentType != "application/json" || c.Method != http.MethodPost {
		t.Fatalf("{update} sent as %s %s, want a JSON POST", c.Method, c.ContentType)
	}
	if c := calls[3]; c.ContentType != "application/x-www-form-urlencoded" || c.URL != j.Swarm.JobURL {
		t.Fatalf("{pass} %+v: want the link as a form field (Swarm reads nothing else there)", c)
	}
	// What a reviewer sees: passed, complete, the count and the link.
	v := s.RunView(run.ID)
	if v.Status != "pass" || !v.Completed || v.URL != j.Swarm.JobURL || len(v.Messages) != 1 || !strings.Contains(v.Messages[0], "3 findings") {
		t.Fatalf("the run shows %+v: want passed, complete, with the finding count and the job link", v)
	}

	// A callback Swarm refuses for good (a wrong uuid: 401) is classified as such.
	wrong := swarmRunJob(t, s, "job-2", run)
	wrong.Swarm.UpdateURL = ""
	wrong.Swarm.FailURL = strings.Replace(wrong.Swarm.FailURL, "/fail/", "/fail/0", 1)
	rec.run = wrong.Swarm
	if err := r.Fail(ctx, wrong, failure.AuthDenied); failure.Classify(err) != failure.AuthDenied {
		t.Fatalf("fail with a wrong run uuid: %v, want AUTH_DENIED (401)", err)
	}
	// A job that is not from Swarm calls nothing.
	if err := pass(ctx, r, &job.Job{ID: "job-3"}, swarm.Outcome{}); err != nil {
		t.Fatal(err)
	}
	if n := len(s.Calls(run.ID)); n != 4 {
		t.Fatalf("%d calls recorded after refused ones, want still 4", n)
	}
}

// TestReporterOutcomes: what the run shows for a gated review, a dead
// letter and long messages, as Swarm keeps them (80 characters, 10 at most).
func TestReporterOutcomes(t *testing.T) {
	s := startStandin(t)
	ctx := context.Background()
	tests := []struct {
		name       string
		act        func(r *swarm.Reporter, j *job.Job) error
		wantStatus string
		wantText   []string
	}{
		{"gated: findings at or above high block", func(r *swarm.Reporter, j *job.Job) error {
			return pass(ctx, r, j, swarm.Outcome{Findings: 5, Gate: "high", Blocking: 2, Worst: "critical security finding in retry.go line 12", Where: "posted on the review"})
		}, "fail", []string{"2 finding(s) at or above high", "critical security finding in retry.go line 12"}},
		{"gate on, nothing at or above it", func(r *swarm.Reporter, j *job.Job) error {
			return pass(ctx, r, j, swarm.Outcome{Findings: 4, Gate: "high", Where: "e-mailed to the author"})
		}, "pass", []string{"4 findings"}},
		{"dead letter: could not run, not findings", func(r *swarm.Reporter, j *job.Job) error {
			return r.Fail(ctx, j, failure.Upstream5xx)
		}, "fail", []string{"could not run the review", "UPSTREAM_5XX", "Not a finding"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := s.StartRun(12340, 1)
			j := swarmRunJob(t, s, "job-"+strconv.FormatInt(run.ID, 10), run)
			r := &swarm.Reporter{Swarm: &swarm.Client{}, Jobs: &memRecorder{run: j.Swarm}, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
			if err := tt.act(r, j); err != nil {
				t.Fatal(err)
			}
			v := s.RunView(run.ID)
			all := strings.Join(v.Messages, "\n")
			for _, m := range v.Messages {
				if utf8.RuneCountInString(m) > 80 {
					t.Errorf("message over Swarm's 80 characters (Swarm cuts it): %q", m)
				}
			}
			if v.Status != tt.wantStatus || !v.Completed || v.URL != j.Swarm.JobURL {
				t.Fatalf("run %+v: want %s, complete, with the job link", v, tt.wantStatus)
			}
			for _, w := range tt.wantText {
				if !strings.Contains(all, w) {
					t.Errorf("run messages %q lack %q", v.Messages, w)
				}
			}
		})
	}
}

func TestSubstituteEscapesLikeSwarm(t *testing.T) {
	body, err := swarmstandin.Substitute(`{"d":"{description}","v":"{version}"}`, map[string]string{"description": "fix \"quotes\"\nand lines", "version": "3"})
	if err != nil || body != `{"d":"fix \"quotes\"\nand lines","v":"3"}` {
		t.Fatalf("Substitute = %s, %v", body, err)
	}
	if _, err := swarmstandin.Substitute(`{"shelved":{status}}`, map[string]string{"status": "shelved"}); err == nil {
		t.Fatal("a placeholder outside a JSON string must not yield valid JSON")
	}
}

// Some Swarm releases refuse a login with HTTP 200 and {"error":
// "Unauthorized"}: that is a refused login (retried once with fresh
// credentials), not an answer without an author.
func TestGetReviewReadsSwarms200Unauthorized(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pass, _ := r.BasicAuth(); pass != "fresh" {
			fmt.Fprint(w, `{"error": "Unauthorized"}`)
			return
		}
		fmt.Fprint(w, `{"error":null,"messages":[],"data":{"reviews":[{"id":7,"author":"alice"}]}}`)
	}))
	defer srv.Close()
	for _, tt := range []struct {
		name      string
		fresh     string
		want      string
		wantClass failure.Class
	}{
		{"the fresh ticket works", "fresh", "alice", ""},
		{"refused twice", "stale", "", failure.AuthDenied},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &swarm.Client{BaseURL: srv.URL, Credentials: func(_ context.Context, fresh bool) (swarm.Credentials, error) {
				if fresh {
					return swarm.Credentials{User: "criticizer", Ticket: tt.fresh}, nil
				}
				return swarm.Credentials{User: "criticizer", Ticket: "stale"}, nil
			}}
			r, err := c.GetReview(context.Background(), 7)
			got := r.Author
			if got != tt.want || failure.Classify(err) != tt.wantClass {
				t.Fatalf("GetReview author = %q, %v (class %s); want %q, class %q", got, err, failure.Classify(err), tt.want, tt.wantClass)
			}
		})
	}
}

// A review's participants split into users and groups (swarm-group-<name>)
// and its projects read as Swarm writes them: an object of branch ids, or
// [] for none (PHP's empty array).
func TestGetReviewParticipantsAndProjects(t *testing.T) {
	for _, tc := range []struct {
		name, body   string
		users        string
		groups       string
		projects     string
		wantSchemaOK bool
	}{
		{"groups and projects", `{"review":{"author":"bob","participants":{"bob":[],"carol":{"required":true},"swarm-group-leads":{"required":"1"}},"projects":{"game":["main","dev"]},"versions":[{"change":2}]}}`,
			"[bob carol]", "[leads]", "map[game:[main dev]]", true},
		{"no projects: []", `{"review":{"author":"bob","participants":{"bob":[]},"projects":[],"versions":[{"change":2}]}}`, "[bob]", "[]", "map[]", true},
		{"projects not a list of branches", `{"review":{"author":"bob","projects":"game","versions":[{"change":2}]}}`, "[]", "[]", "map[]", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, tc.body) }))
			t.Cleanup(srv.Close)
			c := &swarm.Client{BaseURL: srv.URL, Credentials: func(context.Context, bool) (swarm.Credentials, error) {
				return swarm.Credentials{User: "u", Ticket: "t"}, nil
			}}
			r, err := c.GetReview(context.Background(), 1)
			if (err == nil) != tc.wantSchemaOK {
				t.Fatalf("GetReview: %v, want ok %v", err, tc.wantSchemaOK)
			}
			if got := fmt.Sprint(r.Participants, r.Groups, r.Projects); got != fmt.Sprint(tc.users, " ", tc.groups, " ", tc.projects) && tc.wantSchemaOK {
				t.Errorf("read %s, want %s %s %s", got, tc.users, tc.groups, tc.projects)
			}
		})
	}
}

// pass ends j's run with o as the notify stage does (RunReport.Send).
func pass(ctx context.Context, r *swarm.Reporter, j *job.Job, o swarm.Outcome) error {
	_, err := swarm.RunReport{Reporter: r}.Send(ctx, swarm.Finished{Job: j, Outcome: o})
	return err
}
