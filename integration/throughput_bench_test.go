//go:build integration

package integration

import (
	"net/http"
	"testing"
)

// BenchmarkEndToEnd measures the deployed pipeline's throughput on the
// emulator: one op is a batch of signed webhooks posted at once, waited for
// until every job succeeded (webhook → fetch → review → notify, each stage a
// function process the emulator's event source mappings invoke, e-mails to
// the SMTP stand-in). `make bench` reports it as jobs/s.
func BenchmarkEndToEnd(b *testing.B) {
	const batch = 10
	jobs := 0
	for b.Loop() {
		ids := make([]string, 0, batch)
		for range batch {
			resp := postWebhook(b, map[string]any{"changelist_id": newChange(b, 12345), "review_version": 1,
				"idempotency_key": uniqueKey(b), "recipients": []string{"reviewers@example.com"}, "source": "p4-trigger"})
			if resp.Status != http.StatusAccepted {
				b.Fatalf("POST status %d, body %s", resp.Status, resp.Body)
			}
			ids = append(ids, resp.Decoded["job_id"].(string))
		}
		for _, id := range ids {
			waitJob(b, id, untilSettled(), "succeeded", succeeded)
		}
		jobs += batch
	}
	b.ReportMetric(float64(jobs)/b.Elapsed().Seconds(), "jobs/s")
}
