package webhook

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"

	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/store"
	"github.com/criticizer/criticizer/shared/swarm"
)

// recordingJobs stores created jobs and counts reads.
type recordingJobs struct {
	created []*job.Job
	gets    int
}

func (r *recordingJobs) Create(_ context.Context, j *job.Job, _ *store.Idempotency) error {
	r.created = append(r.created, j)
	return nil
}

func (r *recordingJobs) Get(_ context.Context, id string) (*job.Job, error) {
	r.gets++
	for _, j := range r.created {
		if j.ID == id {
			return j, nil
		}
	}
	return nil, job.ErrNotFound
}

const swarmBase = "https://swarm.example.com"

// swarmRunUUID is the test run's uuid, the credential its callbacks carry:
// Review::getToken(), the review's upper-case token, ".v" and the head
// version (docs/reference/swarm.md, test-run callbacks).
const swarmRunUUID = "FAE4501C-1E7B-4C65-9A5F-FF710601BC3F.v1"

// swarmCallback is a callback as Swarm 2022.1 builds it without an
// external_url: on http://localhost, the origin of its cron worker's request
// (docs/reference/swarm.md, test-run callbacks).
func swarmCallback(origin, kind string) string {
	if kind != "" {
		kind += "/"
	}
	return origin + "/api/v10/testruns/701/" + kind + swarmRunUUID
}

// swarmBody is a test definition body after Swarm's substitution: every
// value a string.
func swarmBody(status, update string) string {
	return `{"changelist_id":"12348","review_version":"3","idempotency_key":"swarm-12340-3","source":"swarm",` +
		`"swarm":{"review":"12340","status":"` + status + `","update":"` + update + `",` +
		`"pass":"` + swarmCallback("http://localhost", "pass") + `","fail":"` + swarmCallback("http://localhost", "fail") + `"}}`
}

func swarmHandler(jobs *recordingJobs, tokens func(fresh bool) [][]byte) *Handler {
	h := &Handler{Jobs: jobs, Queue: nopQueue{}, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), ReplayWindow: time.Minute,
		Keys:     func(context.Context, bool) ([][]byte, error) { return [][]byte{[]byte("hmac-key-0123456789")}, nil },
		SwarmURL: swarmBase}
	if tokens != nil {
		h.SwarmTokens = func(_ context.Context, fresh bool) ([][]byte, error) { return tokens(fresh), nil }
	}
	return h
}

