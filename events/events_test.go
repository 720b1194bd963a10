// Package events holds the sample events; this test keeps them decodable
// into the types the functions receive, so a sample never drifts from the code.
package events

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/criticizer/criticizer/shared/doctor"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/envelope"
	"github.com/criticizer/criticizer/shared/swarm"
	"github.com/criticizer/criticizer/shared/webhook"
	"github.com/criticizer/criticizer/shared/weekly"
)

func decode(t *testing.T, file string, v any) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

func TestWebhookSamples(t *testing.T) {
	var post events.APIGatewayProxyRequest
	decode(t, "webhook-post.json", &post)
	if _, err := webhook.Parse([]byte(post.Body)); err != nil {
		t.Fatalf("webhook-post.json body: %v", err)
	}
	var sw events.APIGatewayProxyRequest
	decode(t, "webhook-swarm.json", &sw)
	r, err := webhook.Parse([]byte(sw.Body))
	if err != nil || r.Swarm == nil || !r.Shelved {
		t.Fatalf("webhook-swarm.json body: %+v, %v; want a shelved Swarm run", r, err)
	}
	// The callbacks as Swarm 2022.1 builds them, accepted as the handler
	// accepts them (uuid = the review's token, ".v", the head version).
	if _, field, err := swarm.RunCallbacks("https://swarm.example.com", r.Swarm.Update, r.Swarm.Pass, r.Swarm.Fail); err != nil {
		t.Fatalf("webhook-swarm.json: {%s} refused: %v", field, err)
	}
	var get events.APIGatewayProxyRequest
	decode(t, "webhook-get.json", &get)
	if get.HTTPMethod != "GET" || get.PathParameters["id"] == "" {
		t.Fatal("webhook-get.json is not a status request")
	}
}

func TestStageSamples(t *testing.T) {
	for file, stage := range map[string]domain.Stage{"sqs-fetch.json": domain.StageFetch, "sqs-llm.json": domain.StageLLM, "sqs-notify.json": domain.StageNotify} {
		var ev events.SQSEvent
		decode(t, file, &ev)
		if len(ev.Records) != 1 {
			t.Fatalf("%s: want one record", file)
		}
		env, err := envelope.Decode(ev.Records[0].Body)
		if err != nil || env.Stage != stage {
			t.Fatalf("%s: envelope %+v, err %v", file, env, err)
		}
	}
}

func TestDLQSampleIsAValidStageInput(t *testing.T) {
	b, err := os.ReadFile("dlq-llm.json")
	if err != nil {
		t.Fatal(err)
	}
	env, err := envelope.Decode(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if env.DeadLetter == nil || env.DeadLetter.ErrorClass == "" || env.DeadLetter.FirstFailureAt == "" || env.DeadLetter.Stage != env.Stage {
		t.Fatalf("dead_letter block incomplete: %+v", env.DeadLetter)
	}
}

func TestSweeperSample(t *testing.T) {
	var ev events.CloudWatchEvent
	decode(t, "sweeper.json", &ev)
	if ev.DetailType != "Scheduled Event" {
		t.Fatal("not a scheduled event")
	}
}

// The digest's schedule event digests the ISO week before the one it fires
// in: 2026-11-30 (a Monday, W49) digests 2026-W48.
func TestDigestSample(t *testing.T) {
	b, err := os.ReadFile("digest.json")
	if err != nil {
		t.Fatal(err)
	}
	w, err := weekly.WeekOfEvent(b, time.Time{})
	if err != nil || w.String() != "2026-W48" {
		t.Fatalf("week %s, %v; want 2026-W48", w, err)
	}
}

func TestDoctorSample(t *testing.T) {
	var req doctor.Request
	decode(t, "doctor.json", &req)
	if req.Change <= 0 {
		t.Fatalf("doctor.json: %+v, want a sample changelist", req)
	}
}
