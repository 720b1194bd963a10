//go:build integration

package integration

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// Through API Gateway on the emulator: a path that cannot be a job id is a
// 404 (not the 503 DynamoDB's key-size refusal used to give), and only
// application/json, with or without parameters, is a JSON body.
func TestWebhookInputValidationOnTheStack(t *testing.T) {
	for _, tt := range []struct {
		id   string
		want int
	}{{strings.Repeat("a", 3000), http.StatusNotFound}, {"not-a-job", http.StatusNotFound}} {
		if r := call(t, http.MethodGet, "/jobs/"+tt.id, nil, nil); r.Status != tt.want {
			t.Errorf("GET /jobs/<%d chars>: %d %s, want %d", len(tt.id), r.Status, r.Body, tt.want)
		}
	}
	for _, tt := range []struct {
		ct   string
		want int
	}{{"application/json; charset=utf-8", http.StatusAccepted}, {"application/jsonp", http.StatusUnsupportedMediaType}} {
		cl := newChange(t, 12345)
		b, _ := json.Marshal(map[string]any{"changelist_id": cl, "review_version": 1, "idempotency_key": uniqueKey(t)})
		r := call(t, http.MethodPost, "/webhooks/changelist", b, func(req *http.Request) { req.Header.Set("Content-Type", tt.ct) })
		if r.Status != tt.want {
			t.Errorf("Content-Type %q: %d %s, want %d", tt.ct, r.Status, r.Body, tt.want)
		}
		if r.Status == http.StatusAccepted {
			waitJob(t, r.Decoded["job_id"].(string), untilSettled(), "succeeded", succeeded)
		}
	}
	// Free text and the version bound are checked at the edge: 400 naming
	// the field and the reason (2^31-1 would lock the changelist against
	// every rerun).
	for _, tt := range []struct {
		field string
		value any
		want  string
	}{
		{"requested_by", "alice\n{\"level\":\"ERROR\",\"msg\":\"forged\"}", "control or formatting characters"},
		{"requested_by", "<script>alert(1)</script>", "markup"},
		{"review_version", 2147483647, "from 1 to 1000000"},
	} {
		p := map[string]any{"changelist_id": newChange(t, 12345), "review_version": 1, "idempotency_key": uniqueKey(t)}
		p[tt.field] = tt.value
		r := postWebhook(t, p)
		if r.Status != http.StatusBadRequest || errCode(r) != "invalid_field" || !strings.Contains(string(r.Body), tt.field+": ") || !strings.Contains(string(r.Body), tt.want) {
			t.Errorf("%s %q: %d %s, want 400 naming it (%s)", tt.field, tt.value, r.Status, r.Body, tt.want)
		}
	}
}