func TestSwarmBearerRequests(t *testing.T) {
	update := swarmCallback("http://localhost", "")
	tests := []struct {
		name        string
		headers     map[string]string
		body        string
		method      string
		resource    string
		disabled    bool
		wantStatus  int
		wantCode    string
		wantShelved bool
	}{
		{"current token, shelved", map[string]string{"Authorization": "Bearer tok-current"}, swarmBody("shelved", update), "POST", "/webhooks/changelist", false, 202, "", true},
		{"previous token during rotation", map[string]string{"Authorization": "Bearer tok-previous"}, swarmBody("shelved", update), "POST", "/webhooks/changelist", false, 202, "", true},
		{"header names and scheme in any case", map[string]string{"authorization": "bearer tok-current", "content-type": "application/json; charset=utf-8"}, swarmBody("shelved", update), "POST", "/webhooks/changelist", false, 202, "", true},
		{"submitted review", map[string]string{"Authorization": "Bearer tok-current"}, swarmBody("submitted", update), "POST", "/webhooks/changelist", false, 202, "", false},
		{"committed, as the guide spells it", map[string]string{"Authorization": "Bearer tok-current"}, swarmBody("committed", update), "POST", "/webhooks/changelist", false, 202, "", false},
		{"wrong token", map[string]string{"Authorization": "Bearer tok-wrong"}, swarmBody("shelved", update), "POST", "/webhooks/changelist", false, 401, "invalid_token", false},
		{"token is a prefix of the real one", map[string]string{"Authorization": "Bearer tok-curr"}, swarmBody("shelved", update), "POST", "/webhooks/changelist", false, 401, "invalid_token", false},
		{"Swarm auth off", map[string]string{"Authorization": "Bearer tok-current"}, swarmBody("shelved", update), "POST", "/webhooks/changelist", true, 401, "bearer_not_enabled", false},
		{"token on the status endpoint", map[string]string{"Authorization": "Bearer tok-current"}, "", "GET", "/jobs/{id}", false, 401, "bearer_not_accepted", false},
		{"token for another source", map[string]string{"Authorization": "Bearer tok-current"}, `{"changelist_id":1,"review_version":1,"idempotency_key":"k","source":"api"}`, "POST", "/webhooks/changelist", false, 403, "source_not_allowed", false},
		{"unknown status", map[string]string{"Authorization": "Bearer tok-current"}, swarmBody("pending", update), "POST", "/webhooks/changelist", false, 400, "invalid_field", false},
		{"placeholder left unsubstituted", map[string]string{"Authorization": "Bearer tok-current"}, swarmBody("shelved", "{update}"), "POST", "/webhooks/changelist", false, 400, "invalid_field", false},
		{"callback on external_url's origin and sub-path", map[string]string{"Authorization": "Bearer tok-current"}, swarmBody("shelved", swarmCallback("https://review.studio.example/swarm", "")), "POST", "/webhooks/changelist", false, 202, "", true},
		{"callback on another host: called on SWARM_URL", map[string]string{"Authorization": "Bearer tok-current"}, swarmBody("shelved", swarmCallback("https://attacker.example", "")), "POST", "/webhooks/changelist", false, 202, "", true},
		{"not a test-run callback", map[string]string{"Authorization": "Bearer tok-current"}, swarmBody("shelved", "https://swarm.example.com/x"), "POST", "/webhooks/changelist", false, 400, "invalid_field", false},
		{"another API path", map[string]string{"Authorization": "Bearer tok-current"}, swarmBody("shelved", swarmBase+"/api/v9/comments"), "POST", "/webhooks/changelist", false, 400, "invalid_field", false},
		{"pass callback given as update", map[string]string{"Authorization": "Bearer tok-current"}, swarmBody("shelved", swarmCallback(swarmBase, "pass")), "POST", "/webhooks/changelist", false, 400, "invalid_field", false},
		{"update of another run", map[string]string{"Authorization": "Bearer tok-current"}, swarmBody("shelved", swarmBase+"/api/v10/testruns/702/"+swarmRunUUID), "POST", "/webhooks/changelist", false, 400, "invalid_field", false},
		{"callback with a query", map[string]string{"Authorization": "Bearer tok-current"}, swarmBody("shelved", swarmCallback(swarmBase, "")+"?x=1"), "POST", "/webhooks/changelist", false, 400, "invalid_field", false},
		{"callback with credentials in it", map[string]string{"Authorization": "Bearer tok-current"}, swarmBody("shelved", swarmCallback("https://u:p@swarm.example.com", "")), "POST", "/webhooks/changelist", false, 400, "invalid_field", false},
		{"no token, no signature", nil, swarmBody("shelved", update), "POST", "/webhooks/changelist", false, 401, "missing_signature", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jobs := &recordingJobs{}
			freshReads := 0
			var tokens func(bool) [][]byte
			if !tt.disabled {
				tokens = func(fresh bool) [][]byte {
					if fresh {
						freshReads++
					}
					return [][]byte{[]byte("tok-current"), []byte("tok-previous")}
				}
			}
			h := swarmHandler(jobs, tokens)
			req := events.APIGatewayProxyRequest{HTTPMethod: tt.method, Resource: tt.resource, Path: "/webhooks/changelist", Body: tt.body, Headers: tt.headers,
				RequestContext: events.APIGatewayProxyRequestContext{DomainName: "abc.execute-api.eu-west-1.amazonaws.com", Path: "/prod/webhooks/changelist"}}
			if tt.resource == "/jobs/{id}" {
				req.Path, req.PathParameters = "/jobs/"+uuid.NewString(), map[string]string{}
			}
			resp, err := h.Handle(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d %s, want %d", resp.StatusCode, resp.Body, tt.wantStatus)
			}
			if tt.wantCode != "" && !strings.Contains(resp.Body, `"code":"`+tt.wantCode+`"`) {
				t.Fatalf("body %s, want code %s", resp.Body, tt.wantCode)
			}
			if tt.wantCode == "invalid_token" && freshReads != 1 {
				t.Fatalf("a mismatch re-read the token %d times, want once (rotation)", freshReads)
			}
			if tt.wantStatus != 202 {
				if len(jobs.created) != 0 {
					t.Fatal("a rejected request created a job")
				}
				return
			}
			j := jobs.created[0]
			if j.Source != "swarm" || j.Shelved != tt.wantShelved || j.Changelist != 12348 || j.ReviewVersion != 3 {
				t.Fatalf("job source %q shelved %v cl %d v%d", j.Source, j.Shelved, j.Changelist, j.ReviewVersion)
			}
			// Whatever origin Swarm put on them, the callbacks are kept on SWARM_URL.
			if j.Swarm == nil || j.Swarm.Review != 12340 || j.Swarm.UpdateURL != swarmCallback(swarmBase, "") ||
				j.Swarm.PassURL != swarmCallback(swarmBase, "pass") || j.Swarm.FailURL != swarmCallback(swarmBase, "fail") {
				t.Fatalf("swarm run %+v", j.Swarm)
			}
			if want := "https://abc.execute-api.eu-west-1.amazonaws.com/prod/jobs/" + j.ID; j.Swarm.JobURL != want {
				t.Fatalf("job link %q, want %q", j.Swarm.JobURL, want)
			}
			// The callback URLs carry Swarm's per-run token: never in the API's answers.
			if b, _ := json.Marshal(j); strings.Contains(string(b), swarmRunUUID) {
				t.Fatalf("the job's JSON form exposes the callback URLs: %s", b)
			}
		})
	}
}

