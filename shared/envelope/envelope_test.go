package envelope

import (
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
)

func TestDecode(t *testing.T) {
	valid := `{"v":1,"job_id":"j1","changelist_id":12345,"review_version":1,"stage":"fetch","attempt":0,"trace_id":"t","sent_at":"2026-01-01T00:00:00.000Z"}`
	tests := []struct {
		name    string
		body    string
		wantErr string
	}{
		{"valid", valid, ""},
		{"dead letter redriven unchanged", strings.TrimSuffix(valid, "}") + `,"dead_letter":{"id":"d","error_class":"NETWORK_TIMEOUT","retryable":true,"reason":"x","last_stack":"","sanitized_context":{},"stage":"fetch","attempts":5,"first_failure_at":"a","last_failure_at":"b"}}`, ""},
		{"not json", `{`, "decode envelope"},
		{"unknown field", strings.TrimSuffix(valid, "}") + `,"evil":1}`, "unknown field"},
		{"trailing data", valid + `{}`, "trailing data"},
		{"wrong version", strings.Replace(valid, `"v":1`, `"v":2`, 1), "v = 2"},
		{"unknown stage", strings.Replace(valid, `"fetch"`, `"deploy"`, 1), "stage"},
		{"missing job", strings.Replace(valid, `"j1"`, `""`, 1), "job_id"},
		{"bad changelist", strings.Replace(valid, `12345`, `-1`, 1), "changelist_id"},
		{"bad version", strings.Replace(valid, `"review_version":1`, `"review_version":0`, 1), "review_version"},
		{"restart at wrong stage", strings.Replace(strings.TrimSuffix(valid, "}")+`,"replay":{"mode":"full_restart"}}`, `"fetch"`, `"llm"`, 1), "full restart"},
		{"bad replay mode", strings.TrimSuffix(valid, "}") + `,"replay":{"mode":"sideways"}}`, "replay.mode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(tt.body)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Decode: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Decode error = %v, want it to mention %q", err, tt.wantErr)
			}
			if failure.Classify(err) != failure.SchemaInvalid {
				t.Fatalf("class = %s, want SCHEMA_INVALID", failure.Classify(err))
			}
		})
	}
}

func TestRoundTrip(t *testing.T) {
	in := Envelope{V: Version, JobID: "j", Changelist: 7, ReviewVersion: 2, Stage: domain.StageNotify,
		DeadLetter: &DeadLetter{ID: "x", ErrorClass: failure.AuthDenied, Stage: domain.StageNotify, SanitizedContext: map[string]any{"attempts": 1}}}
	body, err := in.Encode()
	if err != nil {
		t.Fatal(err)
	}
	out, err := Decode(body)
	if err != nil {
		t.Fatal(err)
	}
	if out.DeadLetter == nil || out.DeadLetter.ErrorClass != failure.AuthDenied || out.Stage != domain.StageNotify {
		t.Fatalf("round trip lost data: %+v", out)
	}
}

// Hash correlates payloads in diagnostics: stable for a body, distinct across
// bodies, and never the body itself.
func TestHash(t *testing.T) {
	a, b := `{"v":1,"job_id":"a"}`, `{"v":1,"job_id":"b"}`
	// Golden: the value must not change between releases, or DLQ items stop
	// matching the hashes in older logs.
	if got := Hash(a); got != "635612aa856a17e1" {
		t.Fatalf("Hash(a) = %s, want 635612aa856a17e1", got)
	}
	if Hash(a) == Hash(b) {
		t.Fatal("different bodies share a hash")
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(`{"v":1,"job_id":"j1","changelist_id":1,"review_version":1,"stage":"fetch"}`)
	f.Add(`{"dead_letter":null}`)
	f.Fuzz(func(t *testing.T, body string) {
		e, err := Decode(body)
		if err == nil && e.Validate() != nil {
			t.Fatal("Decode accepted an invalid envelope")
		}
	})
}
