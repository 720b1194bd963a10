package notifystage

import (
	"slices"
	"testing"

	"github.com/criticizer/criticizer/shared/job"
)

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
