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
func BenchmarkBurst(b *testing.B) {
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("BURST_CHANGELISTS")); err == nil && v > 0 {
		n = v
	}
	for b.Loop() {
		before := dlqDepth(b)
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
		deadline := time.Now().Add(time.Duration(n) * time.Second) // a job a second at worst
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
	}
}

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
