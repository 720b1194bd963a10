package swarm_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

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

func TestReviewAuthor(t *testing.T) {
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
			got, err := c.ReviewAuthor(context.Background(), tt.review)
			if got != tt.want || failure.Classify(err) != tt.wantClass || reads != tt.wantReads {
				t.Fatalf("ReviewAuthor = %q, %v (class %s, %d reads); want %q, class %q, %d reads", got, err, failure.Classify(err), reads, tt.want, tt.wantClass, tt.wantReads)
			}
		})
	}
}

func TestShelvedAndSameOrigin(t *testing.T) {
	for status, want := range map[string][2]bool{"shelved": {true, true}, "submitted": {false, true}, "committed": {false, true}, " Shelved ": {true, true}, "pending": {false, false}, "{status}": {false, false}} {
		if s, ok := swarm.Shelved(status); s != want[0] || ok != want[1] {
			t.Errorf("Shelved(%q) = %v, %v; want %v", status, s, ok, want)
		}
	}
	base := "https://swarm.example.com"
	for u, want := range map[string]bool{
		"https://swarm.example.com/api/v11/reviews/1/testruns/2/X": true,
		"https://SWARM.example.com/x":                              true,
		"http://swarm.example.com/x":                               false, // scheme downgrade
		"https://swarm.example.com:8443/x":                         false,
		"https://swarm.example.com.evil.io/x":                      false,
		"https://user:pw@swarm.example.com/x":                      false,
		"file:///etc/passwd":                                       false,
		"/relative":                                                false,
	} {
		if got := swarm.SameOrigin(base, u); got != want {
			t.Errorf("SameOrigin(%q) = %v, want %v", u, got, want)
		}
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

func TestReporterCallsEachCallbackOnce(t *testing.T) {
	s := startStandin(t)
	run := s.StartRun(12340, 1)
	j := &job.Job{ID: "job-1", Changelist: 12348, ReviewVersion: 1, Swarm: &job.SwarmRun{Review: 12340, JobURL: "https://api.example/prod/jobs/job-1",
		UpdateURL: run.Update, PassURL: run.Pass, FailURL: run.Fail}}
	rec := &memRecorder{run: j.Swarm}
	r := &swarm.Reporter{Swarm: &swarm.Client{}, Jobs: rec, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ctx := context.Background()

	// Swarm is briefly unavailable: the pass callback fails retryably and is not recorded.
	s.FailNext("pass", 503)
	if err := r.Update(ctx, j); err != nil {
		t.Fatal(err)
	}
	err := r.Pass(ctx, j, 3)
	if !failure.Classify(err).Retryable() || j.Swarm.PassAt != "" {
		t.Fatalf("pass during an outage: %v (class %s), recorded %q", err, failure.Classify(err), j.Swarm.PassAt)
	}
	if strings.Contains(err.Error(), run.Pass) {
		t.Fatal("the error names the callback URL with Swarm's token")
	}
	// The stage retries; then a redelivery of the finished job calls nothing.
	for range 2 {
		if err := r.Update(ctx, j); err != nil {
			t.Fatal(err)
		}
		if err := r.Pass(ctx, j, 3); err != nil {
			t.Fatal(err)
		}
	}
	calls := s.Calls(run.ID)
	if len(calls) != 2 || calls[0].Kind != "update" || calls[1].Kind != "pass" {
		t.Fatalf("calls %+v, want update then pass, once each", calls)
	}
	if calls[0].Status != "running" || calls[0].URL != j.Swarm.JobURL || calls[0].ContentType != "application/json" {
		t.Fatalf("update %+v: want status running and the job link", calls[0])
	}
	if len(calls[1].Messages) != 1 || !strings.Contains(calls[1].Messages[0], "3 findings") {
		t.Fatalf("pass messages %q: want the finding count", calls[1].Messages)
	}

	// A callback Swarm refuses for good is classified as such.
	prefix := strings.TrimSuffix(run.Fail, "/fail")
	wrongToken := prefix[:strings.LastIndex(prefix, "/")] + "/WRONGTOKEN/fail"
	other := &job.Job{ID: "job-2", Swarm: &job.SwarmRun{Review: 12340, FailURL: wrongToken}}
	rec.run = other.Swarm
	if err := r.Fail(ctx, other, failure.AuthDenied); failure.Classify(err) != failure.AuthDenied {
		t.Fatalf("fail with a wrong run token: %v, want AUTH_DENIED (403)", err)
	}
	// A job that is not from Swarm calls nothing.
	if err := r.Pass(ctx, &job.Job{ID: "job-3"}, 0); err != nil {
		t.Fatal(err)
	}
	if n := len(s.Calls(run.ID)); n != 2 {
		t.Fatalf("%d calls recorded after refused ones, want still 2", n)
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
func TestReviewAuthorReadsSwarms200Unauthorized(t *testing.T) {
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
			got, err := c.ReviewAuthor(context.Background(), 7)
			if got != tt.want || failure.Classify(err) != tt.wantClass {
				t.Fatalf("ReviewAuthor = %q, %v (class %s); want %q, class %q", got, err, failure.Classify(err), tt.want, tt.wantClass)
			}
		})
	}
}