func TestParseSwarm(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		wantField string // "" = valid
	}{
		{"every value a string", `{"changelist_id":"5","review_version":"2","idempotency_key":"swarm-4-2","source":"swarm","swarm":{"review":"4","status":"shelved"}}`, ""},
		{"source implied by the swarm object", `{"changelist_id":"5","review_version":"2","idempotency_key":"k","swarm":{"review":"4","status":"submitted"}}`, ""},
		{"source swarm without the run", `{"changelist_id":5,"review_version":2,"idempotency_key":"k","source":"swarm"}`, "swarm"},
		{"run with another source", `{"changelist_id":5,"review_version":2,"idempotency_key":"k","source":"api","swarm":{"review":"4","status":"shelved"}}`, "swarm"},
		{"review missing", `{"changelist_id":5,"review_version":2,"idempotency_key":"k","swarm":{"status":"shelved"}}`, "swarm.review"},
		{"review not a number", `{"changelist_id":5,"review_version":2,"idempotency_key":"k","swarm":{"review":"{review}","status":"shelved"}}`, "swarm.review"},
		{"status missing", `{"changelist_id":5,"review_version":2,"idempotency_key":"k","swarm":{"review":"4"}}`, "swarm.status"},
		{"shelved contradicts status", `{"changelist_id":5,"review_version":2,"idempotency_key":"k","shelved":false,"swarm":{"review":"4","status":"shelved"}}`, "shelved"},
		{"unknown swarm field", `{"changelist_id":5,"review_version":2,"idempotency_key":"k","swarm":{"review":"4","status":"shelved","branch":"main"}}`, "swarm.branch"},
		{"version placeholder left", `{"changelist_id":"5","review_version":"{version}","idempotency_key":"k","swarm":{"review":"4","status":"shelved"}}`, "review_version"},
		{"recipients named by a Swarm run", `{"changelist_id":5,"review_version":2,"idempotency_key":"k","recipients":["eve@example.com"],"swarm":{"review":"4","status":"shelved"}}`, "recipients"},
		{"relative callback", `{"changelist_id":5,"review_version":2,"idempotency_key":"k","swarm":{"review":"4","status":"shelved","pass":"/pass"}}`, "swarm.pass"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Parse([]byte(tt.body))
			if tt.wantField == "" {
				if err != nil || r.Swarm == nil || r.Source != "swarm" {
					t.Fatalf("Parse = %+v, %v; want a swarm request", r, err)
				}
				return
			}
			fe, ok := IsFieldError(err)
			if !ok || fe.Field != tt.wantField {
				t.Fatalf("Parse error %v, want one naming %s", err, tt.wantField)
			}
		})
	}
}

