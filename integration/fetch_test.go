//go:build integration

package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/domain"
)

// What the p4 server says decides the class of a fetch dead letter, and its
// text (sanitized) is the dead letter's reason: an unknown change is
// NOT_FOUND, a rejected password AUTH_DENIED, each without retries.
func TestFetchDeadLetterCarriesTheServersMessage(t *testing.T) {
	unknown := changeSeq.Add(1) // a number no fixture defines
	for _, tt := range []struct {
		name   string
		cl     int64
		class  string
		reason string
	}{
		{"unknown change", unknown, "NOT_FOUND", fmt.Sprintf("Change %d unknown.", unknown)},
		{"password rejected", newChange(t, 9003), "AUTH_DENIED", "Perforce password (P4PASSWD) invalid or unset."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := postWebhook(t, map[string]any{"changelist_id": tt.cl, "review_version": 1, "idempotency_key": uniqueKey(t)})
			id, _ := r.Decoded["job_id"].(string)
			if id == "" {
				t.Fatalf("webhook answered %d %s", r.Status, r.Body)
			}
			waitJob(t, id, 60*time.Second, "failed", failed)
			it := awaitDLQ(t, domain.StageFetch, forJob(id), 30*time.Second)
			dl := it.Env.DeadLetter
			if string(dl.ErrorClass) != tt.class || dl.Attempts != 1 || !strings.Contains(dl.Reason, tt.reason) {
				t.Fatalf("dead letter %+v, want %s after one attempt with reason %q", dl, tt.class, tt.reason)
			}
		})
	}
}
