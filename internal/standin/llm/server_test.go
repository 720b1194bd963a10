package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/criticizer/criticizer/internal/standin/llm"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	llmclient "github.com/criticizer/criticizer/shared/llm"
	"github.com/criticizer/criticizer/shared/result"
)

const key = "sk-standin-fixture-7f3a" // a fixture, not a credential

func changeset() domain.Changeset {
	return domain.Changeset{
		Changelist: 1201, Status: "shelved", Description: "Copy names",
		Files: []domain.FileChange{
			{DepotPath: "//depot/main/src/names.c", Action: "edit", Type: "text", Rev: 4, Diff: "" +
				"--- //depot/main/src/names.c\t2026-01-01\n" +
				"+++ //depot/main/src/names.c\t2026-01-02\n" +
				"@@ -10,4 +10,6 @@\n" +
				" void copy(char *d, const char *s) {\n" +
				"-    memcpy(d, s, n);\n" +
				"+    strcpy(d, s);\n" +
				"+    // TODO: bound this\n" +
				" }\n" +
				"@@ -40,2 +42,3 @@\n" +
				" int x;\n" +
				"+char *pw = \"[REDACTED:password]\";\n" +
				" int y;\n"},
			{DepotPath: "//depot/main/src/new.c", Action: "add", Type: "text", Rev: 1,
				Diff: "@@ -0,0 +1,2 @@\n+int main() {}\n+/* TODO */\n"},
			{DepotPath: "//depot/main/img/logo.png", Action: "add", Type: "binary", Rev: 1},
		},
	}
}

// reviewPrompt is cs's first request at the stable prompt version, as the llm stage builds it.
func reviewPrompt(cs domain.Changeset) llmclient.Prompt {
	plan := result.Budget{}.For("gpt-4o").Plan(cs, result.StablePromptVersion, result.RuleSet{})
	return llmclient.Prompt(plan.Prompt(cs, plan.Chunks[0], result.StablePromptVersion))
}

func start(t *testing.T, opts llm.Options) (*llm.Server, string) {
	t.Helper()
	srv := llm.NewServer(opts)
	url, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, url
}

