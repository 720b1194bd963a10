package notifystage

import (
	"slices"
	"testing"

	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/job"
)

func TestOutcomeGate(t *testing.T) {
	findings := []domain.Finding{
		{Severity: "medium", Category: "style", File: "//depot/a/x.go", Line: 3},
		{Severity: "high", Category: "security", File: "//depot/a/y.go", Line: 7},
		{Severity: "critical", Category: "[click](https://evil.example) @alice", File: "//depot/a/z.go", Line: 9},
	}
	tests := []struct {
		name, gate   string
		wantBlocking int
		wantWorst    string
	}{
		{"off", "", 0, ""},
		{"high", "high", 2, "critical clickhttpsevilexampleali finding in z.go line 9"},
		{"critical", "critical", 1, "critical clickhttpsevilexampleali finding in z.go line 9"},
		{"info: everything", "info", 3, "critical clickhttpsevilexampleali finding in z.go line 9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := outcome(3, findings, tt.gate, "posted on the review")
			if o.Blocking != tt.wantBlocking || o.Worst != tt.wantWorst || o.Blocks() != (tt.wantBlocking > 0) {
				t.Fatalf("outcome %+v, want %d blocking, worst %q", o, tt.wantBlocking, tt.wantWorst)
			}
		})
	}
}

func TestGateFromEnv(t *testing.T) {
	for v, want := range map[string]string{"": "", "off": "", "HIGH": "high", "critical": "critical", "severe": "!"} {
		r := config.NewReaderFrom(map[string]string{"SWARM_GATE_SEVERITY": v})
		got := GateFromEnv(r)
		if (want == "!") != (r.Err() != nil) || (want != "!" && got != want) {
			t.Errorf("SWARM_GATE_SEVERITY=%q: %q, %v; want %q", v, got, r.Err(), want)
		}
	}
}

// TestEmailRecipients: a Swarm review's findings go to the review when
// comments are on, and its participants are not e-mailed them again unless
// the environment asks; other sources, or no comments, keep the e-mail.
func TestEmailRecipients(t *testing.T) {
	rcpts := []string{"carol@example.com", "bob@example.com"}
	swarmJob := &job.Job{Source: "swarm", Recipients: rcpts, Swarm: &job.SwarmRun{Review: 7}}
	trigger := &job.Job{Source: "p4-trigger", Recipients: rcpts}
	sorted := []string{"bob@example.com", "carol@example.com"}
	for _, tt := range []struct {
		name     string
		n        Notify
		j        *job.Job
		wantMail []string
	}{
		{"swarm, comments on: the review tells them", Notify{Comments: &SwarmComments{}}, swarmJob, nil},
		{"swarm, comments on, participants e-mailed too", Notify{Comments: &SwarmComments{}, EmailParticipants: true}, swarmJob, sorted},
		{"swarm, e-mail only", Notify{}, swarmJob, sorted},
		{"trigger, comments on", Notify{Comments: &SwarmComments{}}, trigger, sorted},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.n.emailRecipients(tt.j); !slices.Equal(got, tt.wantMail) {
				t.Fatalf("e-mailed %v, want %v", got, tt.wantMail)
			}
		})
	}
}
