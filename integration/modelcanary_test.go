//go:build integration

package integration

import (
	"context"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
)

// TestModelCanaryReviewsWithTheCandidate: with the model canary at 100 %
// (configuration only, as an operator sets it), the deployed llm function
// builds the candidate's client from the same provider settings and key,
// asks the provider for the candidate model, and the job records that
// model; at 0 % the same change goes to the stable model. Each review's
// e-mail states its estimated cost at the prices of the model that did it.
func TestModelCanaryReviewsWithTheCandidate(t *testing.T) {
	const candidate = "canary-candidate-model"
	cfg, err := env.lambda.GetFunctionConfiguration(context.Background(), &lambda.GetFunctionConfigurationInput{FunctionName: aws.String(env.out["LlmFunctionName"])})
	if err != nil {
		t.Fatal(err)
	}
	stable := cfg.Environment.Variables["LLM_MODEL"]
	if stable == "" || stable == candidate {
		t.Fatalf("the deployed llm function's LLM_MODEL is %q", stable)
	}
	for _, tt := range []struct{ percent, want string }{{"100", candidate}, {"0", stable}} {
		t.Run(tt.percent, func(t *testing.T) {
			// Every token at one price per model, so the estimate is (in + out) × price.
			price := map[string]float64{stable: 1, candidate: 1000}[tt.want]
			setReviewEnv(t, map[string]string{"LLM_MODEL_CANDIDATE": candidate, "LLM_MODEL_CANDIDATE_PERCENT": tt.percent,
				"LLM_PRICES_PER_MTOK": "input=1,cached_input=1,output=1", "LLM_MODEL_CANDIDATE_PRICES_PER_MTOK": "input=1000,cached_input=1000,output=1000"})
			cl := newChange(t, 12345)
			resp := postWebhook(t, map[string]any{"changelist_id": cl, "review_version": 1, "idempotency_key": uniqueKey(t),
				"recipients": []string{"reviewers@example.com"}, "source": "p4-trigger"})
			if resp.Status != http.StatusAccepted {
				t.Fatalf("POST status %d, body %s", resp.Status, resp.Body)
			}
			j := waitJob(t, resp.Decoded["job_id"].(string), 90*time.Second, "succeeded", succeeded)
			var asked []string
			for _, r := range env.llm.Requests() {
				if len(r.Messages) > 1 && strings.Contains(r.Messages[len(r.Messages)-1].Content, changeMarker(cl)) {
					asked = append(asked, r.Model)
				}
			}
			if len(asked) == 0 {
				t.Fatal("no request for this changelist reached the stand-in")
			}
			for _, m := range asked {
				if m != tt.want {
					t.Errorf("the provider was asked for %v, want %s", asked, tt.want)
					break
				}
			}
			if j.Review == nil || j.Review.Model != tt.want {
				t.Errorf("job review stats %+v, want model %s", j.Review, tt.want)
			}
			// One e-mail to the author, one to the reviewers: the same review.
			text := textPart(t, waitMails(t, cl, 1, 2, 30*time.Second)[0].Raw)
			m := regexp.MustCompile(`tokens (\d+) in, (\d+) out.*, est\. \$([0-9.]+) at list prices`).FindStringSubmatch(text)
			if m == nil {
				t.Fatalf("the e-mail states no estimated cost:\n%.1500s", text)
			}
			in, _ := strconv.Atoi(m[1])
			out, _ := strconv.Atoi(m[2])
			est, _ := strconv.ParseFloat(m[3], 64)
			if want := float64(in+out) * price / 1e6; in+out == 0 || math.Abs(est-want) > 0.0001 {
				t.Errorf("the e-mail estimates $%v for %d+%d tokens by %s, want $%.4f at its prices", est, in, out, tt.want, want)
			}
		})
	}
}
