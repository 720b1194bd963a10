package webhook

import (
	"context"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/criticizer/criticizer/shared/swarmevents"
)

type nopClaims struct{}

func (nopClaims) Claim(context.Context, string) (bool, error) { return true, nil }
func (nopClaims) Release(context.Context, string) error       { return nil }

type noOutcomes struct{}

func (noOutcomes) Point(context.Context, int64) (bool, bool, error) {
	return false, false, nil
}

// POST /webhooks/swarm-events is off (404) unless the receiver is wired;
// wired, it is authenticated by the receiver's own secret, not the
// trigger's signature or Swarm's bearer token.
func TestSwarmEventsRoute(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	body := `{"review":{"id":4},"comment":{"id":1,"user":"alice"}}`
	key := []byte("events-secret")
	req := func(sig string) events.APIGatewayProxyRequest {
		return events.APIGatewayProxyRequest{HTTPMethod: "POST", Path: "/prod/webhooks/swarm-events", Body: body,
			Headers: map[string]string{"x-swarm-delivery": "d1", "x-swarm-signature": sig}}
	}
	good := hex.EncodeToString(swarmevents.Sign(key, []byte(body)))
	h := &Handler{Log: quiet}
	if resp, _ := h.Handle(context.Background(), req(good)); resp.StatusCode != http.StatusNotFound || !strings.Contains(resp.Body, "not_enabled") {
		t.Fatalf("off: %d %s, want 404 not_enabled", resp.StatusCode, resp.Body)
	}
	h.SwarmEvents = &swarmevents.Receiver{Scheme: swarmevents.HMAC{SignatureHeader: swarmevents.DefaultSignatureHeader,
		DeliveryHeader: swarmevents.DefaultDeliveryHeader, EventHeader: swarmevents.DefaultEventHeader},
		Keys:   func(context.Context, bool) ([][]byte, error) { return [][]byte{key}, nil },
		Claims: nopClaims{}, Outcomes: noOutcomes{}, Log: quiet}
	if resp, _ := h.Handle(context.Background(), req(good)); resp.StatusCode != http.StatusOK || !strings.Contains(resp.Body, `"result":"ignored"`) {
		t.Fatalf("signed: %d %s, want 200 ignored", resp.StatusCode, resp.Body)
	}
	if resp, _ := h.Handle(context.Background(), req(strings.Repeat("0", 64))); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Body, "invalid_signature") {
		t.Fatalf("forged: %d %s, want 401 invalid_signature", resp.StatusCode, resp.Body)
	}
}
