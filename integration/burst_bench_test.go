//go:build integration

package integration

import (
	"context"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/criticizer/criticizer/shared/job"
)

// BenchmarkBurst is a branch integration: BURST_CHANGELISTS (default 1,000)
// changelists submitted as fast as the webhook takes them, then waited for
// until every job has ended. It reports the time to drain, the jobs that
// failed and the messages that reached a dead-letter queue during the burst
// (the target is 0 of each), with the local stack's concurrency (2 messages
// in work per stage, cdk.json) and the LLM stand-in answering at once.
//
// With BURST_LLM_TPM set, the LLM stand-in enforces that many tokens a
// minute as a provider does (a token bucket of a minute's tokens, 429 with
// Retry-After; docs/reference/llm-providers.md, "Rate-limit headers") and
// the llm function shares the same limit across its concurrent reviews
// (LLM_TOKENS_PER_MINUTE, the per-minute budget item of rule PL-1). It then
// also reports the tokens the provider charged, the floor they set
// (the tokens beyond the bucket's first minute, at the limit's rate), the
// drain time over that floor and the 429s the provider answered.
func BenchmarkBurst(b *testing.B) {
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("BURST_CHANGELISTS")); err == nil && v > 0 {
		n = v
	}
	tpm, _ := strconv.Atoi(os.Getenv("BURST_LLM_TPM"))
	if tpm > 0 {
		setReviewEnv(b, map[string]string{"LLM_TOKENS_PER_MINUTE": strconv.Itoa(tpm)})
		env.local.LLM.SetLimits(tpm, 0, 0)
		b.Cleanup(func() { env.local.LLM.SetLimits(0, 0, 0) })
	}
	for b.Loop() {
		before := dlqDepth(b)
		llmBefore := len(env.local.LLM.Requests())
		start := time.Now()
		ids := make([]string, 0, n)
		for range n {
			resp := postWebhook(b, map[string]any{"changelist_id": newChange(b, 12345), "review_version": 1,
				"idempotency_key": uniqueKey(b), "recipients": []string{"reviewers@example.com"}, "source": "p4-trigger"})
			if resp.Status != http.StatusAccepted {
				b.Fatalf("POST status %d, body %s", resp.Status, resp.Body)
			}
			ids = append(ids, resp.Decoded["job_id"].(string))
		}
		submitted := time.Since(start)
		failedJobs := 0
		wait := time.Duration(n) * time.Second // a job a second at worst
		if tpm > 0 {
			wait += time.Duration(float64(n) * burstTokensPerChange / float64(tpm) * 2 * float64(time.Minute)) // twice the floor
		}
		deadline := time.Now().Add(wait)
		for _, id := range ids {
			j := waitJob(b, id, time.Until(deadline), "ended", func(j *job.Job) bool { return j.Terminal() })
			if j.State != job.Succeeded {
				failedJobs++
			}
		}
		drain := time.Since(start)
		b.ReportMetric(submitted.Seconds(), "submit-s")
		b.ReportMetric(drain.Seconds(), "drain-s")
		b.ReportMetric(float64(n)/drain.Seconds(), "jobs/s")
		b.ReportMetric(float64(failedJobs), "failed")
		b.ReportMetric(float64(dlqDepth(b)-before), "dead-letters")
		if tpm > 0 {
			charged, limited := 0, 0
			for _, r := range env.local.LLM.Requests()[llmBefore:] {
				charged += r.ChargedTokens
				if r.Status == http.StatusTooManyRequests {
					limited++
				}
			}
			floor := time.Duration(float64(max(charged-tpm, 0)) / float64(tpm) * float64(time.Minute))
			b.ReportMetric(float64(charged), "tokens")
			b.ReportMetric(floor.Seconds(), "floor-s")
			if floor > 0 {
				b.ReportMetric(drain.Seconds()/floor.Seconds(), "drain/floor")
			}
			b.ReportMetric(float64(limited), "429s")
		}
	}
}

// burstTokensPerChange bounds what the provider charges a burst changelist
// (its input and the output reserved), for the wait's deadline only.
const burstTokensPerChange = 20000

// dlqDepth is the messages in the three stage DLQs.
func dlqDepth(t testing.TB) int {
	t.Helper()
	total := 0
	for _, url := range stageURLs("DlqUrl") {
		out, err := env.sqs.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
			AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages}})
		if err != nil {
			t.Fatal(err)
		}
		v, _ := strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)])
		total += v
	}
	return total
}
