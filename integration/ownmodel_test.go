//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/criticizer/criticizer/internal/devstack"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/llm"
)

// modelServer is the real llama.cpp server (llama-cpp-python, pinned in
// versions.env) with the SmolLM2 model, started by the first test that
// needs it and stopped by TestMain (stopModelServer) by its PID.
var modelServer struct {
	once sync.Once
	s    *devstack.ModelServer
	err  error
}

func startModelServer(t *testing.T) *devstack.ModelServer {
	t.Helper()
	modelServer.once.Do(func() {
		// It requires the key the stack generated, as an operator's server
		// behind its own auth would.
		modelServer.s, modelServer.err = devstack.StartModelServer(context.Background(),
			devstack.ModelServerOptions{APIKey: env.secrets["LLM API key"]})
	})
	if modelServer.err != nil {
		t.Fatalf("model server: %v", modelServer.err)
	}
	return modelServer.s
}

func stopModelServer() {
	if modelServer.s != nil {
		_ = modelServer.s.Stop()
	}
}

// TestReviewByARealModelServer runs one changelist through the deployed
// stack against a real OpenAI-compatible model server and model: fetched,
// redacted, reviewed by the model, parsed, e-mailed and commented. The
// server refuses response_format json_schema with HTTP 500 (an invalid
// request, not an upstream fault): the client steps down to json_object
// with the schema, and the job's stats say so. A model this small may
// still answer unusably: then the job fails SCHEMA_INVALID with the reason,
// once, never retried as a 5xx. Either outcome is checked in full.
func TestReviewByARealModelServer(t *testing.T) {
	ms := startModelServer(t)
	// What an operator sets for their own server (ModelEnv): the endpoint,
	// the key, response format auto, the window llama-cpp-python does not
	// report, and a first call's timeout floor (later calls get theirs
	// from the model's measured tokens per second).
	setReviewEnv(t, ms.ModelEnv())
	// A 135M model on two shared cores may take minutes over a review (a
	// truncated answer is split and asked again): the function's timeout
	// is raised as an operator would for a slow server; the heartbeat keeps
	// the message's visibility.
	setFunctionTimeout(t, "LlmFunctionName", devstack.ModelFunctionTimeout)
	cl := newChange(t, 12345)
	resp := postWebhook(t, map[string]any{"changelist_id": cl, "review_version": 1, "idempotency_key": uniqueKey(t),
		"recipients": []string{"reviewers@example.com"}, "source": "p4-trigger"})
	if resp.Status != http.StatusAccepted {
		t.Fatalf("POST status %d, body %s", resp.Status, resp.Body)
	}
	id := resp.Decoded["job_id"].(string)
	j := waitJob(t, id, 2*devstack.ModelFunctionTimeout, "finished", func(j *job.Job) bool { return j.State == job.Succeeded || j.State == job.Failed })
	llmRec := j.Stages[domain.StageLLM]
	if llmRec == nil {
		t.Fatalf("job %s has no llm stage record", id)
	}
	for _, e := range j.History {
		if strings.Contains(e.Detail, string(failure.Upstream5xx)) || strings.Contains(e.Detail, string(failure.InternalBug)) {
			t.Errorf("history names %s: %s", failure.Upstream5xx, e.Detail)
		}
	}
	if llmRec.LastErrorClass == failure.Upstream5xx || llmRec.LastErrorClass == failure.InternalBug {
		t.Fatalf("llm stage failed %s (%s): the server's refusal of json_schema was taken for a fault", llmRec.LastErrorClass, llmRec.LastError)
	}
	switch j.State {
	case job.Succeeded:
		if j.Review == nil || j.Review.ResponseFormat != llm.FormatJSONObjectSchema || j.Review.ModelCalls == 0 ||
			j.Review.InputTokens == 0 || j.Review.OutputTokens == 0 || j.Review.Model != devstack.LocalModel {
			t.Errorf("review stats %+v: want the model's calls, tokens and the form json_object_schema", j.Review)
		}
		if j.Review != nil && j.Review.FilesReviewed == 0 {
			t.Errorf("no file reviewed: %+v", j.Review)
		}
		// The author and the recipient list are e-mailed the review.
		waitMails(t, cl, 1, 2, 30*time.Second)
	case job.Failed:
		// The model's answer was unusable: stated once, not retried.
		if llmRec.LastErrorClass != failure.SchemaInvalid || llmRec.Attempts != 1 || llmRec.LastError == "" {
			hist, _ := json.MarshalIndent(j.History, "", "  ")
			t.Errorf("llm stage %s after %d attempts (%q), want SCHEMA_INVALID once, with the reason; history %s", llmRec.LastErrorClass, llmRec.Attempts, llmRec.LastError, hist)
		}
		t.Logf("the model's answer was unusable (a 135M model): %s", llmRec.LastError)
	}
}

// setFunctionTimeout sets the function's timeout for one test and restores it.
func setFunctionTimeout(t *testing.T, output string, d time.Duration) {
	t.Helper()
	ctx := context.Background()
	name := aws.String(env.out[output])
	update := func(secs int32) error {
		if _, err := env.lambda.UpdateFunctionConfiguration(ctx, &lambda.UpdateFunctionConfigurationInput{FunctionName: name, Timeout: aws.Int32(secs)}); err != nil {
			return err
		}
		deadline := time.Now().Add(60 * time.Second)
		for {
			c, err := env.lambda.GetFunctionConfiguration(ctx, &lambda.GetFunctionConfigurationInput{FunctionName: name})
			if err != nil {
				return err
			}
			if c.LastUpdateStatus != lambdatypes.LastUpdateStatusInProgress && aws.ToInt32(c.Timeout) == secs {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s timeout not updated after 60s", output)
			}
			time.Sleep(200 * time.Millisecond) // polling an API for a state change, not synchronising on time
		}
	}
	cur, err := env.lambda.GetFunctionConfiguration(ctx, &lambda.GetFunctionConfigurationInput{FunctionName: name})
	if err != nil {
		t.Fatal(err)
	}
	orig := aws.ToInt32(cur.Timeout)
	if err := update(int32(d.Seconds())); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := update(orig); err != nil {
			t.Errorf("restore the timeout of %s: %v", output, err)
		}
	})
}
