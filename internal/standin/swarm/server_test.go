package swarm

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The stand-in's side of docs/reference/swarm.md: how a test run's request
// is sent and judged, and what the reviews API and callbacks accept.
func TestRunTestFollowsTheReference(t *testing.T) {
	type seen struct{ method, path, query, ctype, auth, body string }
	var got seen
	status := http.StatusOK
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = seen{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Content-Type"), r.Header.Get("Authorization"), string(b)}
		w.WriteHeader(status)
	}))
	defer target.Close()
	s := NewServer(Options{User: "u", Ticket: "t"})
	if _, err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	run := s.StartRun(40, 3)

	tests := []struct {
		name       string
		def        TestDefinition
		answer     int
		want       seen
		wantFailed bool
	}{
		{"json body: POST, strings, static header",
			TestDefinition{URL: target.URL + "/hook", Body: `{"v":"{version}","s":"{status}"}`, Headers: map[string]string{"Authorization": "Bearer x"}},
			200, seen{"POST", "/hook", "", "application/json", "Bearer x", `{"v":"3","s":"shelved"}`}, false},
		{"no body: GET, URL placeholders encoded",
			TestDefinition{URL: target.URL + "/hook?pass={pass}"},
			200, seen{method: "GET", path: "/hook", query: "pass=" + strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(run.Pass, ":", "%3A"), "/", "%2F"), "?", "%3F")}, false},
		{"non-2xx fails the run", TestDefinition{URL: target.URL + "/hook", Body: `{}`}, 401, seen{"POST", "/hook", "", "application/json", "", `{}`}, true},
		{"headers carry no placeholders", TestDefinition{URL: target.URL + "/h", Body: `{}`, Headers: map[string]string{"Authorization": "{review}"}},
			202, seen{"POST", "/h", "", "application/json", "{review}", `{}`}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status = tt.answer
			out, err := s.RunTest(context.Background(), tt.def, run, 12348, "shelved")
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want || out.Failed != tt.wantFailed {
				t.Fatalf("sent %+v (failed %v), want %+v (failed %v)", got, out.Failed, tt.want, tt.wantFailed)
			}
		})
	}
	if _, err := s.RunTest(context.Background(), TestDefinition{URL: target.URL, Body: `{"shelved":{status}}`}, run, 1, "shelved"); err == nil {
		t.Fatal("a body that is not JSON after substitution must be refused")
	}
}

