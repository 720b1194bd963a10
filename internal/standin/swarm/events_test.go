package swarm

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/swarmevents"
)

// The stand-in's webhook: each reaction is one signed delivery, with an id
// the receiver can deduplicate by; SendTwice sends it again under the same
// id; a delivery not answered 2xx stays queued and is sent again later. The
// receiver's defaults (shared/swarmevents) read what it sends.
func TestEventsAreSignedDeliveriesWithRetries(t *testing.T) {
	secret := []byte("events-secret")
	scheme := swarmevents.HMAC{SignatureHeader: swarmevents.DefaultSignatureHeader, DeliveryHeader: swarmevents.DefaultDeliveryHeader, EventHeader: swarmevents.DefaultEventHeader}
	var mu sync.Mutex
	seen := map[string]int{}
	fail := true
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := scheme.Verify(r.Header.Get, body, [][]byte{secret}, time.Now()); err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		d, err := scheme.Parse(r.Header.Get, body)
		if err != nil || d.Comment == nil || d.Review != 9 {
			t.Errorf("parse: %+v %v", d, err)
		}
		mu.Lock()
		defer mu.Unlock()
		seen[d.ID]++
		if d.Event == EventCommentReply && fail {
			fail = false
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer recv.Close()

	s := NewServer(Options{})
	c := s.AddComment(Comment{Topic: reviewTopic(9), User: "criticizer", Body: "finding"})
	if err := s.Like(c.ID, "alice"); err != nil {
		t.Fatal(err)
	}
	if got := s.DeliverEvents(context.Background(), DeliverOptions{}); len(got) != 0 {
		t.Fatalf("no target set: %d deliveries, want none", len(got))
	}
	s.SetEventTarget(EventTarget{URL: recv.URL, Secret: secret})
	if err := s.Address(c.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reply(c.ID, "bob", "false positive", true); err != nil {
		t.Fatal(err)
	}
	if other := s.DeliverEvents(context.Background(), DeliverOptions{Review: 10}); len(other) != 0 || len(seen) != 0 {
		t.Fatalf("another review's deliveries: %+v, want none sent and review 9's left queued", other)
	}
	forged := s.DeliverEvents(context.Background(), DeliverOptions{Key: []byte("wrong"), Review: 9})
	if len(forged) != 2 || forged[0].Status != http.StatusUnauthorized || len(seen) != 0 {
		t.Fatalf("forged: %+v (seen %v), want both refused", forged, seen)
	}
	first := s.DeliverEvents(context.Background(), DeliverOptions{SendTwice: true})
	if len(first) != 3 || first[0].ID != first[1].ID || first[0].Event != EventCommentUpdated || first[2].Status != http.StatusServiceUnavailable {
		t.Fatalf("first delivery: %+v, want the update twice under one id and the reply refused", first)
	}
	again := s.DeliverEvents(context.Background(), DeliverOptions{})
	if len(again) != 1 || again[0].ID != first[2].ID || again[0].Status != http.StatusOK {
		t.Fatalf("retry: %+v, want the refused reply sent again under its id", again)
	}
	if len(seen) != 2 || seen[first[0].ID] != 2 || seen[first[2].ID] != 2 {
		t.Errorf("received %v", seen)
	}
}

// A reaction to a comment that is not on a review (a change's, or a topic
// too short to name one) queues no delivery and never takes the server down.
func TestReactionsOffAReviewQueueNothing(t *testing.T) {
	s := NewServer(Options{})
	s.SetEventTarget(EventTarget{URL: "http://127.0.0.1:1", Secret: []byte("k")})
	for _, topic := range []string{"changes/7", "r/1", ""} {
		c := s.AddComment(Comment{Topic: topic, User: "criticizer", Body: "finding"})
		if err := s.Like(c.ID, "alice"); err != nil {
			t.Fatalf("topic %q: %v", topic, err)
		}
		if _, err := s.Reply(c.ID, "bob", "thanks", false); err != nil {
			t.Fatalf("topic %q: %v", topic, err)
		}
	}
	if got := s.DeliverEvents(context.Background(), DeliverOptions{}); len(got) != 0 {
		t.Fatalf("%d deliveries for comments off a review, want none", len(got))
	}
}
