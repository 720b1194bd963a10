package swarm

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Outbound webhooks, as P4 Code Review 2025 and later sends them "when
// selected review activity occurs", with headers that "identify the event,
// verify the request signature, and deduplicate retries" (reference
// "Outbound webhooks"; help.perforce.com …/integrations.webhooks.html).
// *Unverified*: the header names, the signature (HMAC-SHA256 of the body,
// hex) and the payload ({"event", "review": {"id"}, "comment"}); they are
// the receiver's defaults (shared/swarmevents).
const (
	EventSignatureHeader = "X-Swarm-Signature"
	EventDeliveryHeader  = "X-Swarm-Delivery"
	EventHeader          = "X-Swarm-Event"
)

// The events sent: a comment changed, and the reference's "specialized event
// for replies to reviewer comments". The names are *unverified*.
const (
	EventCommentUpdated = "comment.updated"
	EventCommentReply   = "comment.reply"
)

// EventTarget is where the webhook posts, with the secret it signs with.
type EventTarget struct {
	URL    string
	Secret []byte
}

// EventAttempt is one POST of a delivery and its answer (Status 0: none;
// Body: the first KiB).
type EventAttempt struct {
	ID, Event string
	Status    int
	Body      string
}

type pendingEvent struct {
	id, event string
	review    int64
	body      []byte
}

// SetEventTarget turns the webhook on: each reaction queues a delivery.
func (s *Server) SetEventTarget(t EventTarget) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = &t
}

// queueEvent records a delivery of c after event; s.mu is held. Only a
// review's comments are delivered: the receiver reads review reactions
// (a comment on a change, topic "changes/<id>", is not modelled).
func (s *Server) queueEvent(event string, c Comment) {
	id, onReview := strings.CutPrefix(c.Topic, "reviews/")
	review, err := strconv.ParseInt(id, 10, 64)
	if s.events == nil || !onReview || err != nil {
		return
	}
	body, _ := json.Marshal(map[string]any{"event": event, "review": map[string]any{"id": review}, "comment": c.wire()})
	s.pending = append(s.pending, pendingEvent{id: deliveryID(), event: event, review: review, body: body})
}

// DeliverOptions say how DeliverEvents sends.
type DeliverOptions struct {
	SendTwice bool   // post each 2xx delivery again, same id: Swarm's retry after a lost answer
	Key       []byte // signs in place of the target's secret (a forged delivery)
	Review    int64  // only that review's deliveries; the others stay queued
}

// DeliverEvents posts the queued deliveries, oldest first. A delivery not
// answered 2xx stays queued for the next call, as a sender retries it.
func (s *Server) DeliverEvents(ctx context.Context, o DeliverOptions) []EventAttempt {
	s.mu.Lock()
	t, queued := s.events, s.pending
	s.pending = nil
	s.mu.Unlock()
	if t == nil {
		return nil
	}
	key := t.Secret
	if o.Key != nil {
		key = o.Key
	}
	var out []EventAttempt
	var kept []pendingEvent
	for _, e := range queued {
		if o.Review != 0 && e.review != o.Review {
			kept = append(kept, e)
			continue
		}
		a := s.post(ctx, t.URL, key, e)
		out = append(out, a)
		if a.Status/100 != 2 {
			kept = append(kept, e)
			continue
		}
		if o.SendTwice {
			out = append(out, s.post(ctx, t.URL, key, e))
		}
	}
	s.mu.Lock()
	s.pending = append(kept, s.pending...)
	s.mu.Unlock()
	return out
}

func (s *Server) post(ctx context.Context, url string, key []byte, e pendingEvent) EventAttempt {
	a := EventAttempt{ID: e.id, Event: e.event}
	m := hmac.New(sha256.New, key)
	m.Write(e.body)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(e.body))
	if err != nil {
		return a
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(EventHeader, e.event)
	req.Header.Set(EventDeliveryHeader, e.id)
	req.Header.Set(EventSignatureHeader, hex.EncodeToString(m.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.log.Warn("swarm stand-in: webhook delivery failed", "delivery", e.id, "err", err)
		return a
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	a.Status, a.Body = resp.StatusCode, string(b)
	return a
}

// deliveryID is unique across runs, as a receiver's deduplication outlives one.
func deliveryID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "swarm-" + hex.EncodeToString(b)
}