func TestContentTypes(t *testing.T) {
	key := []byte("unit-test-key-0123456789")
	body := `{"changelist_id":7,"review_version":1,"idempotency_key":"k"}`
	tests := []struct {
		ct   string
		want int
	}{
		{"application/json", 202},
		{"application/json; charset=utf-8", 202},
		{"Application/JSON;charset=UTF-8", 202},
		{"", 202}, // no header: the body decides
		{"application/jsonp", http.StatusUnsupportedMediaType},
		{"application/json-patch+json", http.StatusUnsupportedMediaType},
		{"application/jsonx; charset=utf-8", http.StatusUnsupportedMediaType},
		{"text/plain", http.StatusUnsupportedMediaType},
		{"application/x-www-form-urlencoded", http.StatusUnsupportedMediaType},
		{"application/json; charset", http.StatusUnsupportedMediaType}, // malformed parameters
	}
	for _, tt := range tests {
		t.Run(tt.ct, func(t *testing.T) {
			h := &Handler{Jobs: &recordingJobs{}, Queue: nopQueue{}, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), ReplayWindow: time.Minute,
				Keys: func(context.Context, bool) ([][]byte, error) { return [][]byte{key}, nil }}
			req := signed(key, body)
			if tt.ct != "" {
				req.Headers["Content-Type"] = tt.ct
			}
			resp, _ := h.Handle(context.Background(), req)
			if resp.StatusCode != tt.want {
				t.Fatalf("Content-Type %q: %d %s, want %d", tt.ct, resp.StatusCode, resp.Body, tt.want)
			}
		})
	}
}

func TestJobIDValidation(t *testing.T) {
	key := []byte("unit-test-key-0123456789")
	known := uuid.NewString()
	tests := []struct {
		name      string
		id        string
		want      int
		wantReads int
	}{
		{"a job", known, 200, 1},
		{"a job id nobody created", uuid.NewString(), 404, 1},
		{"3000 characters", strings.Repeat("a", 3000), 404, 0},
		{"not a UUID", "abc", 404, 0},
		{"UUID in capitals", strings.ToUpper(known), 404, 0},
		{"UUID in braces", "{" + known + "}", 404, 0},
		{"UUID with a suffix", known + "x", 404, 0},
		{"key injection", known + "#JOB", 404, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jobs := &recordingJobs{created: []*job.Job{job.New(known, "k", 7, 1, time.Now(), time.Minute)}}
			h := &Handler{Jobs: jobs, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), ReplayWindow: time.Minute,
				Keys: func(context.Context, bool) ([][]byte, error) { return [][]byte{key}, nil }}
			ts := time.Now().Unix()
			path := "/jobs/" + tt.id
			req := events.APIGatewayProxyRequest{HTTPMethod: "GET", Resource: "/jobs/{id}", Path: path, PathParameters: map[string]string{"id": tt.id},
				Headers: map[string]string{HeaderTimestamp: strconv.FormatInt(ts, 10), HeaderSignature: Sign(key, ts, "GET", path, nil)}}
			resp, _ := h.Handle(context.Background(), req)
			if resp.StatusCode != tt.want || jobs.gets != tt.wantReads {
				t.Fatalf("GET %.40s: %d (%d table reads), want %d (%d reads): %s", path, resp.StatusCode, jobs.gets, tt.want, tt.wantReads, resp.Body)
			}
		})
	}
}

