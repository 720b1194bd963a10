package webhook

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestVerify(t *testing.T) {
	cur, prev := []byte("current-key-0123456789"), []byte("previous-key-0123456789")
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"changelist_id":1}`)
	sig := func(key []byte, ts int64) string { return Sign(key, ts, "POST", "/webhooks/changelist", body) }
	ts := now.Unix()
	tests := []struct {
		name      string
		keys      [][]byte
		tsHeader  string
		sigHeader string
		method    string
		path      string
		body      []byte
		want      error
	}{
		{"current key", [][]byte{cur, prev}, "1800000000", sig(cur, ts), "POST", "/webhooks/changelist", body, nil},
		{"previous key during rotation", [][]byte{cur, prev}, "1800000000", sig(prev, ts), "POST", "/webhooks/changelist", body, nil},
		{"retired key", [][]byte{cur}, "1800000000", sig(prev, ts), "POST", "/webhooks/changelist", body, ErrBadSignature},
		{"missing signature", [][]byte{cur}, "1800000000", "", "POST", "/webhooks/changelist", body, ErrMissingSignature},
		{"missing timestamp", [][]byte{cur}, "", sig(cur, ts), "POST", "/webhooks/changelist", body, ErrMissingSignature},
		{"garbage timestamp", [][]byte{cur}, "yesterday", sig(cur, ts), "POST", "/webhooks/changelist", body, ErrBadTimestamp},
		{"stale timestamp", [][]byte{cur}, "1799999000", sig(cur, 1_799_999_000), "POST", "/webhooks/changelist", body, ErrStaleTimestamp},
		{"future timestamp", [][]byte{cur}, "1800001000", sig(cur, 1_800_001_000), "POST", "/webhooks/changelist", body, ErrStaleTimestamp},
		{"tampered body", [][]byte{cur}, "1800000000", sig(cur, ts), "POST", "/webhooks/changelist", []byte(`{"changelist_id":2}`), ErrBadSignature},
		{"other endpoint", [][]byte{cur}, "1800000000", sig(cur, ts), "GET", "/jobs/x", body, ErrBadSignature},
		{"timestamp swapped", [][]byte{cur}, "1800000001", sig(cur, ts), "POST", "/webhooks/changelist", body, ErrBadSignature},
		{"no v1 prefix", [][]byte{cur}, "1800000000", strings.TrimPrefix(sig(cur, ts), "v1="), "POST", "/webhooks/changelist", body, ErrBadSignature},
		{"not hex", [][]byte{cur}, "1800000000", "v1=zz", "POST", "/webhooks/changelist", body, ErrBadSignature},
		{"empty key never verifies", [][]byte{{}}, "1800000000", Sign(nil, ts, "POST", "/webhooks/changelist", body), "POST", "/webhooks/changelist", body, ErrBadSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Verify(tt.keys, tt.tsHeader, tt.sigHeader, tt.method, tt.path, tt.body, now, 5*time.Minute)
			if !errors.Is(got, tt.want) && !(got == nil && tt.want == nil) {
				t.Fatalf("Verify = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name, body, code, field string
	}{
		{"minimal", `{"changelist_id":12345,"review_version":1,"idempotency_key":"k1"}`, "", ""},
		{"numeric strings (Swarm templates)", `{"changelist_id":"12345","review_version":"2","idempotency_key":"swarm-7-2","source":"swarm","swarm":{"review":"7","status":"shelved"}}`, "", ""},
		{"all fields", `{"changelist_id":1,"review_version":1,"idempotency_key":"k","shelved":true,"recipients":["Bob@Example.com"],"source":"p4-trigger","requested_by":"alice"}`, "", ""},
		{"not json", `{"changelist_id":`, "malformed_json", ""},
		{"array", `[1,2]`, "malformed_json", ""},
		{"trailing", `{"changelist_id":1,"review_version":1,"idempotency_key":"k"} x`, "malformed_json", ""},
		{"missing changelist", `{"review_version":1,"idempotency_key":"k"}`, "missing_field", "changelist_id"},
		{"missing version", `{"changelist_id":1,"idempotency_key":"k"}`, "missing_field", "review_version"},
		{"missing key", `{"changelist_id":1,"review_version":1}`, "missing_field", "idempotency_key"},
		{"blank key", `{"changelist_id":1,"review_version":1,"idempotency_key":"  "}`, "missing_field", "idempotency_key"},
		{"negative changelist", `{"changelist_id":-4,"review_version":1,"idempotency_key":"k"}`, "invalid_field", "changelist_id"},
		{"fractional version", `{"changelist_id":4,"review_version":1.5,"idempotency_key":"k"}`, "invalid_field", "review_version"},
		{"key with spaces", `{"changelist_id":4,"review_version":1,"idempotency_key":"a b"}`, "invalid_field", "idempotency_key"},
		{"key too long", `{"changelist_id":4,"review_version":1,"idempotency_key":"` + strings.Repeat("k", 129) + `"}`, "invalid_field", "idempotency_key"},
		{"bad recipient", `{"changelist_id":4,"review_version":1,"idempotency_key":"k","recipients":["not-an-address"]}`, "invalid_field", "recipients[0]"},
		{"display-name recipient", `{"changelist_id":4,"review_version":1,"idempotency_key":"k","recipients":["Eve <eve@example.com>"]}`, "invalid_field", "recipients[0]"},
		{"bad source", `{"changelist_id":4,"review_version":1,"idempotency_key":"k","source":"ftp"}`, "invalid_field", "source"},
		{"unknown field", `{"changelist_id":4,"review_version":1,"idempotency_key":"k","depot":"//x/..."}`, "unknown_field", "depot"},
		{"shelved not bool", `{"changelist_id":4,"review_version":1,"idempotency_key":"k","shelved":"yes"}`, "invalid_field", "shelved"},
		{"version at the bound", `{"changelist_id":4,"review_version":1000000,"idempotency_key":"k"}`, "", ""},
		{"version beyond the bound", `{"changelist_id":4,"review_version":1000001,"idempotency_key":"k"}`, "invalid_field", "review_version"},
		{"version 2^31-1 would lock reruns", `{"changelist_id":4,"review_version":"2147483647","idempotency_key":"k"}`, "invalid_field", "review_version"},
		{"requested_by with a name and punctuation", `{"changelist_id":4,"review_version":1,"idempotency_key":"k","requested_by":"Zoë O'Brien (build-bot #2) & co"}`, "", ""},
		{"requested_by with a newline", `{"changelist_id":4,"review_version":1,"idempotency_key":"k","requested_by":"alice\n{\"level\":\"ERROR\"}"}`, "invalid_field", "requested_by"},
		{"requested_by with an escape", `{"changelist_id":4,"review_version":1,"idempotency_key":"k","requested_by":"alice\u001b[31m"}`, "invalid_field", "requested_by"},
		{"requested_by with a bidi override", `{"changelist_id":4,"review_version":1,"idempotency_key":"k","requested_by":"alice\u202egnp.exe"}`, "invalid_field", "requested_by"},
		{"requested_by with markup", `{"changelist_id":4,"review_version":1,"idempotency_key":"k","requested_by":"<img src=x onerror=alert(1)>"}`, "invalid_field", "requested_by"},
		{"requested_by with a line separator", `{"changelist_id":4,"review_version":1,"idempotency_key":"k","requested_by":"a\u2028b"}`, "invalid_field", "requested_by"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.body))
			if tt.code == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			fe, ok := IsFieldError(err)
			if !ok || fe.Code != tt.code || fe.Field != tt.field {
				t.Fatalf("Parse error = %#v, want code %q field %q", err, tt.code, tt.field)
			}
		})
	}
}

func TestHashIgnoresFormattingButNotMeaning(t *testing.T) {
	a, _ := Parse([]byte(`{"changelist_id":1,"review_version":1,"idempotency_key":"k","recipients":["b@x.io","a@x.io"]}`))
	b, _ := Parse([]byte(`{ "idempotency_key" : "k", "review_version" : "1", "changelist_id" : 1, "recipients":["A@x.io","b@x.io"] }`))
	c, _ := Parse([]byte(`{"changelist_id":1,"review_version":2,"idempotency_key":"k"}`))
	if a.Hash() != b.Hash() {
		t.Fatal("equivalent requests hash differently")
	}
	if a.Hash() == c.Hash() {
		t.Fatal("different requests hash the same")
	}
}

// FuzzWebhook feeds arbitrary bodies and headers through the parser and the
// signature check: neither may panic, and a verified request must have been
// signed with the key.
func FuzzWebhook(f *testing.F) {
	key := []byte("fuzz-key-0123456789")
	now := time.Unix(1_800_000_000, 0)
	f.Add([]byte(`{"changelist_id":12345,"review_version":1,"idempotency_key":"k1"}`), "1800000000", "v1=00")
	f.Add([]byte(`{"changelist_id":"9","review_version":"1","idempotency_key":"x","recipients":["a@b.c"]}`), "1800000000", "")
	f.Add([]byte(`{"recipients":[1,2,{}],"shelved":null}`), "-1", "v1=")
	f.Fuzz(func(t *testing.T, body []byte, ts, sig string) {
		if r, err := Parse(body); err == nil {
			if r.ChangelistID <= 0 || r.ReviewVersion <= 0 || r.ReviewVersion > MaxReviewVersion || r.IdempotencyKey == "" || freeText(r.RequestedBy) != "" {
				t.Fatalf("Parse accepted an invalid request: %+v", r)
			}
			_ = r.Hash()
		}
		if Verify([][]byte{key}, ts, sig, "POST", "/webhooks/changelist", body, now, 5*time.Minute) == nil {
			n, err := strconv.ParseInt(strings.TrimSpace(ts), 10, 64)
			if err != nil || strings.TrimSpace(sig) != Sign(key, n, "POST", "/webhooks/changelist", body) {
				t.Fatalf("Verify accepted a signature it did not produce (ts %q)", ts)
			}
		}
	})
}
