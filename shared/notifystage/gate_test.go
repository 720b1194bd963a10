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
		{ID: "F1", Severity: "medium", Category: "style", File: "//depot/a/x.go", Line: 3},
		{ID: "F2", Severity: "high", Category: "security", File: "//depot/a/y.go", Line: 7},
		{ID: "F3", Severity: "critical", Category: "[click](https://evil.example) @alice", File: "//depot/a/z.go", Line: 9},
	}
	tests := []struct {
		name, gate   string
		gates        map[string]string // by the rules of the findings' files
		wantBlocking int
		wantWorst    string
	}{
		{"off", "", nil, 0, ""},
		{"high", "high", nil, 2, "critical clickhttpsevilexampleali finding in z.go line 9"},
		{"critical", "critical", nil, 1, "critical clickhttpsevilexampleali finding in z.go line 9"},
		{"info: everything", "info", nil, 3, "critical clickhttpsevilexampleali finding in z.go line 9"},
		{"rules gate a path, environment off", "", map[string]string{"F1": "medium"}, 1, "medium style finding in x.go line 3"},
		{"rules turn a path off", "high", map[string]string{"F3": "off"}, 1, "high security finding in y.go line 7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := outcome(3, findings, tt.gates, tt.gate, "posted on the review")
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
