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
	"time"
)

// Outbound webhooks, as P4 Code Review 2025 and later sends them to an
// external service "when selected review activity occurs", with headers
// that "identify the event, verify the request signature, and deduplicate
// retries" (reference "Outbound webhooks"; help.perforce.com
// …/integrations.webhooks.html). *Unverified*, as the reference says: the
// header names, the signature scheme (taken here as HMAC-SHA256 of the raw
// body, hex) and the payload's shape ({"event", "review": {"id"},
// "comment": the comment as the comments API shows it}). They are the
// receiver's defaults (shared/swarmevents), which a deployment can rename.
const (
	EventSignatureHeader = "X-Swarm-Signature"
	EventDeliveryHeader  = "X-Swarm-Delivery"
	EventHeader          = "X-Swarm-Event"
)

// The events the stand-in sends: a comment changed (liked, its task state
// moved, archived), and the "specialized event for replies to reviewer
// comments" the reference names. The names are *unverified*.
const (
	EventCommentUpdated = "comment.updated"
	EventCommentReply   = "comment.reply"
)

// EventTarget is where the stand-in's webhook posts, with the shared
// secret it signs with.
type EventTarget struct {
	URL    string
	Secret []byte
}

// EventAttempt is one POST of a delivery and the answer it got (Status
// 0: no answer; Body: its first KiB).
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

// SetEventTarget turns the webhook on: from now on each reaction (reactions.go)
// queues a delivery for DeliverEvents.
func (s *Server) SetEventTarget(t EventTarget) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = &t
}

// queueEvent records a delivery of c after event; s.mu is held.
func (s *Server) queueEvent(event string, c Comment) {
	if s.events == nil {
		return
	}
	review, _ := strconv.ParseInt(c.Topic[len("reviews/"):], 10, 64)
	body, _ := json.Marshal(map[string]any{"event": event, "review": map[string]any{"id": review}, "comment": c.wire()})
	s.pending = append(s.pending, pendingEvent{id: deliveryID(), event: event, review: review, body: body})
}

// DeliverOptions say how DeliverEvents sends: SendTwice posts every
// delivery that was answered 2xx once more, with the same delivery id, as
// a sender does whose answer was lost; Key signs in place of the target's
// secret (a forged delivery).
type DeliverOptions struct {
	SendTwice bool // Swarm's retry of a webhook; not the notify stage's redeliver
	Key       []byte
	// Review, when set, sends only that review's deliveries; the others
	// stay queued (tests share one stand-in, and each test's reactions are
	// its own).
	Review int64
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

// deliveryID is a fresh delivery id: unique across runs, as the
// deduplication a receiver keeps outlives one.
func deliveryID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "swarm-" + hex.EncodeToString(b)
}