// TestReviewsAPIAndCallbacks: the reviews API in v9 and v11 shapes, and
// the callbacks as Swarm 2022.1 serves them (reference: "Test-run
// callbacks"): on http://localhost without external_url, 401 for a wrong
// uuid, 404 for an unknown run, {update} POST-only JSON with three keys,
// {pass}/{fail} reading only a url and never a message.
func TestReviewsAPIAndCallbacks(t *testing.T) {
	s := NewServer(Options{User: "u", Ticket: "t"})
	base, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.AddReview(Review{ID: 40, Author: "bob", Change: 41, Version: 1})
	run := s.StartRun(40, 1)
	if !strings.HasPrefix(run.Update, "http://localhost/api/v10/testruns/") || !strings.Contains(run.Pass, "/pass/") {
		t.Fatalf("callbacks %q, %q: want Swarm's v10 shapes on http://localhost", run.Update, run.Pass)
	}
	on := func(u string) string { return base + strings.TrimPrefix(u, "http://localhost") }
	do := func(method, u, user, ctype, body string) (int, map[string]any) {
		req, _ := http.NewRequest(method, u, strings.NewReader(body))
		if user != "" {
			req.SetBasicAuth(user, "t")
		}
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var doc map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&doc)
		return resp.StatusCode, doc
	}
	const form, js = "application/x-www-form-urlencoded", "application/json"
	tests := []struct {
		name, method, url, user, ctype, body string
		want                                 int
	}{
		{"review with a login", "GET", base + "/api/v11/reviews/40", "u", "", "", 200},
		{"review in v9", "GET", base + "/api/v9/reviews/40", "u", "", "", 200},
		{"review without a login", "GET", base + "/api/v11/reviews/40", "", "", "", 401},
		{"review with a wrong login", "GET", base + "/api/v11/reviews/40", "x", "", "", 401},
		{"unknown review", "GET", base + "/api/v11/reviews/99", "u", "", "", 404},
		{"update", "POST", on(run.Update), "", js, `{"status":"running","messages":["m"],"url":"https://x/jobs/1"}`, 200},
		{"update by GET", "GET", on(run.Update), "", "", "", 405},
		{"update with an unknown status", "POST", on(run.Update), "", js, `{"status":"done"}`, 400},
		{"update with another key", "POST", on(run.Update), "", js, `{"status":"pass","title":"x"}`, 400},
		{"update with a wrong uuid", "POST", strings.Replace(on(run.Update), "testruns/701/", "testruns/701/0", 1), "", js, `{}`, 401},
		{"pass of an unknown run", "POST", strings.Replace(on(run.Pass), "/testruns/", "/testruns/9", 1), "", form, ``, 404},
		{"final update", "POST", on(run.Update), "", js, `{"status":"pass","messages":["` + strings.Repeat("x", 90) + `"]}`, 200},
		{"pass: messages ignored, url read from the form", "POST", on(run.Pass), "", form, `messages=ignored&url=https%3A%2F%2Fx%2Fview%2F1`, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, doc := do(tt.method, tt.url, tt.user, tt.ctype, tt.body)
			if code != tt.want {
				t.Fatalf("%s %s: %d %v, want %d", tt.method, tt.url, code, doc, tt.want)
			}
			if tt.name == "review with a login" {
				revs := doc["data"].(map[string]any)["reviews"].([]any)
				if revs[0].(map[string]any)["author"] != "bob" {
					t.Fatalf("v11 answer %v: want data.reviews[0].author bob", doc)
				}
			}
			if tt.name == "review in v9" && doc["review"].(map[string]any)["author"] != "bob" {
				t.Fatalf("v9 answer %v: want review.author bob", doc)
			}
		})
	}
	v := s.RunView(run.ID)
	if v.Status != "pass" || !v.Completed || v.URL != "https://x/view/1" || len(v.Messages) != 1 || v.Messages[0] != strings.Repeat("x", 80) {
		t.Fatalf("run shows %+v: want passed, the final update's message cut to 80 characters, the form's url", v)
	}
	// The call records the messages as sent; only the run shows them cut.
	if calls := s.Calls(run.ID); !slices.ContainsFunc(calls, func(c Call) bool {
		return c.Kind == "update" && slices.Equal(c.Messages, []string{strings.Repeat("x", 90)})
	}) {
		t.Fatalf("calls %+v: want the final update's message recorded as sent, 90 characters", calls)
	}
	// A {fail} with a JSON body: the message is never read.
	run2 := s.StartRun(40, 1)
	if code, _ := do("POST", on(run2.Fail), "", js, `{"messages":["from json"],"url":"https://x/y"}`); code != 200 {
		t.Fatalf("fail with JSON: %d", code)
	}
	if v := s.RunView(run2.ID); v.Status != "fail" || len(v.Messages) != 0 || v.URL != "" {
		t.Fatalf("fail with a JSON body shows %+v: want failed with no message and no link", v)
	}
}

// TestRunUUIDIsReviewTokenAndVersion: callbacks carry Review::getToken(),
// the review's upper-case UUID token plus ".v" and the head version
// (docs/reference/swarm.md, test-run callbacks): one token per review, the
// suffix following the version.
func TestRunUUIDIsReviewTokenAndVersion(t *testing.T) {
	s := NewServer(Options{})
	shape := regexp.MustCompile(`^http://localhost/api/v10/testruns/[0-9]+/([0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12})\.v([0-9]+)$`)
	var tokens []string
	for _, tt := range []struct {
		review  int64
		version int
	}{{40, 1}, {40, 3}, {41, 1}} {
		run := s.StartRun(tt.review, tt.version)
		m := shape.FindStringSubmatch(run.Update)
		if m == nil || m[2] != strconv.Itoa(tt.version) {
			t.Fatalf("review %d v%d: {update} %q is not <origin>/api/v10/testruns/<id>/<TOKEN>.v%d", tt.review, tt.version, run.Update, tt.version)
		}
		if !strings.HasSuffix(run.Pass, "/pass/"+m[1]+".v"+m[2]) || !strings.HasSuffix(run.Fail, "/fail/"+m[1]+".v"+m[2]) {
			t.Errorf("{pass} %q / {fail} %q do not carry the uuid of {update}", run.Pass, run.Fail)
		}
		tokens = append(tokens, m[1])
	}
	if tokens[0] != tokens[1] || tokens[0] == tokens[2] {
		t.Errorf("tokens %q: want one per review", tokens)
	}
}
