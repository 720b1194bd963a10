//go:build integration

package integration

import (
	"net/http"
	"slices"
	"testing"
	"time"
)

// BenchmarkWebhookToEmail measures the deployed pipeline's latency for one
// job at a time: from the signed webhook POST to the e-mail's arrival at the
// SMTP stand-in (its ReceivedAt, so the poll interval does not add to it).
// The LLM stand-in answers at once (no configured latency), so the figure is
// the pipeline's own share: webhook, three queue hops, fetch, redaction,
// review bookkeeping and notify, excluding the model. One op is ten jobs
// in sequence, so even a one-op run has a distribution; `make bench`
// reports its median and 95th percentile in milliseconds.
func BenchmarkWebhookToEmail(b *testing.B) {
	const perOp = 10
	var took []time.Duration
	for b.Loop() {
		for range perOp {
			took = append(took, webhookToEmail(b))
		}
	}
	slices.Sort(took)
	pct := func(p float64) float64 {
		return float64(took[int(p*float64(len(took)-1))]) / float64(time.Millisecond)
	}
	b.ReportMetric(pct(0.5), "p50-ms")
	b.ReportMetric(pct(0.95), "p95-ms")
}

// webhookToEmail posts one job and returns how long its e-mail took.
func webhookToEmail(b *testing.B) time.Duration {
	b.Helper()
	cl := newChange(b, 12345)
	start := time.Now()
	resp := postWebhook(b, map[string]any{"changelist_id": cl, "review_version": 1,
		"idempotency_key": uniqueKey(b), "recipients": []string{"reviewers@example.com"}, "source": "p4-trigger"})
	if resp.Status != http.StatusAccepted {
		b.Fatalf("POST status %d, body %s", resp.Status, resp.Body)
	}
	return firstMail(b, cl, untilSettled()).Sub(start)
}

// firstMail waits for the first e-mail about cl (version 1) and returns when
// the relay received it.
func firstMail(b *testing.B, cl int64, timeout time.Duration) time.Time {
	b.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if ms := mailsFor(cl, 1); len(ms) > 0 {
			return ms[0].ReceivedAt
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.Fatalf("no e-mail for CL %d after %s", cl, timeout)
	return time.Time{}
}
