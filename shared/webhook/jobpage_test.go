package webhook

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// TestSwarmRunLinksTheJobPage: with the page on, the link a Swarm run shows
// is the job page on the API address Swarm called (or the configured base),
// and a key that cannot be read falls back to the signed status link
// rather than failing the job.
func TestSwarmRunLinksTheJobPage(t *testing.T) {
	update := swarmCallback("http://localhost", "")
	const api = "https://abc.execute-api.eu-west-1.amazonaws.com/prod"
	tests := []struct {
		name string
		page func(ctx context.Context, id string) (string, error)
		want func(id string) string
	}{
		{"page off", nil, func(id string) string { return api + "/jobs/" + id }},
		{"page path on the caller's address", func(_ context.Context, id string) (string, error) { return "/view/" + id + "/tok", nil },
			func(id string) string { return api + "/view/" + id + "/tok" }},
		{"page on a configured base", func(_ context.Context, id string) (string, error) {
			return "https://reviews.example.com/view/" + id + "/tok", nil
		},
			func(id string) string { return "https://reviews.example.com/view/" + id + "/tok" }},
		{"page key unreadable", func(context.Context, string) (string, error) { return "", errors.New("secrets manager down") },
			func(id string) string { return api + "/jobs/" + id }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jobs := &recordingJobs{}
			h := swarmHandler(jobs, func(bool) [][]byte { return [][]byte{[]byte("tok-current")} })
			h.JobPage = tt.page
			req := events.APIGatewayProxyRequest{HTTPMethod: "POST", Resource: "/webhooks/changelist", Path: "/webhooks/changelist",
				Body: swarmBody("shelved", update), Headers: map[string]string{"Authorization": "Bearer tok-current"},
				RequestContext: events.APIGatewayProxyRequestContext{DomainName: "abc.execute-api.eu-west-1.amazonaws.com", Path: "/prod/webhooks/changelist"}}
			resp, err := h.Handle(context.Background(), req)
			if err != nil || resp.StatusCode != 202 {
				t.Fatalf("status %d %s %v", resp.StatusCode, resp.Body, err)
			}
			j := jobs.created[0]
			if got, want := j.Swarm.JobURL, tt.want(j.ID); got != want {
				t.Errorf("run link %q, want %q", got, want)
			}
		})
	}
}
