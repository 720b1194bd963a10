package webhook

import (
	"testing"
	"time"
)

// The webhook's CPU path per request: signature check and body validation.
func BenchmarkVerifyAndParse(b *testing.B) {
	key := []byte("bench-key-0123456789")
	body := []byte(`{"changelist_id":12345,"review_version":3,"idempotency_key":"trigger-77-3","source":"p4-trigger","recipients":["a@example.com","b@example.com"]}`)
	now := time.Unix(1_800_000_000, 0)
	sig := Sign(key, now.Unix(), "POST", "/webhooks/changelist", body)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if err := Verify([][]byte{key, key}, "1800000000", sig, "POST", "/webhooks/changelist", body, now, 5*time.Minute); err != nil {
			b.Fatal(err)
		}
		r, err := Parse(body)
		if err != nil {
			b.Fatal(err)
		}
		_ = r.Hash()
	}
}
