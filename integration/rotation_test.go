//go:build integration

package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	llmstandin "github.com/criticizer/criticizer/internal/standin/llm"
	"github.com/criticizer/criticizer/shared/domain"
)

// Emergency rotation of the LLM key: the provider stops accepting the old key
// at once. A warm review function, which cached the old key, must pick up the
// new one from Secrets Manager within the same attempt, without a redeploy.
func TestLLMKeyEmergencyRotation(t *testing.T) {
	_, warm := submit(t, 12345) // make sure the review function is warm with the old key
	waitJob(t, warm, untilSettled(), "succeeded", succeeded)

	newKey := "sk-rotated-" + strings.ReplaceAll(uniqueKey(t), "-", "")[:24]
	if _, err := env.sm.PutSecretValue(context.Background(), &secretsmanager.PutSecretValueInput{
		SecretId: aws.String(env.out["LlmSecretArn"]), SecretString: aws.String(fmt.Sprintf(`{"api_key":%q}`, newKey))}); err != nil {
		t.Fatal(err)
	}
	env.secrets["rotated LLM API key"] = newKey
	addr := strings.TrimPrefix(env.llm.URL(), "http://")
	if err := env.llm.Close(); err != nil {
		t.Fatal(err)
	}
	rotated := llmstandin.NewServer(llmstandin.Options{APIKey: newKey})
	var err error
	for i := 0; i < 20; i++ { // the port is free again once the old listener is gone
		if _, err = rotated.Start(addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	env.llm, env.local.LLM = rotated, rotated

	_, id := submit(t, 12345)
	j := waitJob(t, id, untilSettled(), "succeeded", succeeded)
	if a := j.StageRecord(domain.StageLLM).Attempts; a != 1 {
		t.Fatalf("llm attempts %d: the rotation should be absorbed inside one attempt", a)
	}
	reqs := rotated.Requests()
	if len(reqs) < 2 || reqs[0].Status != 401 || reqs[len(reqs)-1].Status != 200 {
		t.Fatalf("want a rejected call with the old key, then success with the new one; got %d requests", len(reqs))
	}
}
