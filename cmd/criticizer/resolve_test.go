package main

import (
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/job"
)

// The post-replay annotation is recorded only for a replay that is
// verified: the job was replayed or restarted and has succeeded since.
func TestVerifyReplay(t *testing.T) {
	replayed := []job.Event{{Type: job.EventCreated}, {Type: job.EventDeadLettered}, {At: "2026-11-22T12:00:00.000Z", Type: job.EventReplayed}}
	for _, tt := range []struct {
		name  string
		j     *job.Job
		want  string // in the outcome, or in the error
		valid bool
	}{
		{"replayed and succeeded", &job.Job{ID: "j", State: job.Succeeded, History: replayed}, "succeeded after 1 replay(s), the last at 2026-11-22T12:00:00.000Z", true},
		{"restarted and succeeded", &job.Job{ID: "j", State: job.Succeeded, History: []job.Event{{Type: job.EventRestarted}}}, "after 1 replay(s)", true},
		{"replayed, failed again", &job.Job{ID: "j", State: job.Failed, History: replayed}, "not verified", false},
		{"replayed, still running", &job.Job{ID: "j", State: job.Running, History: replayed}, "not verified", false},
		{"never replayed", &job.Job{ID: "j", State: job.Succeeded, History: []job.Event{{Type: job.EventCreated}}}, "never replayed", false},
	} {
		got, err := verifyReplay(tt.j)
		if tt.valid != (err == nil) {
			t.Errorf("%s: %q, %v", tt.name, got, err)
			continue
		}
		text := got
		if err != nil {
			text = err.Error()
		}
		if !strings.Contains(text, tt.want) {
			t.Errorf("%s: %q, want it to say %q", tt.name, text, tt.want)
		}
	}
}