func client(t *testing.T, url string, timeout time.Duration) *llmclient.Client {
	t.Helper()
	c, err := llmclient.NewOpenAI(llmclient.Config{Endpoint: url, Model: "gpt-review", Timeout: timeout, Schema: result.SchemaJSON()}, key)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestEndToEndReview(t *testing.T) {
	srv, url := start(t, llm.Options{APIKey: key})
	cs := changeset()
	p := reviewPrompt(cs)
	comp, err := client(t, url, 5*time.Second).Complete(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	res, diags, err := result.Parse(comp.Content, cs.ChangedFiles(), result.Options{})
	if err != nil || len(diags) != 0 {
		t.Fatalf("Parse: %v %v\n%s", err, diags, comp.Content)
	}
	type loc struct {
		file, sev, cat string
		line           int
	}
	var got []loc
	for _, f := range res.Findings {
		got = append(got, loc{f.File, f.Severity, f.Category, f.Line})
	}
	want := []loc{
		{"//depot/main/src/names.c", "high", "security", 11},
		{"//depot/main/src/names.c", "low", "maintainability", 12},
		{"//depot/main/src/names.c", "info", "security", 43},
		{"//depot/main/src/new.c", "low", "maintainability", 2},
	}
	if len(got) != len(want) {
		t.Fatalf("findings = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("finding %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if res.PromptVersion != result.StablePromptVersion || res.SchemaVersion != result.SchemaVersion || res.Summary == "" {
		t.Errorf("res = %+v", res)
	}
	if comp.RequestID != "req_standin_1" || comp.Usage.InputTokens == 0 {
		t.Errorf("completion = %+v", comp)
	}

	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("requests = %d", len(reqs))
	}
	r := reqs[0]
	if r.Messages[0].Role != "system" || r.Messages[1].Content != p.User || r.ResponseFormat != "json_schema" ||
		r.Temperature == nil || *r.Temperature != 0 || r.Model != "gpt-review" || r.Status != 200 {
		t.Errorf("recorded request = %+v", r)
	}
	if !strings.HasPrefix(r.Authorization, "present sha256:") || r.Header.Get("Authorization") != "" {
		t.Errorf("authorization recorded as %q / %q", r.Authorization, r.Header.Get("Authorization"))
	}
	if b, _ := json.Marshal(reqs); bytes.Contains(b, []byte(key)) {
		t.Error("recorded requests contain the API key")
	}
}

func TestAuth(t *testing.T) {
	tests := []struct {
		name   string
		opts   llm.Options
		header string
		status int
	}{
		{"missing", llm.Options{}, "", 401},
		{"empty bearer", llm.Options{}, "Bearer ", 401},
		{"basic scheme", llm.Options{}, "Basic abc", 401},
		{"any key accepted", llm.Options{}, "Bearer whatever", 200},
		{"wrong key", llm.Options{APIKey: key}, "Bearer sk-other", 401},
		{"right key", llm.Options{APIKey: key}, "Bearer " + key, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, url := start(t, tt.opts)
			body := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
			req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", strings.NewReader(body))
			if tt.header != "" {
				req.Header.Set("Authorization", tt.header)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Errorf("status = %d, want %d", resp.StatusCode, tt.status)
			}
			if rs := srv.Requests(); len(rs) != 1 || rs[0].Status != tt.status {
				t.Errorf("recorded = %+v", rs)
			}
		})
	}
	_, url := start(t, llm.Options{APIKey: key})
	c, _ := llmclient.New(llmclient.OpenAI, llmclient.Config{Endpoint: url, Model: "m", Timeout: time.Second, ResponseFormat: llmclient.FormatJSONObject}, llmclient.Credentials{APIKey: "sk-wrong"})
	if _, err := c.Complete(context.Background(), llmclient.Prompt{User: "x"}); failure.Classify(err) != failure.AuthDenied {
		t.Errorf("wrong key: %v", err)
	}
}

func TestFaults(t *testing.T) {
	srv, url := start(t, llm.Options{})
	c := client(t, url, 300*time.Millisecond)
	p := reviewPrompt(changeset())
	ctx := context.Background()
	content := `{"schema_version":"1.0","prompt_version":"1.0.0","findings":[]}`

	srv.QueueFault(llm.Fault{Status: 429, RetryAfter: "2", Count: 2})
	srv.QueueFault(llm.Fault{Status: 500})
	srv.QueueFault(llm.Fault{Status: 503})
	srv.QueueFault(llm.Fault{Status: 400, Body: json.RawMessage(`{"error":{"code":"content_policy_violation"}}`)})
	srv.QueueFault(llm.Fault{Malformed: true})
	srv.QueueFault(llm.Fault{DelayMS: 2000})
	srv.QueueFault(llm.Fault{Content: &content})
	srv.QueueFault(llm.Fault{Body: json.RawMessage(`{"choices":[]}`)})

	steps := []struct {
		class      failure.Class
		retryAfter time.Duration
	}{
		{failure.RateLimited, 2 * time.Second},
		{failure.RateLimited, 2 * time.Second},
		{failure.Upstream5xx, 0},
		{failure.NetworkTimeout, 0},
		{failure.PolicyRejected, 0},
		{"", 0}, // malformed content: the client succeeds, Parse rejects
		{failure.NetworkTimeout, 0},
		{"", 0}, // scripted content
		{failure.SchemaInvalid, 0},
		{"", 0}, // queue drained: a normal review
	}
	for i, st := range steps {
		comp, err := c.Complete(ctx, p)
		if got := failure.Classify(err); got != st.class || failure.RetryAfter(err) != st.retryAfter {
			t.Fatalf("step %d: err = %v (class %s), want %s", i, err, got, st.class)
		}
		if err != nil {
			continue
		}
		_, _, perr := result.Parse(comp.Content, changeset().ChangedFiles(), result.Options{})
		var rej *result.RejectError
		switch i {
		case 5:
			if !errors.As(perr, &rej) || rej.Reason != result.ReasonInvalidJSON {
				t.Errorf("malformed content parsed: %v", perr)
			}
		case 7:
			if string(comp.Content) != content || perr != nil {
				t.Errorf("scripted content = %s, %v", comp.Content, perr)
			}
		default:
			if perr != nil {
				t.Errorf("step %d: Parse: %v", i, perr)
			}
		}
	}
	// The delayed request is recorded (499) when the server notices the
	// client gave up, which can be after the client's next request: wait
	// for it by lookup, with a deadline.
	n := len(srv.Requests())
	for deadline := time.Now().Add(5 * time.Second); n < len(steps) && time.Now().Before(deadline); n = len(srv.Requests()) {
		time.Sleep(10 * time.Millisecond)
	}
	if n != len(steps) {
		t.Errorf("recorded %d requests, want %d", n, len(steps))
	}
}

func TestControlAPI(t *testing.T) {
	_, url := start(t, llm.Options{})
	post := func(path, body string) int {
		resp, err := http.Post(url+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := post("/_standin/faults", `{"status":429,"retry_after":"2","count":2,"body":{"error":{"code":"rate_limit_exceeded"}}}`); st != 200 {
		t.Fatalf("queue fault: %d", st)
	}
	if st := post("/_standin/faults", `[{"malformed":true,"count":1},{"delay_ms":10}]`); st != 200 {
		t.Fatalf("queue faults: %d", st)
	}
	if st := post("/_standin/faults", `{"status":`); st != 400 {
		t.Errorf("bad fault accepted: %d", st)
	}
	c := client(t, url, 2*time.Second)
	for range 2 {
		if _, err := c.Complete(context.Background(), llmclient.Prompt{User: "x"}); failure.Classify(err) != failure.RateLimited {
			t.Fatalf("want rate limited, got %v", err)
		}
	}
	resp, err := http.Get(url + "/_standin/requests")
	if err != nil {
		t.Fatal(err)
	}
	var reqs []llm.Request
	_ = json.NewDecoder(resp.Body).Decode(&reqs)
	resp.Body.Close()
	if len(reqs) != 2 || reqs[0].Status != 429 || reqs[0].Fault == "" || reqs[0].Messages[1].Content != "x" {
		t.Errorf("requests = %+v", reqs)
	}
	if st := post("/_standin/reset", ""); st != 204 {
		t.Errorf("reset: %d", st)
	}
	comp, err := c.Complete(context.Background(), llmclient.Prompt{User: "x"})
	if err != nil || !json.Valid(comp.Content) {
		t.Errorf("after reset the queued malformed fault must be gone: %v %s", err, comp.Content)
	}
}

func TestVersionOverride(t *testing.T) {
	_, url := start(t, llm.Options{SchemaVersion: "2.0"})
	comp, err := client(t, url, 2*time.Second).Complete(context.Background(), reviewPrompt(changeset()))
	if err != nil {
		t.Fatal(err)
	}
	_, diags, err := result.Parse(comp.Content, changeset().ChangedFiles(), result.Options{})
	if diags.Counts()[result.KindRejected+"/"+result.ReasonIncompatibleVersion] == 0 || failure.Classify(err) != failure.SchemaInvalid {
		t.Errorf("err = %v diags = %v", err, diags)
	}
}

func TestStartRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "10.0.0.1:0", "example.com:80"} {
		if _, err := llm.NewServer(llm.Options{}).Start(addr); err == nil {
			t.Errorf("Start(%q) succeeded", addr)
		}
	}
}

func TestUnknownPathAndMethod(t *testing.T) {
	_, url := start(t, llm.Options{})
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/v1/chat/completions", 405},
		{"POST", "/v1/completions", 404},
		{"GET", "/_standin/health", 200},
	} {
		req, _ := http.NewRequest(tc.method, url+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s %s = %d, want %d", tc.method, tc.path, resp.StatusCode, tc.status)
		}
	}
}