// TestSwarmCallbacksNeedASwarmServer: without SWARM_URL there is no host
// to call a run's callbacks on; a signed request carrying them is refused.
func TestSwarmCallbacksNeedASwarmServer(t *testing.T) {
	key := []byte("unit-test-key-0123456789")
	jobs := &recordingJobs{}
	h := &Handler{Jobs: jobs, Queue: nopQueue{}, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), ReplayWindow: time.Minute,
		Keys: func(context.Context, bool) ([][]byte, error) { return [][]byte{key}, nil }}
	resp, _ := h.Handle(context.Background(), signed(key, swarmBody("shelved", swarmCallback("http://localhost", ""))))
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(resp.Body, "SWARM_URL") || len(jobs.created) != 0 {
		t.Fatalf("%d %s (%d jobs), want 400 naming SWARM_URL and nothing created", resp.StatusCode, resp.Body, len(jobs.created))
	}
}

// reviewsOf answers GetReview with a review holding changes, or err.
type reviewsOf struct {
	changes []int64
	err     error
	calls   int
}

func (r *reviewsOf) GetReview(_ context.Context, id int64) (swarm.Review, error) {
	r.calls++
	if r.err != nil {
		return swarm.Review{}, r.err
	}
	return swarm.Review{ID: id, Changes: r.changes}, nil
}

// Issue 30: a run is bound to its review at the door. A changelist that is
// none of the review's versions (whoever holds the token could name any
// allowed change under any review), or a review Swarm does not have, is a
// 422 with the reason and nothing is stored; a lookup Swarm cannot answer
// refuses nothing (the fetch stage checks again and retries).
func TestSwarmRunIsHeldToItsReview(t *testing.T) {
	update := swarmCallback("http://localhost", "")
	for _, tt := range []struct {
		name       string
		reviews    *reviewsOf
		wantStatus int
		wantCode   string
	}{
		{"a version of the review", &reviewsOf{changes: []int64{12340, 12348}}, 202, ""},
		{"another review's change", &reviewsOf{changes: []int64{12340, 12341}}, 422, "change_not_in_review"},
		{"no such review", &reviewsOf{err: failure.Errorf(failure.NotFound, "swarm review 12340: HTTP 404")}, 422, "review_not_found"},
		{"Swarm down: left to the fetch stage", &reviewsOf{err: failure.Errorf(failure.NetworkTimeout, "swarm review 12340: timeout")}, 202, ""},
		{"login refused: left to the fetch stage", &reviewsOf{err: failure.Errorf(failure.AuthDenied, "swarm review 12340: HTTP 401")}, 202, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			jobs := &recordingJobs{}
			h := swarmHandler(jobs, func(bool) [][]byte { return [][]byte{[]byte("tok-current")} })
			h.Reviews = tt.reviews
			req := events.APIGatewayProxyRequest{HTTPMethod: "POST", Resource: "/webhooks/changelist", Path: "/webhooks/changelist",
				Body: swarmBody("shelved", update), Headers: map[string]string{"Authorization": "Bearer tok-current"}}
			resp, err := h.Handle(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.wantStatus || (tt.wantCode != "" && !strings.Contains(resp.Body, `"code":"`+tt.wantCode+`"`)) {
				t.Fatalf("status %d %s, want %d %s", resp.StatusCode, resp.Body, tt.wantStatus, tt.wantCode)
			}
			if want := map[bool]int{true: 1, false: 0}[tt.wantStatus == 202]; len(jobs.created) != want || tt.reviews.calls != 1 {
				t.Fatalf("%d jobs stored, %d lookups; want %d and 1", len(jobs.created), tt.reviews.calls, want)
			}
		})
	}
}
